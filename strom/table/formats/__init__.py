"""Flink's table formats (``flink-formats``): the bytes of one message ⇄ the values of a row of SQL types.

``json``, ``csv``, ``raw`` and ``avro`` by the ``format`` / ``key.format`` / ``value.format`` option of a
connector; :func:`strom.table.formats.format_factory.create_format` picks one.
"""
