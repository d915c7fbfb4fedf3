"""Java ``DateTimeFormatter`` / ``SimpleDateFormat`` patterns (``yyyy-MM-dd HH:mm:ss.SSS``) for DATE_FORMAT,
TO_TIMESTAMP, TO_DATE, UNIX_TIMESTAMP and FROM_UNIXTIME: a pattern compiles once into a formatter and a parser.

Supported letters: ``y u M L d D H h k K m s S E a`` and ``'quoted text'``; other letters raise at bind time.
"""

from __future__ import annotations

import datetime
import functools
import re
from collections.abc import Callable

from strom.table.errors import ValidationException

__all__ = ["java_formatter", "java_parser"]

_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December"]  # fmt: skip
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
_TOKENS = re.compile(r"'([^']*)'|([A-Za-z])\2*|.", re.DOTALL)


def _tokens(pattern: str) -> list[tuple[str, int, str]]:
    """``(letter, count, literal)`` per token (letter '' for literal text)."""
    out: list[tuple[str, int, str]] = []
    for m in _TOKENS.finditer(pattern):
        if m.group(1) is not None:
            out.append(("", 0, m.group(1) or "'"))
        elif m.group(2):
            out.append((m.group(2), len(m.group(0)), ""))
        else:
            out.append(("", 0, m.group(0)))
    return out


def _field(letter: str, count: int, v: datetime.datetime) -> str:
    if letter in "yu":
        return f"{v.year % 100:02d}" if count == 2 else f"{v.year:0{count}d}"
    if letter in "ML":
        if count >= 4:
            return _MONTHS[v.month - 1]
        return _MONTHS[v.month - 1][:3] if count == 3 else f"{v.month:0{count}d}"
    if letter == "d":
        return f"{v.day:0{count}d}"
    if letter == "D":
        return f"{v.timetuple().tm_yday:0{count}d}"
    if letter == "H":
        return f"{v.hour:0{count}d}"
    if letter == "k":
        return f"{v.hour or 24:0{count}d}"
    if letter == "h":
        return f"{(v.hour % 12) or 12:0{count}d}"
    if letter == "K":
        return f"{v.hour % 12:0{count}d}"
    if letter == "m":
        return f"{v.minute:0{count}d}"
    if letter == "s":
        return f"{v.second:0{count}d}"
    if letter == "S":
        return f"{v.microsecond:06d}000"[:count].ljust(count, "0")
    if letter == "E":
        name = _DAYS[v.weekday()]
        return name if count >= 4 else name[:3]
    if letter == "a":
        return "AM" if v.hour < 12 else "PM"
    raise ValidationException(f"DATE_FORMAT: expected a pattern of the letters yMdDHhkKmsSEa; got {letter!r}")


@functools.lru_cache(maxsize=128)
def java_formatter(pattern: str) -> Callable[[datetime.datetime], str]:
    """A formatter of naive datetimes by the Java *pattern*."""
    tokens = _tokens(pattern)
    probe = datetime.datetime(2000, 1, 1)
    for letter, count, _ in tokens:
        if letter:
            _field(letter, count, probe)

    def fmt(v: datetime.datetime) -> str:
        return "".join(_field(letter, count, v) if letter else text for letter, count, text in tokens)

    return fmt


_PARSE_GROUPS = {"y": "year", "u": "year", "M": "month", "d": "day", "H": "hour", "k": "hour", "h": "hour12",
                 "m": "minute", "s": "second", "S": "fraction", "a": "ampm", "D": "yday"}  # fmt: skip


@functools.lru_cache(maxsize=128)
def java_parser(pattern: str) -> Callable[[str], datetime.datetime | None]:
    """A parser of strings by the Java *pattern*; returns ``None`` when the text does not match (Flink's NULL)."""
    parts: list[str] = []
    for letter, count, text in _tokens(pattern):
        if not letter:
            parts.append(re.escape(text))
        elif letter in _PARSE_GROUPS:
            name = _PARSE_GROUPS[letter]
            width = (
                r"\d{1,9}" if letter == "S" else r"[AaPp][Mm]" if letter == "a" else rf"\d{{{count},{max(count, 4)}}}"
            )
            if letter in "ML" and count >= 3:
                width = r"[A-Za-z]+"
            parts.append(f"(?P<{name}>{width})")
        elif letter == "E":
            parts.append(r"[A-Za-z]+")
        else:
            raise ValidationException(f"TO_TIMESTAMP: expected a pattern of the letters yMdHhmsSa; got {letter!r}")
    regex = re.compile("".join(parts))

    def parse(text: str) -> datetime.datetime | None:
        m = regex.fullmatch(text.strip())
        if m is None:
            return None
        g = m.groupdict()
        try:
            month = g.get("month")
            month_no = 1 if month is None else int(month) if month.isdigit() else _month_number(month)
            hour = int(g.get("hour") or 0)
            if g.get("hour12") is not None:
                hour = int(g["hour12"]) % 12 + (12 if (g.get("ampm") or "").upper() == "PM" else 0)
            frac = g.get("fraction") or ""
            value = datetime.datetime(
                int(g.get("year") or 1970),
                month_no,
                int(g.get("day") or 1),
                hour,
                int(g.get("minute") or 0),
                int(g.get("second") or 0),
                int(frac[:6].ljust(6, "0")) if frac else 0,
            )
        except ValueError:
            return None
        return value

    return parse


def _month_number(name: str) -> int:
    for i, month in enumerate(_MONTHS):
        if month.lower().startswith(name.lower()[:3]):
            return i + 1
    raise ValueError(name)
