"""PyFlink's ``TableConfig``: the options of a ``TableEnvironment`` (``parallelism.default``, ``table.*``)."""

from __future__ import annotations

from typing import Any

__all__ = ["TableConfig"]


class TableConfig:
    def __init__(self, options: dict[str, str] | None = None) -> None:
        self._options: dict[str, str] = dict(options or {})

    def set(self, key: str, value: str) -> TableConfig:
        self._options[key] = str(value)
        return self

    def get(self, key: str, default_value: Any = None) -> Any:
        return self._options.get(key, default_value)

    def get_configuration(self) -> TableConfig:
        return self

    def set_string(self, key: str, value: str) -> TableConfig:
        return self.set(key, value)

    def get_string(self, key: str, default_value: str) -> str:
        return str(self._options.get(key, default_value))

    def set_local_timezone(self, timezone_id: str) -> None:
        self._options["table.local-time-zone"] = timezone_id

    def get_local_timezone(self) -> str:
        return self._options.get("table.local-time-zone", "default")

    def to_dict(self) -> dict[str, str]:
        return dict(self._options)

    def parallelism(self) -> int | None:
        value = self._options.get("parallelism.default")
        return int(value) if value is not None else None
