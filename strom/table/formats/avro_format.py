"""Flink's ``avro`` format (``AvroRowDataDeserializationSchema`` / ``AvroRowDataSerializationSchema``): one Avro
record per message (the binary encoding, no header), its schema derived from the row type as Flink's
``AvroSchemaConverter.convertToSchema`` does — a record named ``record``, nullable columns as a union with
``null`` first, DECIMAL as ``bytes`` with the decimal logical type, DATE ``date``, TIME ``time-millis``, TIMESTAMP
and TIMESTAMP_LTZ ``timestamp-millis`` (Flink's legacy mapping, its default), nested rows ``record_<field>``.
fastavro (``pip install 'strom[avro]'``) reads and writes.
"""

from __future__ import annotations

import datetime
import io
import json
from collections.abc import Mapping, Sequence
from typing import Any

from strom.api.row import Row, _create_row
from strom.formats.avro_row import _fastavro
from strom.table.errors import ValidationException
from strom.table.formats.row_data_format import RowDataFormat
from strom.table.types import DataType, RowType

__all__ = ["AvroFormat", "avro_schema_of"]

_PRIMITIVES = {
    "BOOLEAN": "boolean",
    "TINYINT": "int",
    "SMALLINT": "int",
    "INTEGER": "int",
    "BIGINT": "long",
    "FLOAT": "float",
    "DOUBLE": "double",
    "CHAR": "string",
    "VARCHAR": "string",
    "BINARY": "bytes",
    "VARBINARY": "bytes",
}


def _avro_type(data_type: DataType, name: str) -> Any:
    root = data_type.type_root.name
    avro: Any
    if root in _PRIMITIVES:
        avro = _PRIMITIVES[root]
    elif root == "DECIMAL":
        avro = {"type": "bytes", "logicalType": "decimal", "precision": data_type.precision, "scale": data_type.scale}  # type: ignore[attr-defined]
    elif root == "DATE":
        avro = {"type": "int", "logicalType": "date"}
    elif root == "TIME_WITHOUT_TIME_ZONE":
        avro = {"type": "int", "logicalType": "time-millis"}
    elif root in ("TIMESTAMP_WITHOUT_TIME_ZONE", "TIMESTAMP_WITH_LOCAL_TIME_ZONE"):
        avro = {"type": "long", "logicalType": "timestamp-millis"}
    elif root == "ARRAY":
        avro = {"type": "array", "items": _avro_type(data_type.children[0], name)}
    elif root == "MAP":
        avro = {"type": "map", "values": _avro_type(data_type.children[1], name)}
    elif root == "ROW" and isinstance(data_type, RowType):
        avro = avro_schema_of(data_type.names, data_type.children, f"record_{name}")
    else:
        raise ValidationException(f"The 'avro' format doesn't support the type {data_type}; column '{name}'")
    return ["null", avro] if data_type.is_nullable else avro


def avro_schema_of(names: Sequence[str], types: Sequence[DataType], record: str = "record") -> dict[str, Any]:
    """The Avro record schema of a row type (Flink's ``AvroSchemaConverter.convertToSchema``)."""
    return {
        "type": "record",
        "name": record,
        "fields": [{"name": n, "type": _avro_type(t, n)} for n, t in zip(names, types, strict=True)],
    }


def _reader(data_type: DataType) -> Any:
    root = data_type.type_root.name
    if root in ("TIMESTAMP_WITHOUT_TIME_ZONE", "TIMESTAMP_WITH_LOCAL_TIME_ZONE"):
        return lambda v: (
            v.astimezone(datetime.UTC).replace(tzinfo=None) if isinstance(v, datetime.datetime) and v.tzinfo else v
        )
    if root == "ROW" and isinstance(data_type, RowType):
        fields = [(n, _reader(t)) for n, t in zip(data_type.names, data_type.children, strict=True)]
        return lambda v: None if v is None else _create_row(None, [r(v.get(n)) for n, r in fields])
    if root == "ARRAY":
        element = _reader(data_type.children[0])
        return lambda v: None if v is None else [element(e) for e in v]
    return lambda v: v


def _writer(data_type: DataType) -> Any:
    root = data_type.type_root.name
    if root == "ROW" and isinstance(data_type, RowType):
        fields = [(n, _writer(t)) for n, t in zip(data_type.names, data_type.children, strict=True)]
        return lambda v: (
            None
            if v is None
            else {n: w(x) for (n, w), x in zip(fields, v._values if isinstance(v, Row) else v, strict=True)}
        )
    if root in ("TIMESTAMP_WITHOUT_TIME_ZONE", "TIMESTAMP_WITH_LOCAL_TIME_ZONE"):
        return lambda v: v if v is None or v.tzinfo else v.replace(tzinfo=datetime.UTC)
    return lambda v: v


class AvroFormat(RowDataFormat):
    identifier = "avro"
    option_keys = frozenset({"encoding", "codec", "timestamp_mapping.legacy"})

    def __init__(self, names: Sequence[str], types: Sequence[DataType], options: Mapping[str, str]) -> None:
        super().__init__(names, types, options)
        self.schema_json = json.dumps(avro_schema_of(self.names, self.types))
        self._setup()

    def _setup(self) -> None:
        fastavro = _fastavro()
        self.schema = fastavro.parse_schema(json.loads(self.schema_json))
        self.read_record = fastavro.schemaless_reader
        self.write_record = fastavro.schemaless_writer
        self.readers = [(n, _reader(t)) for n, t in zip(self.names, self.types, strict=True)]
        self.writers = [(n, _writer(t)) for n, t in zip(self.names, self.types, strict=True)]

    def __getstate__(self) -> dict[str, Any]:
        return {"names": self.names, "types": self.types, "schema_json": self.schema_json}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.names, self.types, self.schema_json = state["names"], state["types"], state["schema_json"]
        self._setup()

    def deserialize(self, message: bytes) -> list[Any] | None:
        record = self.read_record(io.BytesIO(message), self.schema, None)
        return [r(record.get(n)) for n, r in self.readers]

    def serialize(self, values: Sequence[Any]) -> bytes | None:
        out = io.BytesIO()
        self.write_record(out, self.schema, {n: w(v) for (n, w), v in zip(self.writers, values, strict=True)})
        return out.getvalue()
