"""Time arithmetic shared by the windowing modules: Java's ``long`` semantics and duration arguments."""

from __future__ import annotations

from datetime import timedelta

from strom.exceptions import InvalidProgramError

__all__ = ["LONG_MAX", "LONG_MIN", "java_rem", "to_millis"]

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
