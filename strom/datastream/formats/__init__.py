"""PyFlink's ``pyflink.datastream.formats`` module path: ``csv`` and ``parquet`` (re-exports of
:mod:`strom.formats`)."""
