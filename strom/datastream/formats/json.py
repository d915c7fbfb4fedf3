"""PyFlink's ``pyflink.datastream.formats.json`` module path (re-exports; see :mod:`strom.formats.json_row`)."""

from strom.formats.json_row import JsonRowDeserializationSchema, JsonRowSerializationSchema

__all__ = ["JsonRowDeserializationSchema", "JsonRowSerializationSchema"]
