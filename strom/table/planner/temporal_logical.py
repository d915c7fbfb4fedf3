"""The logical nodes of temporal joins and ``MATCH_RECOGNIZE`` (Flink's ``FlinkLogicalJoin`` over a
``FOR SYSTEM_TIME AS OF`` snapshot — planned as ``StreamPhysicalTemporalJoin`` or ``StreamPhysicalLookupJoin`` —
and ``FlinkLogicalMatch``). Members of :data:`strom.table.planner.logical.RelNode`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from strom.table.planner.logical import RelNode, RowType
    from strom.table.planner.rex import RexNode

__all__ = ["LookupJoin", "MatchRecognize", "TemporalJoin"]


@dataclass(frozen=True, slots=True, eq=False)
class TemporalJoin:
    """An event-time temporal join: each left row joins the version of ``right`` (a versioned table: primary key
    ``right_keys`` ⊇ its key, rowtime ``right_rowtime``) valid at the left row's ``left_rowtime``. ``kind``: INNER
    or LEFT; ``condition`` the residual predicate over ``left ++ right``."""

    row_type: RowType
    left: RelNode
    right: RelNode
    kind: str
    left_keys: tuple[int, ...]
    right_keys: tuple[int, ...]
    left_rowtime: int
    right_rowtime: int
    condition: RexNode | None = None

    @property
    def inputs(self) -> tuple[RelNode, ...]:
        return (self.left, self.right)


@dataclass(frozen=True, slots=True, eq=False)
class LookupJoin:
    """A processing-time temporal join against a lookup source (Flink's ``StreamPhysicalLookupJoin``): each left row
    looks up the rows of ``table`` whose ``lookup_keys`` columns equal its ``left_keys`` values, when it arrives."""

    row_type: RowType
    left: RelNode
    table_name: str
    source: Any = field(repr=False)  # strom.table.connectors.lookup.LookupTableSource
    table_row_type: RowType | None = None
    kind: str = "INNER"
    left_keys: tuple[int, ...] = ()
    lookup_keys: tuple[int, ...] = ()
    condition: RexNode | None = None

    @property
    def inputs(self) -> tuple[RelNode, ...]:
        return (self.left,)


@dataclass(frozen=True, slots=True, eq=False)
class MatchRecognize:
    """``MATCH_RECOGNIZE``: rows of ``input`` partitioned by ``partition_keys``, ordered by ``rowtime_index``, matched
    against ``spec`` (a :class:`strom.table.runtime.match.match_spec.MatchSpec`: pattern, DEFINE, MEASURES,
    AFTER MATCH, WITHIN); output: the partition columns, then the measures (ONE ROW PER MATCH)."""

    row_type: RowType
    input: RelNode
    partition_keys: tuple[int, ...]
    rowtime_index: int
    spec: Any = field(repr=False)

    @property
    def inputs(self) -> tuple[RelNode, ...]:
        return (self.input,)
