"""Flink's ``JsonRowDeserializationSchema`` and ``JsonRowSerializationSchema`` (PyFlink's
``pyflink.datastream.formats.json``): a JSON object to a ``Row`` of a row type and back, as the Kafka connector
takes them.

    >>> from strom.common import Types
    >>> row_type = Types.ROW_NAMED(["id", "name"], [Types.INT(), Types.STRING()])
    >>> schema = JsonRowSerializationSchema.builder().with_type_info(row_type).build()
    >>> data = schema.serialize(Row(1, "hi"))
    >>> data
    b'{"id":1,"name":"hi"}'
    >>> JsonRowDeserializationSchema.builder().type_info(row_type).build().deserialize(data)
    Row(id=1, name='hi')

A field missing from the object is ``None`` (an error with ``fail_on_missing_field()``); a record that is not
JSON of the row type fails (``ignore_parse_errors()``: it is skipped — the schema returns ``None``, which the Kafka
source drops, as Flink's).
"""

from __future__ import annotations

import json
from typing import Any

from strom.api.row import Row
from strom.api.serialization_schema import DeserializationSchema, SerializationSchema
from strom.api.typeinfo import BasicTypeInfo, RowTypeInfo, SqlTimeTypeInfo, TypeInformation, Types
from strom.formats.row_fields import json_converter, json_ready, row_type_of

__all__ = ["JsonRowDeserializationSchema", "JsonRowSerializationSchema"]


class JsonRowDeserializationSchema(DeserializationSchema):
    """JSON bytes to a ``Row`` (build one with :meth:`builder`)."""

    def __init__(self, type_info: RowTypeInfo, fail_on_missing_field: bool, ignore_parse_errors: bool) -> None:
        self.type_info = type_info
        self.fail_on_missing_field = fail_on_missing_field
        self.ignore_parse_errors = ignore_parse_errors
        self._convert = json_converter(type_info, fail_on_missing_field)

    @staticmethod
    def builder() -> JsonRowDeserializationSchema.Builder:
        return JsonRowDeserializationSchema.Builder()

    def get_produced_type(self) -> RowTypeInfo:
        """The row type (Flink's ``ResultTypeQueryable``): a ``KafkaSource`` stream is of it."""
        return self.type_info

    def deserialize(self, message: bytes) -> Any:
        try:
            return self._convert(json.loads(message))
        except (ValueError, TypeError, AttributeError, ArithmeticError):
            if self.ignore_parse_errors:
                return None
            raise

    class Builder:
        """PyFlink's ``JsonRowDeserializationSchema.Builder``."""

        def __init__(self) -> None:
            self._type_info: TypeInformation | None = None
            self._fail_on_missing_field = False
            self._ignore_parse_errors = False

        def type_info(self, type_info: TypeInformation) -> JsonRowDeserializationSchema.Builder:
            self._type_info = type_info
            return self

        def json_schema(self, json_schema: str) -> JsonRowDeserializationSchema.Builder:
            """The row type of a JSON schema (Flink's ``JsonRowSchemaConverter``: objects are rows, ``integer``
            is ``LONG``, ``number`` is ``DOUBLE``, ``string`` with ``format`` date / time / date-time is a SQL
            time type, arrays are ``LIST``)."""
            if json_schema is None:
                raise TypeError("The json_schema must not be None.")
            self._type_info = _type_of_json_schema(json.loads(json_schema))
            return self

        def fail_on_missing_field(self) -> JsonRowDeserializationSchema.Builder:
            self._fail_on_missing_field = True
            return self

        def ignore_parse_errors(self) -> JsonRowDeserializationSchema.Builder:
            self._ignore_parse_errors = True
            return self

        def build(self) -> JsonRowDeserializationSchema:
            row_type = row_type_of(self._type_info, "JsonRowDeserializationSchema.builder().type_info(...)")
            return JsonRowDeserializationSchema(row_type, self._fail_on_missing_field, self._ignore_parse_errors)


class JsonRowSerializationSchema(SerializationSchema):
    """A ``Row`` (or tuple) to JSON bytes of an object with the row type's field names (``f0``, ``f1``, ... of
    ``Types.ROW``), as Flink's; build one with :meth:`builder`."""

    def __init__(self, type_info: RowTypeInfo) -> None:
        self.type_info = type_info
        self._names = type_info.get_field_names()

    @staticmethod
    def builder() -> JsonRowSerializationSchema.Builder:
        return JsonRowSerializationSchema.Builder()

    def serialize(self, element: Any) -> bytes:
        values = list(element) if isinstance(element, Row | tuple | list) else [element]
        if len(values) != len(self._names):
            raise ValueError(
                f"expected a row of {len(self._names)} fields {self._names} for JSON; got {element!r:.80}; "
                "hint: the stream's rows must match the type info given to JsonRowSerializationSchema"
            )
        obj = {name: json_ready(v) for name, v in zip(self._names, values, strict=True)}
        return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()

    class Builder:
        """PyFlink's ``JsonRowSerializationSchema.Builder``."""

        def __init__(self) -> None:
            self._type_info: TypeInformation | None = None

        def with_type_info(self, type_info: TypeInformation) -> JsonRowSerializationSchema.Builder:
            self._type_info = type_info
            return self

        def build(self) -> JsonRowSerializationSchema:
            if self._type_info is None:
                raise TypeError("Typeinfo should be set.")
            return JsonRowSerializationSchema(
                row_type_of(self._type_info, "JsonRowSerializationSchema.builder().with_type_info(...)")
            )


_JSON_TYPES = {"integer": Types.LONG, "number": Types.DOUBLE, "boolean": Types.BOOLEAN, "null": Types.STRING}
_FORMATS = {"date": "Date", "time": "Time", "date-time": "Timestamp"}


def _type_of_json_schema(schema: dict[str, Any]) -> TypeInformation:
    kind = schema.get("type", "object")
    if isinstance(kind, list):  # ["string", "null"]: the non-null type
        kind = next((k for k in kind if k != "null"), "string")
    if kind == "object":
        properties = schema.get("properties", {})
        return Types.ROW_NAMED(list(properties), [_type_of_json_schema(p) for p in properties.values()])
    if kind == "array":
        return Types.LIST(_type_of_json_schema(schema.get("items", {"type": "string"})))
    if kind == "string":
        fmt = _FORMATS.get(schema.get("format", ""))
        return SqlTimeTypeInfo(fmt) if fmt else BasicTypeInfo("String")
    if kind not in _JSON_TYPES:
        raise ValueError(
            f"expected a JSON schema type of {sorted([*_JSON_TYPES, 'object', 'array', 'string'])}; got {kind!r}"
        )
    return _JSON_TYPES[kind]()
