"""Time arithmetic of SQL windows (Flink's ``TimeWindowUtil`` and ``TimeWindow.getWindowStartWithOffset``).

Event time travels as record timestamps in epoch milliseconds. A rowtime of type ``TIMESTAMP`` is a wall-clock
value: its milliseconds are the naive datetime read as UTC, and windows are assigned on them directly. A rowtime of
type ``TIMESTAMP_LTZ`` is an instant: windows are assigned on its *local* milliseconds in the session time zone
(``table.local-time-zone``, Flink's "shift time zone"), so a one-day window starts at local midnight; its window
fires when the watermark reaches the instant of the window's last local millisecond. :class:`TimeShift` does these
conversions (identity for UTC); every window bound below is in local milliseconds.

    >>> shift = TimeShift("Asia/Kolkata")
    >>> shift.to_local(0), shift.to_epoch(19_800_000)
    (19800000, 0)
    >>> window_start_with_offset(7, 0, 5), window_start_with_offset(-3, 0, 5)
    (5, -5)
"""

from __future__ import annotations

import datetime
import zoneinfo
from typing import Any

__all__ = [
    "EPOCH",
    "LONG_MAX",
    "LONG_MIN",
    "TimeShift",
    "datetime_to_millis",
    "millis_to_datetime",
    "shift_time_zone",
    "window_start_with_offset",
]

LONG_MIN = -(1 << 63)
LONG_MAX = (1 << 63) - 1
EPOCH = datetime.datetime(1970, 1, 1)
_MS = datetime.timedelta(milliseconds=1)
_UTC_NAMES = frozenset({"UTC", "Z", "GMT", "Etc/UTC", "Etc/GMT", "+00:00", "UTC+00:00"})


def shift_time_zone(rowtime_type: str, local_time_zone: str | None) -> str | None:
    """The ``time_zone=`` the window factories take for a rowtime of type ``rowtime_type`` (a type string such as
    ``TIMESTAMP(3) *ROWTIME*`` or ``TIMESTAMP_LTZ(3) *ROWTIME*``): the session time zone for ``TIMESTAMP_LTZ``,
    ``None`` (no shift) for ``TIMESTAMP`` (Flink's ``TimeWindowUtil.getShiftTimeZone``).

    >>> shift_time_zone("TIMESTAMP_LTZ(3) *ROWTIME*", "Asia/Shanghai"), shift_time_zone("TIMESTAMP(3)", "Asia/Shanghai")
    ('Asia/Shanghai', None)
    """
    kind = rowtime_type.strip().upper()
    ltz = kind.startswith("TIMESTAMP_LTZ") or kind.startswith("TIMESTAMP WITH LOCAL TIME ZONE")
    return local_time_zone if ltz else None


def window_start_with_offset(timestamp: int, offset: int, size: int) -> int:
    """The start of the window of ``size`` (shifted by ``offset``) that contains ``timestamp`` (Flink's
    ``TimeWindow.getWindowStartWithOffset``, which rounds down for negative timestamps too)."""
    remainder = (timestamp - offset) % size  # Python's % is already non-negative for size > 0
    return timestamp - remainder


def millis_to_datetime(ms: int) -> datetime.datetime:
    """The naive datetime of ``ms`` milliseconds after 1970-01-01 00:00 (Flink's ``TimestampData.fromEpochMillis``)."""
    return EPOCH + datetime.timedelta(milliseconds=ms)


def datetime_to_millis(value: datetime.datetime) -> int:
    """The milliseconds of a naive datetime read as UTC (a ``TIMESTAMP``'s, or a ``TIMESTAMP_LTZ`` in UTC)."""
    if value.tzinfo is not None:
        value = value.astimezone(datetime.UTC).replace(tzinfo=None)
    return (value - EPOCH) // _MS


class TimeShift:
    """The session time zone windows of a ``TIMESTAMP_LTZ`` rowtime are assigned in; ``None``/UTC: no shift.

    ``to_local(epoch)`` is Flink's ``toUtcTimestampMills`` (the local wall clock of an instant, as milliseconds),
    ``to_epoch(local)`` its ``toEpochMills``/``toEpochMillsForTimer`` (the instant of a local wall-clock time; in a
    gap of a daylight-saving change the instant after it, in an overlap the earlier one, as Java's ``atZone``)."""

    __slots__ = ("_cache", "name", "utc", "zone")

    def __init__(self, time_zone: str | None = None) -> None:
        self.name = time_zone or "UTC"
        self.utc = self.name in _UTC_NAMES
        self.zone: datetime.tzinfo | None = None if self.utc else _zone(self.name)
        self._cache: dict[int, int] = {}

    def to_local(self, epoch_ms: int) -> int:
        zone = self.zone
        if zone is None:
            return epoch_ms
        instant = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC) + datetime.timedelta(milliseconds=epoch_ms)
        offset = zone.utcoffset(instant.astimezone(zone))
        return epoch_ms + (offset // _MS if offset is not None else 0)

    def to_epoch(self, local_ms: int) -> int:
        """The instant (epoch ms) whose local wall clock is ``local_ms``; ``LONG_MAX`` stays ``LONG_MAX``."""
        zone = self.zone
        if zone is None or local_ms >= LONG_MAX or local_ms <= LONG_MIN:
            return local_ms
        cached = self._cache.get(local_ms)
        if cached is not None:
            return cached
        wall = millis_to_datetime(local_ms).replace(tzinfo=zone)
        offset = wall.utcoffset()  # fold=0: before a gap's transition (so the instant after it), an overlap's first
        epoch = local_ms - (offset // _MS if offset is not None else 0)
        if len(self._cache) > 4096:
            self._cache.clear()
        self._cache[local_ms] = epoch
        return epoch

    def is_window_fired(self, window_end: int, watermark: int) -> bool:
        """Whether the window ending at local ``window_end`` fired at ``watermark`` (Flink's ``isWindowFired``)."""
        if window_end == LONG_MAX:
            return False
        return watermark >= self.to_epoch(window_end - 1)

    def __reduce__(self) -> tuple[Any, ...]:
        return (TimeShift, (None if self.utc else self.name,))

    def __repr__(self) -> str:
        return f"TimeShift({self.name!r})"


def _zone(name: str) -> datetime.tzinfo:
    if name[:1] in "+-" and ":" in name:  # a fixed offset such as +05:30
        sign = -1 if name[0] == "-" else 1
        hours, minutes = name[1:].split(":")
        return datetime.timezone(sign * datetime.timedelta(hours=int(hours), minutes=int(minutes)))
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError) as exc:
        raise ValueError(
            f"expected a time zone id for table.local-time-zone; got {name!r}; hint: 'UTC', 'Asia/Shanghai' or '+08:00'"
        ) from exc
