"""PyFlink's ``pyflink.datastream.formats`` module path: ``csv``, ``json``, ``avro`` and ``parquet`` (re-exports
of :mod:`strom.formats`)."""
