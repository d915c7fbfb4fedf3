"""``Row`` and ``RowKind``: PyFlink's record of positional, optionally named fields (``pyflink.common.types``).

A row's fields are read by position (``row[0]``), by name (``row["name"]``, ``row.name``) and iterated in order;
``Row(name="Alice", age=11)`` sorts its fields by name, as PyFlink does. Structured file formats (CSV with a
schema, Parquet) produce named rows; :func:`row_factory` builds many rows of the same fields cheaply, sharing
one field list (which also keeps a pickled batch of rows small: the list is pickled once per batch).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

__all__ = ["Row", "RowKind", "row_factory"]


class RowKind(enum.Enum):
    """The change a row stands for; ``str()`` is Flink's short form (``+I``, ``-U``, ``+U``, ``-D``), as PyFlink's."""

    INSERT = 0
    UPDATE_BEFORE = 1
    UPDATE_AFTER = 2
    DELETE = 3

    def short_string(self) -> str:
        return _SHORT[self.value]

    def __str__(self) -> str:
        return _SHORT[self.value]


_SHORT = ("+I", "-U", "+U", "-D")


_new = object.__new__
_INSERT = RowKind.INSERT


def _create_row(fields: list[str] | None, values: Iterable[Any], row_kind: RowKind | None = None) -> Row:
    """A positional row of a copy of ``values``, named by ``fields``: per record on the hot paths (generated rows,
    unpickling, table ↔ stream conversion), so without ``Row.__init__``'s argument handling (half the cost)."""
    row: Row = _new(Row)
    row._values = list(values)
    if fields is not None:
        row._fields = fields
    row._row_kind = _INSERT if row_kind is None else row_kind
    return row


def _owning_row(values: list[Any], row_kind: RowKind) -> Row:
    """A positional row that takes ``values`` as they are (no copy): per emitted change of the SQL operators."""
    row: Row = _new(Row)
    row._values = values
    row._row_kind = row_kind
    return row


class Row:
    """A record of fields (PyFlink's ``Row``): ``Row(1, "a")``, ``Row(name="a", id=1)`` (fields in the order
    given, as PyFlink 2.x); ``Row("name", "age")`` called with values makes rows of those fields."""

    __slots__ = ("_fields", "_row_kind", "_values")

    _fields: list[str]
    _values: list[Any]
    _row_kind: RowKind

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if args and kwargs:
            raise ValueError("Can not use both args and kwargs to create Row")
        if kwargs:
            self._fields = list(kwargs)
            self._values = list(kwargs.values())
        else:
            self._values = list(args)
        self._row_kind = RowKind.INSERT

    def as_dict(self, recursive: bool = False) -> dict[str, Any]:
        if not hasattr(self, "_fields"):
            raise TypeError("Cannot convert a Row class into dict")
        if not recursive:
            return dict(zip(self._fields, self._values, strict=False))

        def conv(obj: Any) -> Any:
            if isinstance(obj, Row):
                return obj.as_dict(True)
            if isinstance(obj, list):
                return [conv(o) for o in obj]
            if isinstance(obj, dict):
                return {k: conv(v) for k, v in obj.items()}
            return obj

        return {k: conv(v) for k, v in zip(self._fields, self._values, strict=False)}

    @staticmethod
    def of_kind(row_kind: RowKind, *args: Any) -> Row:
        """A positional row of ``row_kind`` (PyFlink's ``Row.of_kind``)."""
        row = Row(*args)
        row.set_row_kind(row_kind)
        return row

    def get_fields_by_names(self, names: list[str]) -> list[Any]:
        """The values of the fields ``names``, in that order."""
        return [getattr(self, n) for n in names]

    def get_row_kind(self) -> RowKind:
        return self._row_kind

    def set_row_kind(self, row_kind: RowKind) -> None:
        self._row_kind = row_kind

    def set_field_names(self, field_names: list[str]) -> None:
        self._fields = list(field_names)

    def get_field_names(self) -> list[str] | None:
        return getattr(self, "_fields", None)

    def __contains__(self, item: object) -> bool:
        return item in self._values

    def __call__(self, *args: Any) -> Row:
        """``Row("name", "age")("Alice", 11)``: a row with this row's values as field names."""
        if len(args) > len(self._values):
            raise ValueError(f"Can not create Row with fields {self}, expected {len(self)} values but got {args}")
        return _create_row([str(v) for v in self._values], args, self._row_kind)

    def __getitem__(self, item: Any) -> Any:
        if isinstance(item, int | slice):
            return self._values[item]
        try:
            return self._values[self._fields.index(item)]
        except AttributeError:
            raise KeyError(item) from None
        except ValueError:
            raise KeyError(item) from None

    def __setitem__(self, key: Any, value: Any) -> None:
        if isinstance(key, int | slice):
            self._values[key] = value
            return
        try:
            self._values[self._fields.index(key)] = value
        except (AttributeError, ValueError):
            raise KeyError(key) from None

    def __getattr__(self, item: str) -> Any:
        if item.startswith("_"):
            raise AttributeError(item)
        try:
            return self._values[self._fields.index(item)]
        except (AttributeError, ValueError):
            raise AttributeError(item) from None

    def __reduce__(self) -> tuple[Any, ...]:
        kind = None if self._row_kind is RowKind.INSERT else self._row_kind
        return _create_row, (getattr(self, "_fields", None), tuple(self._values), kind)

    def __repr__(self) -> str:
        if hasattr(self, "_fields"):
            return "Row({})".format(", ".join(f"{k}={v!r}" for k, v in zip(self._fields, self._values, strict=False)))
        return "<Row({})>".format(", ".join(repr(v) for v in self._values))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Row):
            return False
        if getattr(self, "_fields", None) != getattr(other, "_fields", None):
            return False
        return self._row_kind == other._row_kind and self._values == other._values

    def __hash__(self) -> int:
        return hash(tuple(self._values))

    def __iter__(self) -> Iterator[Any]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)


def row_factory(fields: Sequence[str]) -> Callable[[Iterable[Any]], Row]:
    """A fast constructor of INSERT rows named ``fields`` from an iterable of values (all rows share one field
    list): ``make = row_factory(["id", "name"]); rows = [make(t) for t in zip(ids, names)]``."""
    names = list(fields)
    new = object.__new__
    insert = RowKind.INSERT

    def make(values: Iterable[Any]) -> Row:
        row: Row = new(Row)
        row._values = list(values)
        row._fields = names
        row._row_kind = insert
        return row

    return make
