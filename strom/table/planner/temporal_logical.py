"""The logical nodes of temporal joins and ``MATCH_RECOGNIZE`` (Flink's ``FlinkLogicalJoin`` over a
``FOR SYSTEM_TIME AS OF`` snapshot — planned as ``StreamPhysicalTemporalJoin`` or ``StreamPhysicalLookupJoin`` —
and ``FlinkLogicalMatch``). Members of :data:`strom.table.planner.logical.RelNode`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from strom.table.planner.logical import RelNode, RowType
    from strom.table.planner.rex import RexNode

__all__ = ["LookupJoin", "MatchRecognize", "TemporalJoin", "explain_details"]


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


def _pairs(left: RowType, left_keys: tuple[int, ...], right: RowType, right_keys: tuple[int, ...]) -> str:
    return ", ".join(f"{left.names[a]}={right.names[b]}" for a, b in zip(left_keys, right_keys, strict=True))


def _quantifier(element: Any) -> str:
    bounds = {(1, 1): "", (0, None): "*", (1, None): "+", (0, 1): "?"}.get((element.min, element.max))
    if bounds is None:
        bounds = f"{{{element.min},{'' if element.max is None else element.max}}}"
        bounds = f"{{{element.min}}}" if element.min == element.max else bounds
    return bounds + ("" if element.greedy or not bounds else "?")


def explain_details(node: TemporalJoin | LookupJoin | MatchRecognize) -> list[str]:
    """The ``explain()`` details of these nodes, in the form of the other nodes' (Flink's attribute names)."""
    if isinstance(node, TemporalJoin):
        left, right = node.left.row_type, node.right.row_type
        times = f"leftTimeAttribute=[{left.names[node.left_rowtime]}], "
        times += f"rightTimeAttribute=[{right.names[node.right_rowtime]}]"
        return [
            f"joinType=[{node.kind}], on=[{_pairs(left, node.left_keys, right, node.right_keys)}], {times}"
            + (", where=[...]" if node.condition is not None else "")
        ]
    if isinstance(node, LookupJoin):
        table = node.table_row_type
        lookup = (
            ", ".join(
                f"{table.names[t]}={node.left.row_type.names[k]}"
                for t, k in zip(node.lookup_keys, node.left_keys, strict=True)
            )
            if table is not None
            else ""
        )
        return [
            f"table=[[{node.table_name}]], joinType=[{node.kind}], lookup=[{lookup}]"
            + (", where=[...]" if node.condition is not None else "")
        ]
    names = node.input.row_type.names
    spec = node.spec
    pattern = " ".join(f"{e.name}{_quantifier(e)}" for e in spec.elements)
    variable = spec.skip.variable
    skip = spec.skip.kind.replace("_", " ") + ("" if variable is None else f" {spec.elements[variable].name}")
    return [
        f"partitionBy=[{', '.join(names[k] for k in node.partition_keys)}], orderBy=[{names[node.rowtime_index]} ASC], "
        f"measures=[{', '.join(node.row_type.names[len(node.partition_keys) :])}], rowsPerMatch=[ONE ROW PER MATCH], "
        f"after=[SKIP {skip}], pattern=[{pattern}]" + ("" if spec.within is None else f", within=[{spec.within}ms]")
    ]
