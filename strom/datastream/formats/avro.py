"""PyFlink's ``pyflink.datastream.formats.avro`` module path (re-exports; see :mod:`strom.formats.avro_row`; the
Avro format needs fastavro, ``pip install 'strom[avro]'``)."""

from strom.formats.avro_row import AvroRowDeserializationSchema, AvroRowSerializationSchema

__all__ = ["AvroRowDeserializationSchema", "AvroRowSerializationSchema"]
