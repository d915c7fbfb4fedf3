"""Connectors as tables (Flink's ``DynamicTableSourceFactory`` / ``DynamicTableSinkFactory`` by ``'connector'``).

A catalog table's ``WITH`` options pick a factory; the factory validates the options (an unknown option or a
missing required one fails at planning with the table's name) and makes a :class:`DynamicTableSource` or
:class:`DynamicTableSink` that the translator turns into strom's sources and sinks.
"""

from __future__ import annotations

from strom.table.connectors.base import DynamicTableSink, DynamicTableSource
from strom.table.connectors.factory import create_sink, create_source

__all__ = ["DynamicTableSink", "DynamicTableSource", "create_sink", "create_source"]
