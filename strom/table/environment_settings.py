"""PyFlink's ``EnvironmentSettings``: STREAMING or BATCH mode of a ``TableEnvironment``."""

from __future__ import annotations

from typing import Any

__all__ = ["EnvironmentSettings"]


class EnvironmentSettings:
    """``EnvironmentSettings.in_streaming_mode()`` / ``in_batch_mode()`` or the builder form."""

    class Builder:
        def __init__(self) -> None:
            self._streaming = True
            self._config: dict[str, str] = {}

        def in_streaming_mode(self) -> EnvironmentSettings.Builder:
            self._streaming = True
            return self

        def in_batch_mode(self) -> EnvironmentSettings.Builder:
            self._streaming = False
            return self

        def with_configuration(self, config: Any) -> EnvironmentSettings.Builder:
            self._config.update(_as_dict(config))
            return self

        def with_built_in_catalog_name(self, name: str) -> EnvironmentSettings.Builder:
            return self

        def with_built_in_database_name(self, name: str) -> EnvironmentSettings.Builder:
            return self

        def build(self) -> EnvironmentSettings:
            return EnvironmentSettings(self._streaming, self._config)

    def __init__(self, streaming: bool = True, config: dict[str, str] | None = None) -> None:
        self._streaming = streaming
        self._config = dict(config or {})

    @staticmethod
    def new_instance() -> EnvironmentSettings.Builder:
        return EnvironmentSettings.Builder()

    @staticmethod
    def in_streaming_mode() -> EnvironmentSettings:
        return EnvironmentSettings(True)

    @staticmethod
    def in_batch_mode() -> EnvironmentSettings:
        return EnvironmentSettings(False)

    def is_streaming_mode(self) -> bool:
        return self._streaming

    def get_configuration(self) -> dict[str, str]:
        return dict(self._config)


def _as_dict(config: Any) -> dict[str, str]:
    if isinstance(config, dict):
        return {str(k): str(v) for k, v in config.items()}
    to_dict = getattr(config, "to_dict", None)
    if callable(to_dict):
        return {str(k): str(v) for k, v in to_dict().items()}
    return {}
