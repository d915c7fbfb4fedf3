"""Duration and memory-size values of configuration options, in Flink's notation.

A duration (Flink's ``TimeUtils.parseDuration``) is a whole number with an optional unit; without one it is
milliseconds. A memory size (Flink's ``MemorySize.parse``) is a whole number with an optional unit; without
one it is bytes. Units are case-insensitive and may follow the number with or without a space:

    >>> parse_duration("10 s"), parse_duration("500"), parse_duration("1min")
    (datetime.timedelta(seconds=10), datetime.timedelta(microseconds=500000), datetime.timedelta(seconds=60))
    >>> parse_memory_size("32 kb"), parse_memory_size("64MB"), parse_memory_size("4096")
    (32768, 67108864, 4096)
    >>> format_duration(timedelta(minutes=1)), format_memory_size(32 * 1024)
    ('1 min', '32 kb')
"""

from __future__ import annotations

from datetime import timedelta

__all__ = [
    "DURATION_UNITS",
    "MEMORY_UNITS",
    "MemorySize",
    "format_duration",
    "format_memory_size",
    "millis",
    "parse_duration",
    "parse_memory_size",
]

_NS, _US, _MS, _S = 1, 1_000, 1_000_000, 1_000_000_000
_MIN, _H, _D = 60 * _S, 3600 * _S, 86_400 * _S

#: unit label → nanoseconds; Flink's labels (each also with a plural ``s`` where Flink has one), plus ``us``
_DURATION_LABELS: dict[str, int] = {
    **dict.fromkeys(("d", "day", "days"), _D),
    **dict.fromkeys(("h", "hour", "hours"), _H),
    **dict.fromkeys(("m", "min", "minute", "minutes"), _MIN),
    **dict.fromkeys(("s", "sec", "secs", "second", "seconds"), _S),
    **dict.fromkeys(("ms", "milli", "millis", "millisecond", "milliseconds"), _MS),
    **dict.fromkeys(("µs", "us", "micro", "micros", "microsecond", "microseconds"), _US),
    **dict.fromkeys(("ns", "nano", "nanos", "nanosecond", "nanoseconds"), _NS),
}
#: the short label of each unit, largest first (what :func:`format_duration` writes)
DURATION_UNITS: tuple[tuple[str, int], ...] = (("d", _D), ("h", _H), ("min", _MIN), ("s", _S), ("ms", _MS), ("us", _US))

_KB = 1024
_MEMORY_LABELS: dict[str, int] = {
    **dict.fromkeys(("b", "bytes"), 1),
    **dict.fromkeys(("k", "kb", "kibibytes"), _KB),
    **dict.fromkeys(("m", "mb", "mebibytes"), _KB**2),
    **dict.fromkeys(("g", "gb", "gibibytes"), _KB**3),
    **dict.fromkeys(("t", "tb", "tebibytes"), _KB**4),
}
MEMORY_UNITS: tuple[tuple[str, int], ...] = (("tb", _KB**4), ("gb", _KB**3), ("mb", _KB**2), ("kb", _KB), ("b", 1))


class MemorySize:
    """The type of a memory-size option (Flink's ``MemorySize``); its values are ``int`` bytes.

    ``ConfigOption(key=..., type=MemorySize, default=parse_memory_size("32 kb"), ...)``."""

    __slots__ = ()


def _split(text: str) -> tuple[int, str]:
    """The leading digits of ``text`` as an int and the rest as a lower-case unit label."""
    trimmed = text.strip()
    pos = 0
    while pos < len(trimmed) and "0" <= trimmed[pos] <= "9":
        pos += 1
    if pos == 0:
        raise ValueError("it does not start with a whole number")
    return int(trimmed[:pos]), trimmed[pos:].strip().lower()


def parse_duration(text: str) -> timedelta:
    """``"10 s"`` → ``timedelta(seconds=10)``; a number without a unit is milliseconds. ``ValueError`` on others."""
    value, label = _split(text)
    if not label:
        label = "ms"
    nanos = _DURATION_LABELS.get(label)
    if nanos is None:
        raise ValueError(f"'{label}' is not a time unit (ns, us, ms, s, min, h, d)")
    try:
        if nanos < _US:  # timedelta holds whole microseconds: nanoseconds are rounded
            return timedelta(microseconds=value / (_US // nanos))
        return timedelta(microseconds=value * (nanos // _US))
    except OverflowError:
        raise ValueError("it is longer than a timedelta can hold") from None


def parse_memory_size(text: str) -> int:
    """``"32 kb"`` → ``32768`` bytes; a number without a unit is bytes. ``ValueError`` on others."""
    value, label = _split(text)
    multiplier = _MEMORY_LABELS.get(label or "b")
    if multiplier is None:
        raise ValueError(f"'{label}' is not a memory unit (b, kb, mb, gb, tb)")
    return value * multiplier


def format_duration(duration: timedelta) -> str:
    """The largest unit that loses no precision, as Flink's ``TimeUtils.formatWithHighestUnit``: ``'1 min'``."""
    micros = duration // timedelta(microseconds=1)
    if micros == 0:
        return "0 ms"
    for label, nanos in DURATION_UNITS:
        if micros % (nanos // _US) == 0:
            return f"{micros // (nanos // _US)} {label}"
    raise AssertionError("unreachable: every timedelta is whole microseconds")


def format_memory_size(size: int) -> str:
    """The largest unit that loses no precision: ``'32 kb'``, ``'256 mb'``, ``'0 b'``."""
    for label, multiplier in MEMORY_UNITS:
        if size and size % multiplier == 0:
            return f"{size // multiplier} {label}"
    return f"{size} b"


def millis(duration: timedelta) -> int:
    """Whole milliseconds of ``duration`` (Java's ``Duration.toMillis()``, floored)."""
    return duration // timedelta(milliseconds=1)
