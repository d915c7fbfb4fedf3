"""PyFlink's ``from_elements`` source: the rows as one input split at the job's parallelism (Flink's input-format
source over PyFlink's serialized elements), read by one subtask, so the operators after it chain to it and the rows
keep their order — PyFlink 2.3 printed every such row from subtask ``2>`` at parallelism 2, and strom's last subtask
reads the split too. SQL ``VALUES`` stays a non-parallel source (Flink's ``Values`` node runs at parallelism 1).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from strom.api.row import Row, _create_row
from strom.api.source import SourceSplit
from strom.connectors.collection import CollectionSource

if TYPE_CHECKING:
    from strom.api.datastream import DataStream
    from strom.api.environment import StreamExecutionEnvironment
    from strom.table.planner.logical import RowType

__all__ = ["ElementsTableSource", "ValuesSource"]


class ValuesSource(CollectionSource[Row]):
    """The rows as one split of a parallel source, assigned to the last subtask (the others get an empty split)."""

    parallel = True

    def create_splits(self, parallelism: int) -> list[SourceSplit]:
        done = len(self.elements)
        return [
            SourceSplit(split_id=f"elements-{i}", payload=0 if i == parallelism - 1 else done)
            for i in range(parallelism)
        ]


class ElementsTableSource:
    """The table source of ``TableEnvironment.from_elements`` (insert-only)."""

    insert_only = True

    def __init__(self, rows: Sequence[tuple[Any, ...]]) -> None:
        self.rows = tuple(rows)

    def create_stream(self, env: StreamExecutionEnvironment, row_type: RowType) -> DataStream[Any]:
        rows = [_create_row(None, list(r)) for r in self.rows]
        return env.from_source(ValuesSource(rows), source_name="*anonymous_python-input-format*")
