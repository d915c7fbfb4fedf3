"""``ConfigOption``: one option of strom's typed configuration (Flink's ``ConfigOption``) — its key, type, unit,
default and description, registered in :data:`REGISTRY` when declared — and how a raw value (a number, Flink's
duration and memory-size strings) becomes a typed one. The option classes live in :mod:`strom.config`."""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Generic, TypeVar

from strom.config_units import (
    MemorySize,
    format_duration,
    format_memory_size,
    parse_duration,
    parse_memory_size,
)
from strom.exceptions import ConfigurationError

__all__ = [
    "DEPRECATED_KEYS",
    "JVM_ONLY_PREFIXES",
    "LEGACY_SECONDS_MIN_MILLIS",
    "REGISTRY",
    "SPARK_PASSTHROUGH_PREFIX",
    "ConfigOption",
    "format_map",
]

T = TypeVar("T")

REGISTRY: dict[str, ConfigOption[Any]] = {}
#: an older key → the option it names (read as that option's key)
DEPRECATED_KEYS: dict[str, ConfigOption[Any]] = {}
#: unknown keys under this prefix are Spark's own settings, kept as strings for the SparkSession
SPARK_PASSTHROUGH_PREFIX = "spark."
#: keys of Flink's options that configure PyFlink's JVM side or the Python workers it starts: accepted (a PyFlink
#: program sets them) and ignored, as strom runs no JVM
JVM_ONLY_PREFIXES = ("python.", "pipeline.jars", "pipeline.classpaths", "env.java.", "table.")
_ABSENT: Any = object()
_log = logging.getLogger(__name__)


#: a bare number below this many milliseconds, for an option that took seconds until strom 0.1.0, is refused
#: as ambiguous (``heartbeat.timeout: 10`` was ten seconds; it would now be ten milliseconds)
LEGACY_SECONDS_MIN_MILLIS = 100
_DURATION_FORM = "a duration (a whole number of milliseconds or a string such as '50 s', '500 ms', '1 min')"
_MEMORY_FORM = "a memory size (a whole number of bytes or a string such as '32 kb', '64 mb', '1 gb')"


@dataclass(frozen=True, slots=True, kw_only=True)
class ConfigOption(Generic[T]):
    """One option. ``type`` is ``bool``, ``int``, ``float``, ``str``, ``timedelta`` (Flink's ``Duration``; a
    bare number is milliseconds) or :class:`MemorySize` (a bare number is bytes; values are ``int``)."""

    key: str
    type: type
    default: T
    description: str
    #: the unit of a plain ``int`` / ``float`` option's number, for the reference ("ms")
    unit: str = ""
    #: older keys read as this one (Flink's ``withDeprecatedKeys``)
    deprecated_keys: tuple[str, ...] = ()
    #: strom took seconds here until 0.1.0 (Flink takes milliseconds): old-looking bare numbers are refused
    legacy_seconds: bool = False

    def __post_init__(self) -> None:
        REGISTRY[self.key] = self
        for old in self.deprecated_keys:
            DEPRECATED_KEYS[old] = self

    def parse(self, raw: object) -> T:
        """Coerce ``raw`` (a value or its string form) into this option's type."""
        if self.type is timedelta:
            return self._parse_duration(raw)  # type: ignore[return-value]
        if self.type is MemorySize:
            return self._parse_memory_size(raw)  # type: ignore[return-value]
        if self.type is dict:
            return self._parse_map(raw)  # type: ignore[return-value]
        if self.type is bool and isinstance(raw, str):
            low = raw.strip().lower()
            if low in ("true", "1", "yes"):
                return True  # type: ignore[return-value]
            if low in ("false", "0", "no"):
                return False  # type: ignore[return-value]
        elif isinstance(raw, self.type) and not (self.type is int and isinstance(raw, bool)):
            return raw  # type: ignore[return-value]
        elif self.type in (int, float) and isinstance(raw, str | int | float) and not isinstance(raw, bool):
            try:
                return self.type(raw)  # type: ignore[no-any-return,return-value,unused-ignore]
            except ValueError:
                raise self._wrong_type(raw) from None
        raise self._wrong_type(raw)

    def _wrong_type(self, raw: object) -> ConfigurationError:
        return ConfigurationError(
            f"option '{self.key}' expects a {self.type.__name__}; got {raw!r}; hint: the default is {self.default!r}"
        )

    def _parse_map(self, raw: object) -> dict[str, str]:
        """A map option: a mapping, or Flink's string form ``key1:value1,key2:value2``."""
        if isinstance(raw, Mapping):
            return {str(k): str(v) for k, v in raw.items()}
        if isinstance(raw, str):
            entries = [e for e in raw.split(",") if e.strip()]
            if all(":" in e for e in entries):
                return {k.strip(): v.strip() for k, _, v in (e.partition(":") for e in entries)}
        raise ConfigurationError(
            f"option '{self.key}' expects a map; got {raw!r}; hint: write it as Flink does, 'key1:value1,key2:value2'"
        )

    def _parse_duration(self, raw: object) -> timedelta:
        if isinstance(raw, timedelta):
            return raw
        if isinstance(raw, int) and not isinstance(raw, bool):
            return self._bare_millis(raw, raw)  # a negative number is left to the option's consumer
        if isinstance(raw, str):
            try:
                value = parse_duration(raw)
            except ValueError as exc:
                raise self._duration_error(raw, f"{exc}") from None
            if raw.strip().isdigit():
                return self._bare_millis(int(raw.strip()), raw)
            return value
        raise self._duration_error(raw, "a duration is a whole number with an optional unit")

    def _bare_millis(self, number: int, raw: object) -> timedelta:
        if self.legacy_seconds and 0 < number < LEGACY_SECONDS_MIN_MILLIS:
            raise ConfigurationError(
                f"option '{self.key}' expects {_DURATION_FORM}; got {raw!r}, which is {number} ms; hint: strom "
                f"took seconds here until 0.1.0 and takes Flink's milliseconds now: write '{number} s' for "
                f"seconds, or '{number} ms' if you mean milliseconds"
            )
        return timedelta(milliseconds=number)

    def _duration_error(self, raw: object, why: str) -> ConfigurationError:
        hint = f"{why}; the default is '{format_duration(self.default)}'"  # type: ignore[arg-type]
        number = _decimal(raw)
        if number is not None and self.legacy_seconds:
            hint = (
                f"strom took seconds here until 0.1.0 and takes Flink's milliseconds now: {number:g} s is "
                f"{round(number * 1000)} or '{round(number * 1000)} ms'"
            )
        elif number is not None:
            hint = f"a duration is a whole number with an optional unit: {number:g} ms is '{round(number * 1000)} us'"
        return ConfigurationError(f"option '{self.key}' expects {_DURATION_FORM}; got {raw!r}; hint: {hint}")

    def _parse_memory_size(self, raw: object) -> int:
        why = "a memory size is a whole number with an optional unit (b, kb, mb, gb, tb)"
        if isinstance(raw, int) and not isinstance(raw, bool):
            return raw  # a negative number is left to the option's consumer
        if isinstance(raw, str):
            try:
                return parse_memory_size(raw)
            except ValueError as exc:
                why = str(exc)
        raise ConfigurationError(
            f"option '{self.key}' expects {_MEMORY_FORM}; got {raw!r}; hint: {why}; "
            f"the default is '{format_memory_size(self.default)}'"  # type: ignore[arg-type]
        )

    def format_default(self) -> str:
        """The default as the reference shows it: ``10 s``, ``32 kb``, ``'local'``."""
        if self.type is timedelta:
            return format_duration(self.default)  # type: ignore[arg-type]
        if self.type is MemorySize:
            return format_memory_size(self.default)  # type: ignore[arg-type]
        if self.type is dict:
            return repr(format_map(self.default))  # type: ignore[arg-type]
        return repr(self.default)

    def type_name(self) -> str:
        """The type and the unit of a bare number, as the reference shows them: ``Duration (ms)``, ``float (ms)``."""
        if self.type is timedelta:
            return "Duration (ms)"
        if self.type is MemorySize:
            return "MemorySize (bytes)"
        return f"{self.type.__name__} ({self.unit})" if self.unit else self.type.__name__


def _decimal(raw: object) -> float | None:
    """``raw`` as a number if it is a finite, non-negative ``float`` or a decimal string such as ``"0.25"``."""
    try:
        number = float(raw) if isinstance(raw, float | str) else None
    except ValueError:
        return None
    return number if number is not None and math.isfinite(number) and number >= 0 else None


def _opt(key: str, typ: type, default: Any, description: str, **kw: Any) -> ConfigOption[Any]:
    """An option; a ``timedelta`` or :class:`MemorySize` default may be written as Flink writes it (``"10 s"``)."""
    if isinstance(default, str) and typ is timedelta:
        default = parse_duration(default)
    elif isinstance(default, str) and typ is MemorySize:
        default = parse_memory_size(default)
    return ConfigOption(key=key, type=typ, default=default, description=description, **kw)


def format_map(value: Mapping[str, str]) -> str:
    """A map option's value in Flink's string form: ``key1:value1,key2:value2``."""
    return ",".join(f"{k}:{v}" for k, v in value.items())
