"""The plan node of a row-count group window (Flink's ``StreamPhysicalGroupWindowAggregate`` over a
``TumblingGroupWindow`` / ``SlidingGroupWindow`` of a row interval on a processing-time attribute)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from strom.table.planner.logical import AggregateCall, RelNode, RowType

__all__ = ["RowCountWindowAggregate"]


@dataclass(frozen=True, slots=True, eq=False)
class RowCountWindowAggregate:
    """Per group key, every ``slide`` rows (once ``size`` rows arrived) the aggregates of its last ``size`` rows:
    output keys then calls, insert-only. ``size == slide``: tumbling windows."""

    row_type: RowType
    input: RelNode
    group_keys: tuple[int, ...]
    calls: tuple[AggregateCall, ...]
    size: int
    slide: int

    @property
    def inputs(self) -> tuple[RelNode, ...]:
        return (self.input,)
