"""``OutputFileConfig``: the names of part files (Flink's ``OutputFileConfig``).

    config = OutputFileConfig.builder().with_part_prefix("events").with_part_suffix(".jsonl").build()
    config = OutputFileConfig(part_prefix="events", part_suffix=".jsonl")  # the same

A committed part is ``<part_prefix>-<writer id>-<n><part_suffix>`` in its bucket's directory; while it is
written and until its checkpoint completes it is the hidden ``.<that name>.inprogress`` beside it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace

from strom.exceptions import InvalidProgramError

__all__ = ["OutputFileConfig", "OutputFileConfigBuilder"]


@dataclass(frozen=True, slots=True, kw_only=True)
class OutputFileConfig:
    """Part file names: ``<part_prefix>-<writer id>-<n><part_suffix>``."""

    part_prefix: str = "part"
    part_suffix: str = ""

    def __post_init__(self) -> None:
        for what, value in (("part_prefix", self.part_prefix), ("part_suffix", self.part_suffix)):
            if not isinstance(value, str) or "/" in value or os.sep in value:
                raise InvalidProgramError(
                    f"OutputFileConfig.{what} must be a str without path separators; got {value!r}; "
                    "hint: put directories into the FileSink's base path"
                )
        if not self.part_prefix:
            raise InvalidProgramError("OutputFileConfig.part_prefix must not be empty; got ''; hint: 'part'")

    @staticmethod
    def builder() -> OutputFileConfigBuilder:
        """Flink's ``OutputFileConfig.builder()``."""
        return OutputFileConfigBuilder()

    def get_part_prefix(self) -> str:
        return self.part_prefix

    def get_part_suffix(self) -> str:
        return self.part_suffix


@dataclass(frozen=True, slots=True)
class OutputFileConfigBuilder:
    """Each ``with_*`` returns a new builder; ``build()`` checks the names."""

    _config: OutputFileConfig = OutputFileConfig()

    def with_part_prefix(self, prefix: str) -> OutputFileConfigBuilder:
        return OutputFileConfigBuilder(replace(self._config, part_prefix=prefix))

    def with_part_suffix(self, suffix: str) -> OutputFileConfigBuilder:
        return OutputFileConfigBuilder(replace(self._config, part_suffix=suffix))

    def build(self) -> OutputFileConfig:
        return self._config
