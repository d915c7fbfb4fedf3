"""The plan node of Flink's ``Expand`` (``StreamPhysicalExpand`` / ``BatchPhysicalExpand``): each input row once per
grouping set, for the aggregate of GROUPING SETS / ROLLUP / CUBE (planner/grouping_sets.py plans it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from strom.table.planner.logical import RelNode, RowType

__all__ = ["Expand"]


@dataclass(frozen=True, slots=True, eq=False)
class Expand:
    """Output = the input's columns, then the grouping keys (NULL where not in the set), then the set's constants
    (its expand id ``$e``); one output row per set and input row, in the sets' order."""

    row_type: RowType
    input: RelNode
    keys: tuple[int, ...]  # input columns of the grouping keys
    sets: tuple[frozenset[int], ...]  # per set: the positions in ``keys`` it groups by
    constants: tuple[tuple[int, ...], ...]  # per set: its expand id $e

    @property
    def inputs(self) -> tuple[RelNode, ...]:
        return (self.input,)
