"""Flink's ``DecodingFormat`` / ``EncodingFormat`` of a table format: a row's values from one message and back.

A format is made for the fields it reads or writes (names and SQL types, in order) and its options (the keys after
``json.``, ``csv.``…, with the ``key.`` / ``value.`` prefix removed). ``deserialize`` returns the values of one row,
or None for a message to skip (``ignore-parse-errors``); ``serialize`` the bytes of one row's values.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from strom.table.errors import ValidationException
from strom.table.types import DataType

__all__ = ["RowDataFormat", "option_bool"]


def option_bool(options: Mapping[str, str], key: str, default: bool = False) -> bool:
    value = options.get(key)
    if value is None:
        return default
    if value.lower() not in ("true", "false"):
        raise ValidationException(f"expected 'true' or 'false' for option '{key}'; got {value!r}")
    return value.lower() == "true"


class RowDataFormat(ABC):
    """One format for one row type (Flink's ``DeserializationSchema<RowData>`` and ``SerializationSchema``)."""

    #: the format's identifier (``'format' = 'json'``)
    identifier: ClassVar[str]
    #: its options, without the ``<identifier>.`` prefix
    option_keys: ClassVar[frozenset[str]] = frozenset()

    def __init__(self, names: Sequence[str], types: Sequence[DataType], options: Mapping[str, str]) -> None:
        self.names = tuple(names)
        self.types = tuple(types)

    @abstractmethod
    def deserialize(self, message: bytes) -> list[Any] | None:
        """The row's values, or None to skip the message."""

    @abstractmethod
    def serialize(self, values: Sequence[Any]) -> bytes | None:
        """The message of a row's values (None: a message without value)."""
