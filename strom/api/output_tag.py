"""``OutputTag``: names a side output of an operator (Flink's ``OutputTag``).

A process function emits to a side output with ``ctx.output(tag, value)`` or, PyFlink's form, by yielding
``(tag, value)``; a window operator sends late records there with ``side_output_late_data(tag)``;
``stream.get_side_output(tag)`` is the stream of those records. Two tags are the same side output when their ids
are equal.

    >>> late = OutputTag("late-data")
    >>> late == OutputTag("late-data"), late
    (True, OutputTag('late-data'))
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from strom.exceptions import InvalidProgramError

__all__ = ["OutputTag", "output_tags_created"]

_created = 0


def output_tags_created() -> bool:
    """Whether this process has made an :class:`OutputTag` (so a program may ``yield (tag, value)``): a job built
    without one skips looking for tagged results in its process functions' output."""
    return _created > 0


@dataclass(frozen=True, slots=True)
class OutputTag:
    tag_id: str
    #: accepted for PyFlink compatibility (``OutputTag("late", Types.STRING())``); strom records are Python objects
    type_info: Any = field(default=None, compare=False)

    def __post_init__(self) -> None:
        global _created
        _created += 1
        if not isinstance(self.tag_id, str) or not self.tag_id:
            raise InvalidProgramError(
                f"expected an OutputTag id that is a non-empty string; got {self.tag_id!r}; "
                'hint: OutputTag("late-data")'
            )

    def __repr__(self) -> str:
        return f"OutputTag({self.tag_id!r})"
