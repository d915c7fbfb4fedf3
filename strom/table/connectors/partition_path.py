"""Hive-style partition directories of the ``filesystem`` table connector (Flink's ``PartitionPathUtils`` and
``RowDataPartitionComputer``).

A row of a table ``PARTITIONED BY (dt, hr)`` goes to ``<path>/dt=<value>/hr=<value>/``: each value as its string
(a DATE as ``2024-01-31``, a BOOLEAN as ``true``), characters that cannot stand in a path name escaped as Flink
escapes them (``%`` and two hex digits), NULL or the empty string as ``partition.default-name``
(``__DEFAULT_PARTITION__``). Reading parses the ``name=value`` components of a file's path back to the column
types' Python values.

    >>> escape_path_name("a/b:c")
    'a%2Fb%3Ac'
    >>> unescape_path_name("a%2Fb%3Ac")
    'a/b:c'
"""

from __future__ import annotations

import datetime
import decimal
from collections.abc import Callable, Sequence
from typing import Any

from strom.connectors.file_system.bucket_assigners import BucketAssigner, BucketAssignerContext
from strom.table.errors import ValidationException

__all__ = [
    "DEFAULT_PARTITION_NAME",
    "PartitionBucketAssigner",
    "PartitionValueParser",
    "escape_path_name",
    "unescape_path_name",
]

DEFAULT_PARTITION_NAME = "__DEFAULT_PARTITION__"

_ESCAPED = frozenset(
    [chr(c) for c in range(1, 32)] + ['"', "#", "%", "'", "*", "/", ":", "=", "?", "\\", "\x7f", "{", "[", "]", "^"]
)


def escape_path_name(value: str) -> str:
    """Flink's ``PartitionPathUtils.escapePathName``."""
    if not any(c in _ESCAPED for c in value):
        return value
    return "".join(f"%{ord(c):02X}" if c in _ESCAPED else c for c in value)


def unescape_path_name(value: str) -> str:
    """Flink's ``PartitionPathUtils.unescapePathName``."""
    if "%" not in value:
        return value
    out, i = [], 0
    while i < len(value):
        c = value[i]
        if c == "%" and i + 2 < len(value) and _is_hex(value[i + 1 : i + 3]):
            out.append(chr(int(value[i + 1 : i + 3], 16)))
            i += 3
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _is_hex(s: str) -> bool:
    return len(s) == 2 and all(c in "0123456789abcdefABCDEF" for c in s)


def partition_string(value: Any, default_name: str) -> str:
    """A partition value as its directory name's value."""
    if value is None:
        return default_name
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, datetime.datetime):
        text = value.isoformat(sep=" ")
    else:
        text = str(value)
    return escape_path_name(text) if text else default_name


class PartitionBucketAssigner(BucketAssigner):
    """The bucket of a row: ``k1=v1/k2=v2`` of its partition columns (``indices`` into the row)."""

    def __init__(self, names: Sequence[str], indices: Sequence[int], default_name: str) -> None:
        self.names = tuple(names)
        self.indices = tuple(indices)
        self.default_name = default_name

    def get_bucket_id(self, element: Any, context: BucketAssignerContext) -> str:
        values = element._values
        return "/".join(
            f"{n}={partition_string(values[i], self.default_name)}"
            for n, i in zip(self.names, self.indices, strict=True)
        )

    def get_bucket_ids(self, elements: list[Any], context: BucketAssignerContext) -> list[str]:
        get = self.get_bucket_id
        return [get(e, context) for e in elements]


def _parser(root: str) -> Callable[[str], Any]:
    if root in ("TINYINT", "SMALLINT", "INTEGER", "BIGINT"):
        return int
    if root in ("FLOAT", "DOUBLE"):
        return float
    if root == "DECIMAL":
        return decimal.Decimal
    if root == "BOOLEAN":
        return lambda s: s.lower() == "true"
    if root == "DATE":
        return datetime.date.fromisoformat
    if root.startswith("TIMESTAMP"):
        return lambda s: datetime.datetime.fromisoformat(s.replace("T", " "))
    if root in ("CHAR", "VARCHAR"):
        return str
    raise ValidationException(
        f"expected partition columns of a type a directory name holds (numbers, strings, BOOLEAN, DATE, "
        f"TIMESTAMP); got {root}; hint: partition by a STRING or INT column"
    )


class PartitionValueParser:
    """The partition columns' values of a file from the ``name=value`` components of its path (the last one of
    each name counts); a missing component or the default name is NULL."""

    def __init__(self, names: Sequence[str], roots: Sequence[str], default_name: str) -> None:
        self.names = tuple(names)
        self.parsers = tuple(_parser(r) for r in roots)
        self.default_name = default_name
        self._cache: dict[str, tuple[Any, ...]] = {}

    def __call__(self, path: str) -> tuple[Any, ...]:
        directory = path.rsplit("/", 1)[0]
        cached = self._cache.get(directory)
        if cached is not None:
            return cached
        found: dict[str, str] = {}
        for part in directory.split("/"):
            name, eq, value = part.partition("=")
            if eq and name in self.names:
                found[name] = value
        values: list[Any] = []
        for name, parse in zip(self.names, self.parsers, strict=True):
            raw = found.get(name)
            if raw is None or raw == self.default_name:
                values.append(None)
                continue
            text = unescape_path_name(raw)
            try:
                values.append(parse(text))
            except (ValueError, decimal.InvalidOperation):
                raise ValidationException(
                    f"expected the partition value {name}={text!r} of the file {path} to be of its column's type; "
                    "got one that does not parse; hint: keep other directories out of the table's path"
                ) from None
        result = tuple(values)
        self._cache[directory] = result
        return result
