"""Time arithmetic shared by the windowing modules: Java's ``long`` semantics and duration arguments."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from strom.config import ConfigOption
from strom.exceptions import ConfigurationError, InvalidProgramError

__all__ = ["LONG_MAX", "LONG_MIN", "duration_argument", "java_rem", "to_millis"]

LONG_MIN = -(2**63)
"""Java's ``Long.MIN_VALUE``: Flink's marker for "this record has no timestamp"."""

LONG_MAX = 2**63 - 1
"""Java's ``Long.MAX_VALUE``: the max timestamp of the :class:`GlobalWindow`."""


def java_rem(dividend: int, divisor: int) -> int:
    """Java's ``dividend % divisor``: the remainder takes the sign of the dividend (Python's takes the divisor's).

    >>> java_rem(-7, 5), -7 % 5
    (-2, 3)
    """
    remainder = abs(dividend) % abs(divisor)
    return -remainder if dividend < 0 else remainder


def to_millis(value: object, what: str) -> int:
    """An ``int`` of milliseconds as is; a ``timedelta`` truncated toward zero like Java's ``Duration.toMillis()``.

    >>> to_millis(timedelta(seconds=-1, microseconds=500), "size")
    -999
    """
    if isinstance(value, bool) or not isinstance(value, int | timedelta):
        raise InvalidProgramError(
            f"{what} expected an int of milliseconds or a datetime.timedelta; got a {type(value).__name__!r} "
            f"({value!r:.40}); hint: timedelta(seconds=5) and 5000 are the same duration"
        )
    if isinstance(value, int):
        return value
    micros = (value.days * 86_400 + value.seconds) * 1_000_000 + value.microseconds
    millis = abs(micros) // 1000
    return -millis if micros < 0 else millis


def duration_argument(option: ConfigOption[Any], value: object, what: str) -> timedelta:
    """A setter's duration argument: an int of milliseconds, a ``timedelta`` or a string such as ``"10 s"``."""
    if isinstance(value, bool) or not isinstance(value, int | timedelta | str):
        raise InvalidProgramError(
            f"expected {what} as an int of milliseconds, a datetime.timedelta or a string such as '10 s'; "
            f"got {value!r}; hint: 1000, timedelta(seconds=1) and '1 s' are the same duration"
        )
    try:
        result: timedelta = option.parse(value)
    except ConfigurationError as exc:
        raise InvalidProgramError(str(exc)) from None
    return result
