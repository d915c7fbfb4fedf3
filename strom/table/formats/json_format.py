"""Flink's ``json`` format (``JsonRowDataDeserializationSchema`` / ``JsonRowDataSerializationSchema``): one JSON
object per message, its fields by the row's column names.

Options as Flink's: ``fail-on-missing-field`` (default false: a missing field is NULL), ``ignore-parse-errors``
(default false: a message that is not JSON of the row fails the job; true: it is skipped),
``timestamp-format.standard`` (``SQL``: ``2024-01-02 03:04:05.123``, or ``ISO-8601``: ``2024-01-02T03:04:05.123``),
``encode.ignore-null-fields`` (default false), ``map-null-key.mode`` / ``map-null-key.literal`` and
``encode.decimal-as-plain-number`` (accepted; a DECIMAL is written as Flink writes it by default: trailing zeros
stripped, ``1E+2`` for ``100.00``). Flink 2.3's output: ``tests/data/flink_sql/sqlconn_json_*.txt``.
"""

from __future__ import annotations

import decimal
import json
from collections.abc import Mapping, Sequence
from typing import Any

from strom.table.errors import ValidationException
from strom.table.formats.row_data_converters import from_json_node, object_writer
from strom.table.formats.row_data_format import RowDataFormat, option_bool
from strom.table.types import DataType

__all__ = ["JsonFormat"]


def _reads_exact_numbers(data_type: DataType) -> bool:
    """A DECIMAL or STRING column keeps a JSON number's digits (Flink reads ``12.50`` into a STRING as ``12.50``)."""
    root = data_type.type_root.name
    return root in ("DECIMAL", "CHAR", "VARCHAR") or any(_reads_exact_numbers(c) for c in data_type.children)


class JsonFormat(RowDataFormat):
    identifier = "json"
    option_keys = frozenset(
        {
            "fail-on-missing-field",
            "ignore-parse-errors",
            "timestamp-format.standard",
            "map-null-key.mode",
            "map-null-key.literal",
            "encode.decimal-as-plain-number",
            "encode.ignore-null-fields",
        }
    )

    def __init__(self, names: Sequence[str], types: Sequence[DataType], options: Mapping[str, str]) -> None:
        super().__init__(names, types, options)
        self.fail_on_missing = option_bool(options, "fail-on-missing-field")
        self.ignore_errors = option_bool(options, "ignore-parse-errors")
        if self.fail_on_missing and self.ignore_errors:
            raise ValidationException(
                "fail-on-missing-field and ignore-parse-errors shouldn't both be true; expected one of them; "
                "hint: drop 'json.fail-on-missing-field'"
            )
        standard = options.get("timestamp-format.standard", "SQL").upper()
        if standard not in ("SQL", "ISO-8601"):
            raise ValidationException(f"expected 'timestamp-format.standard' SQL or ISO-8601; got {standard!r}")
        self.converters = [from_json_node(t) for t in self.types]
        self.parse_float: Any = decimal.Decimal if any(_reads_exact_numbers(t) for t in self.types) else None
        self.write = object_writer(
            self.names,
            self.types,
            iso=standard == "ISO-8601",
            ignore_nulls=option_bool(options, "encode.ignore-null-fields"),
        )

    def deserialize(self, message: bytes) -> list[Any] | None:
        try:
            node = json.loads(message, parse_float=self.parse_float)
            if not isinstance(node, dict):
                raise ValueError(f"expected a JSON object; got {type(node).__name__}")
            if self.fail_on_missing:
                missing = [n for n in self.names if n not in node]
                if missing:
                    raise ValueError(f"Could not find field with name '{missing[0]}'")
            return [c(node.get(n)) for n, c in zip(self.names, self.converters, strict=True)]
        except (ValueError, TypeError, ArithmeticError, AttributeError):
            if self.ignore_errors:
                return None
            raise

    def serialize(self, values: Sequence[Any]) -> bytes:
        return self.write(values).encode()
