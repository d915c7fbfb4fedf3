"""Flink's ``AvroRowDeserializationSchema`` and ``AvroRowSerializationSchema`` (PyFlink's
``pyflink.datastream.formats.avro``): a ``Row`` as one Avro record of a schema (the binary encoding without a
header, as Flink's) and back, with fastavro (``pip install 'strom[avro]'``).

    >>> schema = '{"type": "record", "name": "R", "fields": [{"name": "id", "type": "int"}]}'
    >>> data = AvroRowSerializationSchema(avro_schema_string=schema).serialize(Row(7))
    >>> AvroRowDeserializationSchema(avro_schema_string=schema).deserialize(data)
    Row(id=7)

Records are ``Row``\\ s of the schema's fields in order (nested records are nested rows); a row to write has the
schema's fields by position (or by name, for a named row). ``record_class`` (a Java class) has no meaning here:
give the schema.
"""

from __future__ import annotations

import io
import json
from typing import Any

from strom.api.row import Row
from strom.api.serialization_schema import DeserializationSchema, SerializationSchema
from strom.api.typeinfo import TypeInformation, Types
from strom.exceptions import ConnectorError, InvalidProgramError

__all__ = ["AvroRowDeserializationSchema", "AvroRowSerializationSchema"]


def _fastavro() -> Any:
    try:
        import fastavro
    except ImportError as exc:
        raise ConnectorError(
            f"expected fastavro for the Avro format; got {exc}; hint: pip install 'strom[avro]'"
        ) from None
    return fastavro


def _parse(record_class: str | None, avro_schema_string: str | None, who: str) -> tuple[Any, dict[str, Any]]:
    if avro_schema_string is None:
        raise InvalidProgramError(
            f"expected {who}(avro_schema_string=...); got "
            + (f"record_class={record_class!r} (a Java class)" if record_class else "neither")
            + "; hint: pass the record's Avro schema as JSON"
        )
    raw = json.loads(avro_schema_string)
    if not isinstance(raw, dict) or raw.get("type") != "record":
        raise InvalidProgramError(f"expected an Avro schema of type 'record' for {who}; got {avro_schema_string:.80}")
    return _fastavro().parse_schema(raw), raw


class AvroRowDeserializationSchema(DeserializationSchema):
    """Avro bytes (one record, no header) to a ``Row`` of the schema's fields."""

    def __init__(self, record_class: str | None = None, avro_schema_string: str | None = None) -> None:
        self._setup(_parse(record_class, avro_schema_string, "AvroRowDeserializationSchema"), avro_schema_string)

    def _setup(self, parsed: tuple[Any, dict[str, Any]], avro_schema_string: str | None) -> None:
        self.schema, raw = parsed
        self.avro_schema_string = avro_schema_string
        self._reader = _fastavro().schemaless_reader
        self._to_row = _row_maker(raw)
        self.produced_type = _type_of_avro(raw)

    def get_produced_type(self) -> TypeInformation:
        """The row type of the schema (Flink's ``ResultTypeQueryable``): a ``KafkaSource`` stream is of it."""
        return self.produced_type

    def deserialize(self, message: bytes) -> Any:
        return self._to_row(self._reader(io.BytesIO(message), self.schema, None))

    def __getstate__(self) -> dict[str, Any]:
        return {"avro_schema_string": self.avro_schema_string}

    def __setstate__(self, state: dict[str, Any]) -> None:
        text = state["avro_schema_string"]
        self._setup(_parse(None, text, type(self).__name__), text)


class AvroRowSerializationSchema(SerializationSchema):
    """A ``Row`` (or tuple) to Avro bytes (one record of the schema, no header)."""

    def __init__(self, record_class: str | None = None, avro_schema_string: str | None = None) -> None:
        self._setup(_parse(record_class, avro_schema_string, "AvroRowSerializationSchema"), avro_schema_string)

    def _setup(self, parsed: tuple[Any, dict[str, Any]], avro_schema_string: str | None) -> None:
        self.schema, raw = parsed
        self.avro_schema_string = avro_schema_string
        self._writer = _fastavro().schemaless_writer
        self._to_record = _record_maker(raw)

    def serialize(self, element: Any) -> bytes:
        out = io.BytesIO()
        self._writer(out, self.schema, self._to_record(element))
        return out.getvalue()

    def __getstate__(self) -> dict[str, Any]:
        return {"avro_schema_string": self.avro_schema_string}

    def __setstate__(self, state: dict[str, Any]) -> None:
        text = state["avro_schema_string"]
        self._setup(_parse(None, text, type(self).__name__), text)


def _record_schema(field_type: Any) -> dict[str, Any] | None:
    """The record schema of a field type (``{"type": "record"}``, or one in a union with null)."""
    if isinstance(field_type, dict) and field_type.get("type") == "record":
        return field_type
    if isinstance(field_type, list):
        return next((r for r in map(_record_schema, field_type) if r is not None), None)
    if isinstance(field_type, dict) and isinstance(field_type.get("type"), dict | list):
        return _record_schema(field_type["type"])
    return None


def _row_maker(raw: dict[str, Any]) -> Any:
    names = [f["name"] for f in raw["fields"]]
    nested = {f["name"]: _row_maker(r) for f in raw["fields"] if (r := _record_schema(f["type"])) is not None}

    def to_row(record: dict[str, Any] | None) -> Row | None:
        if record is None:
            return None
        row = Row(*[nested[n](record[n]) if n in nested else record[n] for n in names])
        row.set_field_names(names)
        return row

    return to_row


def _record_maker(raw: dict[str, Any]) -> Any:
    names = [f["name"] for f in raw["fields"]]
    nested = {f["name"]: _record_maker(r) for f in raw["fields"] if (r := _record_schema(f["type"])) is not None}

    def to_record(element: Any) -> dict[str, Any] | None:
        if element is None or isinstance(element, dict):
            return element
        if isinstance(element, Row) and element.get_field_names() is not None:
            values = dict(zip(element.get_field_names() or [], element, strict=True))
            element = [values.get(n) for n in names] if set(names) <= set(values) else list(element)
        values_list = list(element) if isinstance(element, Row | tuple | list) else [element]
        if len(values_list) != len(names):
            raise ValueError(f"expected a row of the Avro record's {len(names)} fields {names}; got {element!r:.80}")
        return {n: nested[n](v) if n in nested else v for n, v in zip(names, values_list, strict=True)}

    return to_record


_AVRO_TYPES = {
    "int": Types.INT,
    "long": Types.LONG,
    "string": Types.STRING,
    "boolean": Types.BOOLEAN,
    "float": Types.FLOAT,
    "double": Types.DOUBLE,
    "null": Types.STRING,
}


def _type_of_avro(avro_type: Any) -> TypeInformation:
    """The PyFlink type of an Avro type (Flink's ``AvroSchemaConverter``): records are named rows, arrays lists,
    a union with null its other type; what has no counterpart here stays a pickled value."""
    if isinstance(avro_type, list):
        others = [t for t in avro_type if t != "null"]
        return _type_of_avro(others[0]) if len(others) == 1 else Types.PICKLED_BYTE_ARRAY()
    if isinstance(avro_type, dict):
        kind = avro_type.get("type")
        if kind == "record":
            fields = avro_type["fields"]
            return Types.ROW_NAMED([f["name"] for f in fields], [_type_of_avro(f["type"]) for f in fields])
        if kind == "array":
            return Types.LIST(_type_of_avro(avro_type["items"]))
        if avro_type.get("logicalType") is None and isinstance(kind, str | list | dict):
            return _type_of_avro(kind)
        return Types.PICKLED_BYTE_ARRAY()
    if avro_type == "bytes":
        return Types.PRIMITIVE_ARRAY(Types.BYTE())
    make = _AVRO_TYPES.get(avro_type)
    return make() if make is not None else Types.PICKLED_BYTE_ARRAY()
