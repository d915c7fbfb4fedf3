"""Flink's constructed logical types: ``ARRAY``, ``MULTISET``, ``MAP`` and ``ROW`` (with its :class:`RowField`).

Built with :class:`strom.table.types.DataTypes` and imported from :mod:`strom.table.types`, like the atomic types of
:mod:`strom.table.logical_types`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from strom.table.errors import ValidationException
from strom.table.logical_types import DataType, LogicalTypeRoot

__all__ = ["ArrayType", "MapType", "MultisetType", "RowField", "RowType"]


class ArrayType(DataType):
    """``ARRAY<t>`` (Python ``list``)."""

    __slots__ = ("_element_type",)
    type_root = LogicalTypeRoot.ARRAY

    def __init__(self, element_type: DataType, nullable: bool = True) -> None:
        super().__init__(nullable)
        self._element_type = element_type

    @property
    def element_type(self) -> DataType:
        return self._element_type

    @property
    def children(self) -> tuple[DataType, ...]:
        return (self._element_type,)

    def _params(self) -> tuple[object, ...]:
        return (self._element_type,)

    def _summary(self) -> str:
        return f"ARRAY<{self._element_type.as_summary_string()}>"

    def _serializable(self) -> str:
        return f"ARRAY<{self._element_type.as_serializable_string()}>"


class MultisetType(ArrayType):
    """``MULTISET<t>`` (Python ``dict``: element → count)."""

    __slots__ = ()
    type_root = LogicalTypeRoot.MULTISET

    def _summary(self) -> str:
        return f"MULTISET<{self._element_type.as_summary_string()}>"

    def _serializable(self) -> str:
        return f"MULTISET<{self._element_type.as_serializable_string()}>"


class MapType(DataType):
    """``MAP<k, v>`` (Python ``dict``)."""

    __slots__ = ("_key_type", "_value_type")
    type_root = LogicalTypeRoot.MAP

    def __init__(self, key_type: DataType, value_type: DataType, nullable: bool = True) -> None:
        super().__init__(nullable)
        self._key_type = key_type
        self._value_type = value_type

    @property
    def key_type(self) -> DataType:
        return self._key_type

    @property
    def value_type(self) -> DataType:
        return self._value_type

    @property
    def children(self) -> tuple[DataType, ...]:
        return (self._key_type, self._value_type)

    def _params(self) -> tuple[object, ...]:
        return (self._key_type, self._value_type)

    def _summary(self) -> str:
        return f"MAP<{self._key_type.as_summary_string()}, {self._value_type.as_summary_string()}>"

    def _serializable(self) -> str:
        return f"MAP<{self._key_type.as_serializable_string()}, {self._value_type.as_serializable_string()}>"


def _quote_identifier(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _quote_string(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


class RowField:
    """One field of a ROW: name, type and optional description (``DataTypes.FIELD``)."""

    __slots__ = ("_data_type", "_description", "_name")

    def __init__(self, name: str, data_type: DataType, description: str | None = None) -> None:
        self._name = name
        self._data_type = data_type
        self._description = description

    @property
    def name(self) -> str:
        return self._name

    @property
    def data_type(self) -> DataType:
        return self._data_type

    @property
    def description(self) -> str | None:
        return self._description

    def _text(self, type_text: str) -> str:
        desc = "" if self._description is None else " " + _quote_string(self._description)
        return f"{_quote_identifier(self._name)} {type_text}{desc}"

    def __str__(self) -> str:
        return self._text(self._data_type.as_summary_string())

    def __repr__(self) -> str:
        return f"RowField({self._name!r}, {self._data_type!r}, {self._description!r})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, RowField)
            and other._name == self._name
            and other._data_type == self._data_type
            and other._description == self._description
        )

    def __hash__(self) -> int:
        return hash((self._name, self._data_type, self._description))


class RowType(DataType):
    """``ROW<`a` INT, `b` STRING>`` (Python :class:`strom.api.row.Row`)."""

    __slots__ = ("_fields", "_names")
    type_root = LogicalTypeRoot.ROW

    def __init__(self, fields: Sequence[RowField] = (), nullable: bool = True) -> None:
        super().__init__(nullable)
        self._fields = tuple(fields)
        self._names = tuple(f.name for f in self._fields)
        if len(set(self._names)) != len(self._names):
            raise ValidationException(f"expected distinct field names in a ROW; got {list(self._names)}")

    @property
    def fields(self) -> tuple[RowField, ...]:
        return self._fields

    @property
    def names(self) -> tuple[str, ...]:
        return self._names

    def field_names(self) -> list[str]:
        return list(self._names)

    def field_types(self) -> list[DataType]:
        return [f.data_type for f in self._fields]

    def field_index(self, name: str) -> int:
        """The position of field *name*; raises ValidationException naming the fields there are."""
        try:
            return self._names.index(name)
        except ValueError:
            raise ValidationException(f"expected one of the fields {list(self._names)}; got {name!r}") from None

    @property
    def children(self) -> tuple[DataType, ...]:
        return tuple(f.data_type for f in self._fields)

    def __iter__(self) -> Iterator[RowField]:
        return iter(self._fields)

    def __len__(self) -> int:
        return len(self._fields)

    def __getitem__(self, key: int | str) -> RowField:
        return self._fields[key if isinstance(key, int) else self.field_index(key)]

    def _params(self) -> tuple[object, ...]:
        return self._fields

    def _summary(self) -> str:
        return "ROW<" + ", ".join(str(f) for f in self._fields) + ">"

    def _serializable(self) -> str:
        return "ROW<" + ", ".join(f._text(f.data_type.as_serializable_string()) for f in self._fields) + ">"
