"""The ``print`` table connector (Flink's ``PrintTableSinkFactory``): each change as ``+I[alice, 1]`` on stdout.

``print-identifier`` prefixes the lines (``id> `` at parallelism 1, ``id:2> `` for subtask 2 of several; without it,
``2> `` at parallelism > 1), ``standard-error`` prints to stderr. It accepts updates (it prints the row kind).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from strom.api.functions import RuntimeContext, SinkFunction
from strom.table.connectors.base import DynamicTableSink, check_options
from strom.table.value_format import row_to_string

if TYPE_CHECKING:
    from strom.api.datastream import DataStream
    from strom.table.catalog.catalog_manager import CatalogTable
    from strom.table.planner.logical import RowType

__all__ = ["PrintTableSink"]


class _PrintSinkFunction(SinkFunction[Any]):
    def __init__(self, identifier: str | None, stderr: bool, types: tuple[Any, ...]) -> None:
        self.identifier = identifier
        self.stderr = stderr
        self.types = types
        self.prefix = ""

    def open(self, runtime_context: RuntimeContext) -> None:
        parallelism = runtime_context.get_number_of_parallel_subtasks()
        subtask = runtime_context.get_index_of_this_subtask() + 1
        if self.identifier:
            self.prefix = f"{self.identifier}:{subtask}> " if parallelism > 1 else f"{self.identifier}> "
        else:
            self.prefix = f"{subtask}> " if parallelism > 1 else ""

    def invoke(self, value: Any, context: Any) -> None:
        stream = sys.stderr if self.stderr else sys.stdout
        stream.write(f"{self.prefix}{row_to_string(value, self.types)}\n")
        stream.flush()


class PrintTableSink(DynamicTableSink):
    accepts_updates = True

    def __init__(self, identifier: str | None, stderr: bool, parallelism: int | None) -> None:
        self.identifier = identifier
        self.stderr = stderr
        self.parallelism = parallelism

    @classmethod
    def create(cls, name: str, table: CatalogTable, row_type: RowType) -> PrintTableSink:
        options = table.options
        check_options(name, "print", options, {"print-identifier", "standard-error", "sink.parallelism"})
        parallelism = int(options["sink.parallelism"]) if "sink.parallelism" in options else None
        stderr = options.get("standard-error", "false").lower() == "true"
        return cls(options.get("print-identifier"), stderr, parallelism)

    def consume(self, stream: DataStream[Any], row_type: RowType) -> None:
        sink = stream.add_sink(_PrintSinkFunction(self.identifier, self.stderr, row_type.types)).name("Sink: print")
        if self.parallelism is not None:
            sink.set_parallelism(self.parallelism)
