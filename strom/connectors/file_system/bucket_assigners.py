"""Bucket assigners: the sub-directory of the base path a record's part file goes to (Flink's ``BucketAssigner``).

    BucketAssigner.date_time_bucket_assigner("yyyy-MM-dd--HH", "UTC")  # <base>/2024-05-01--13/ (processing time)
    BucketAssigner.base_path_bucket_assigner()                        # <base>/ itself
    BucketAssigner.field_bucket_assigner("country")                   # <base>/<record's country>/

or a subclass with ``get_bucket_id(element, context) -> str``. A bucket id is a relative path ("" is the base
path; "a/b" nests); ``..``, absolute ids and empty components are errors naming the record. The date-time
assigner takes Flink's (Java ``DateTimeFormatter``) pattern, translated once to ``strftime``, and formats the
processing time in ``timezone_id`` (the system zone when ``None``), as Flink's ``DateTimeBucketAssigner``.
"""

from __future__ import annotations

import reprlib
import time
import zoneinfo
from abc import ABC, abstractmethod
from collections.abc import Callable
from datetime import datetime, tzinfo
from typing import Any

from strom.api.row import Row
from strom.exceptions import ConnectorError, InvalidProgramError

__all__ = [
    "BasePathBucketAssigner",
    "BucketAssigner",
    "BucketAssignerContext",
    "DateTimeBucketAssigner",
    "FieldBucketAssigner",
    "JavaDatePattern",
]


class BucketAssignerContext:
    """What an assigner may know besides the record (Flink's ``BucketAssigner.Context``)."""

    __slots__ = ("_clock",)

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock  # seconds since the epoch

    def current_processing_time(self) -> int:
        """Wall-clock milliseconds since the epoch."""
        return int(self._clock() * 1000)

    def current_watermark(self) -> int | None:
        """Not known to a sink writer in strom (``None``)."""
        return None

    def timestamp(self) -> int | None:
        """The record's timestamp: not handed to sink writers in strom (``None``)."""
        return None


class BucketAssigner(ABC):
    """Assigns each record a bucket id: the relative directory of its part file under the base path."""

    @abstractmethod
    def get_bucket_id(self, element: Any, context: BucketAssignerContext) -> str: ...

    def get_bucket_ids(self, elements: list[Any], context: BucketAssignerContext) -> list[str]:
        """The ids of a whole batch; override for speed."""
        get = self.get_bucket_id
        return [get(e, context) for e in elements]

    @staticmethod
    def base_path_bucket_assigner() -> BasePathBucketAssigner:
        return BasePathBucketAssigner()

    @staticmethod
    def date_time_bucket_assigner(
        format_str: str = "yyyy-MM-dd--HH", timezone_id: str | None = None
    ) -> DateTimeBucketAssigner:
        return DateTimeBucketAssigner(format_str, timezone_id)

    @staticmethod
    def field_bucket_assigner(field: str | int) -> FieldBucketAssigner:
        return FieldBucketAssigner(field)


class BasePathBucketAssigner(BucketAssigner):
    """Every record into the base path itself."""

    def get_bucket_id(self, element: Any, context: BucketAssignerContext) -> str:
        return ""

    def get_bucket_ids(self, elements: list[Any], context: BucketAssignerContext) -> list[str]:
        return [""] * len(elements)


class DateTimeBucketAssigner(BucketAssigner):
    """The processing time formatted with a Java date pattern in a time zone (one id per batch: a batch
    arrives at one moment)."""

    def __init__(self, format_str: str = "yyyy-MM-dd--HH", timezone_id: str | None = None) -> None:
        self.format_str = format_str
        self.timezone_id = timezone_id
        self.pattern = JavaDatePattern(format_str)
        self._zone = _zone(timezone_id)

    def __getstate__(self) -> dict[str, Any]:
        return {"format_str": self.format_str, "timezone_id": self.timezone_id}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["format_str"], state["timezone_id"])  # type: ignore[misc]

    def format(self, epoch_ms: int) -> str:
        return self.pattern.format(datetime.fromtimestamp(epoch_ms / 1000.0, self._zone))

    def get_bucket_id(self, element: Any, context: BucketAssignerContext) -> str:
        return self.format(context.current_processing_time())

    def get_bucket_ids(self, elements: list[Any], context: BucketAssignerContext) -> list[str]:
        return [self.format(context.current_processing_time())] * len(elements)


def _zone(timezone_id: str | None) -> tzinfo | None:
    if timezone_id is None:
        return datetime.now().astimezone().tzinfo  # the system's zone, as Java's ZoneId.systemDefault()
    try:
        return zoneinfo.ZoneInfo(timezone_id)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, TypeError) as exc:
        raise InvalidProgramError(
            f"date_time_bucket_assigner expects a time zone id; got {timezone_id!r} ({exc}); "
            "hint: 'UTC', 'Europe/Berlin' or None for the system's zone"
        ) from None


class FieldBucketAssigner(BucketAssigner):
    """The bucket is ``str()`` of one field of the record: a named :class:`Row`'s or a dict's ``field``, an
    attribute, or the ``field``-th element of a tuple (``None`` → ``"null"``, as Java's ``String.valueOf``)."""

    def __init__(self, field: str | int) -> None:
        if not isinstance(field, str | int) or isinstance(field, bool) or field == "":
            raise InvalidProgramError(
                f"field_bucket_assigner expects a field name or a tuple index; got {field!r}; hint: 'country'"
            )
        self.field = field

    def get_bucket_id(self, element: Any, context: BucketAssignerContext) -> str:
        value = _field_of(element, self.field)
        return "null" if value is None else str(value)


def _field_of(element: Any, field: str | int) -> Any:
    try:
        if isinstance(field, int) or isinstance(element, dict | Row):
            return element[field]
        return getattr(element, field)
    except (KeyError, IndexError, AttributeError, TypeError):
        raise ConnectorError(
            f"field_bucket_assigner expected records with a field {field!r}; got {reprlib.repr(element)} "
            f"(a {type(element).__name__!r}); hint: map records to named Rows or dicts carrying {field!r}"
        ) from None


# -- Java date patterns ------------------------------------------------------------------------------------
_Piece = str | Callable[[datetime], str]

#: (letter, count) -> strftime directive; ``count`` -1: any count from the largest one listed
_STRFTIME = {
    ("y", 2): "%y",
    ("y", -1): "%Y",
    ("u", 2): "%y",
    ("u", -1): "%Y",
    ("M", 2): "%m",
    ("M", 3): "%b",
    ("M", -1): "%B",
    ("L", 2): "%m",
    ("L", 3): "%b",
    ("L", -1): "%B",
    ("d", 2): "%d",
    ("D", 3): "%j",
    ("H", 2): "%H",
    ("h", 2): "%I",
    ("m", 2): "%M",
    ("s", 2): "%S",
    ("a", 1): "%p",
    ("E", 3): "%a",
    ("E", -1): "%A",
    ("Z", 1): "%z",
    ("z", 1): "%Z",
}
_UNPADDED: dict[str, Callable[[datetime], int]] = {
    "M": lambda t: t.month,
    "L": lambda t: t.month,
    "d": lambda t: t.day,
    "D": lambda t: t.timetuple().tm_yday,
    "H": lambda t: t.hour,
    "h": lambda t: t.hour % 12 or 12,
    "m": lambda t: t.minute,
    "s": lambda t: t.second,
    "y": lambda t: t.year,
    "u": lambda t: t.year,
}


class JavaDatePattern:
    """A Java ``DateTimeFormatter`` pattern (``"yyyy-MM-dd--HH"``, ``"yyyy/MM/dd/'hour='HH"``) as strftime:
    ``strftime`` is the translation (``None`` when a letter has no directive, e.g. unpadded ``d``), ``format``
    renders a datetime either way. Letters strom does not know are an error naming the pattern and column."""

    def __init__(self, pattern: str) -> None:
        if not isinstance(pattern, str) or not pattern:
            raise InvalidProgramError(
                f"a date pattern must be a non-empty str; got {pattern!r}; hint: 'yyyy-MM-dd--HH'"
            )
        self.pattern = pattern
        self._pieces = _translate(pattern)
        self.strftime = self._pieces[0] if len(self._pieces) == 1 and isinstance(self._pieces[0], str) else None

    def format(self, moment: datetime) -> str:
        if self.strftime is not None:
            return moment.strftime(self.strftime)
        return "".join(p if isinstance(p, str) and "%" not in p else _render(p, moment) for p in self._pieces)


def _render(piece: _Piece, moment: datetime) -> str:
    return moment.strftime(piece) if isinstance(piece, str) else piece(moment)


def _translate(pattern: str) -> list[_Piece]:
    pieces: list[_Piece] = []

    def add(piece: _Piece) -> None:
        if isinstance(piece, str) and pieces and isinstance(pieces[-1], str):
            pieces[-1] += piece
        else:
            pieces.append(piece)

    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "'":
            if pattern.startswith("''", i):  # '' is a quote
                add("'")
                i += 2
                continue
            text, j = [], i + 1
            while True:
                end = pattern.find("'", j)
                if end < 0:
                    raise _pattern_error(pattern, i, "an unterminated quote")
                text.append(pattern[j:end])
                if not pattern.startswith("''", end):
                    break
                text.append("'")
                j = end + 2
            add("".join(text).replace("%", "%%"))
            i = end + 1
            continue
        if not c.isascii() or not c.isalpha():
            add("%%" if c == "%" else c)
            i += 1
            continue
        j = i
        while j < n and pattern[j] == c:
            j += 1
        add(_directive(pattern, i, c, j - i))
        i = j
    return pieces


def _directive(pattern: str, column: int, letter: str, count: int) -> _Piece:
    exact = _STRFTIME.get((letter, count))
    if exact is not None:
        return exact
    if letter in ("y", "u") and count != 2:
        return "%Y"
    if count == 1 and letter in _UNPADDED:
        get = _UNPADDED[letter]
        return lambda t: str(get(t))
    if count > 3 and (letter, -1) in _STRFTIME:
        return _STRFTIME[(letter, -1)]
    if letter == "S":
        return lambda t: f"{t.microsecond:06d}"[:count].ljust(count, "0")
    raise _pattern_error(pattern, column, f"the letter {letter * count!r}")


def _pattern_error(pattern: str, column: int, what: str) -> InvalidProgramError:
    return InvalidProgramError(
        f"expected a Java date pattern of letters strom knows (y M d D H h m s S a E Z z, quoted 'text'); got {what} "
        f"in {pattern!r} at column {column + 1}; hint: quote literal letters, e.g. \"yyyy-MM-dd'T'HH\""
    )
