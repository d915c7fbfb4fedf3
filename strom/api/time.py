"""PyFlink's ``Time`` and ``Duration`` (``pyflink.common.time``): durations as ``datetime.timedelta``\\ s.

Both are ``timedelta`` subclasses, so they are accepted wherever strom takes a duration (window sizes, lateness,
out-of-orderness, idleness, checkpoint intervals, state TTL), and ``to_milliseconds()`` gives Flink's long.

    >>> Time.seconds(5) == timedelta(seconds=5), Duration.of_millis(1500).to_milliseconds()
    (True, 1500)
"""

from __future__ import annotations

from datetime import timedelta

__all__ = ["Duration", "Instant", "Time"]


def _checked(value: object, unit: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"expected an int number of {unit}; got {value!r} ({type(value).__name__})")
    return value


class _FactoryOrField:
    """``Time.seconds(5)`` builds a ``Time``; ``t.seconds`` stays ``timedelta``'s field (PyFlink's factory names
    clash with ``timedelta.seconds`` and ``timedelta.days``)."""

    def __init__(self, unit: str) -> None:
        self.unit = unit
        self.field = getattr(timedelta, unit)

    def __get__(self, obj: object, cls: type | None = None) -> object:
        if obj is not None:
            return self.field.__get__(obj, cls)
        unit = self.unit
        assert cls is not None

        def factory(value: int) -> object:
            return cls(**{unit: _checked(value, unit)})

        return factory


class _Millis(timedelta):
    def to_milliseconds(self) -> int:
        """Whole milliseconds, truncated toward zero (Java's ``toMillis()``)."""
        micros = (self.days * 86_400 + self.seconds) * 1_000_000 + self.microseconds
        millis = abs(micros) // 1000
        return -millis if micros < 0 else millis


class Time(_Millis):
    """Flink's ``Time`` (deprecated in Flink in favour of ``Duration``, still used by PyFlink programs)."""

    @classmethod
    def milliseconds(cls, milliseconds: int) -> Time:
        return cls(milliseconds=_checked(milliseconds, "milliseconds"))

    seconds = _FactoryOrField("seconds")  # type: ignore[assignment]  # Time.seconds(5); t.seconds stays the field

    @classmethod
    def minutes(cls, minutes: int) -> Time:
        return cls(minutes=_checked(minutes, "minutes"))

    @classmethod
    def hours(cls, hours: int) -> Time:
        return cls(hours=_checked(hours, "hours"))

    days = _FactoryOrField("days")  # type: ignore[assignment]  # Time.days(1); t.days stays the field

    def __repr__(self) -> str:
        return f"Time.milliseconds({self.to_milliseconds()})"


class Duration(_Millis):
    """Java's ``Duration`` as PyFlink offers it."""

    @classmethod
    def of_millis(cls, millis: int) -> Duration:
        return cls(milliseconds=_checked(millis, "milliseconds"))

    @classmethod
    def of_seconds(cls, seconds: int) -> Duration:
        return cls(seconds=_checked(seconds, "seconds"))

    @classmethod
    def of_minutes(cls, minutes: int) -> Duration:
        return cls(minutes=_checked(minutes, "minutes"))

    @classmethod
    def of_hours(cls, hours: int) -> Duration:
        return cls(hours=_checked(hours, "hours"))

    @classmethod
    def of_days(cls, days: int) -> Duration:
        return cls(days=_checked(days, "days"))

    @classmethod
    def of_nanos(cls, nanos: int) -> Duration:
        return cls(microseconds=_checked(nanos, "nanoseconds") / 1000)

    def __repr__(self) -> str:
        return f"Duration.of_millis({self.to_milliseconds()})"


class Instant:
    """PyFlink's ``Instant``: a point on the time-line, in seconds and nanoseconds since the epoch (Java's
    ``java.time.Instant``). strom's timestamps are ints of epoch milliseconds; this converts.

        >>> Instant.of_epoch_milli(1_500).to_epoch_milli()
        1500
        >>> Instant.of_epoch_milli(-1)
        Instant<-1, 999000000>
    """

    __slots__ = ("nanos", "seconds")

    def __init__(self, seconds: int, nanos: int) -> None:
        self.seconds = seconds
        self.nanos = nanos

    @staticmethod
    def of_epoch_milli(epoch_milli: int) -> Instant:
        seconds, millis = divmod(epoch_milli, 1000)  # floored, as Java's Math.floorDiv / floorMod
        return Instant(seconds, millis * 1_000_000)

    def to_epoch_milli(self) -> int:
        return self.seconds * 1000 + self.nanos // 1_000_000

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Instant) and (self.seconds, self.nanos) == (other.seconds, other.nanos)

    def __lt__(self, other: Instant) -> bool:
        return (self.seconds, self.nanos) < (other.seconds, other.nanos)

    def __hash__(self) -> int:
        return hash((self.seconds, self.nanos))

    def __repr__(self) -> str:
        return f"Instant<{self.seconds}, {self.nanos}>"
