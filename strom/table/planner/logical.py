"""The logical plan (Calcite's ``RelNode`` tree as Flink's planner sees it after optimisation).

Each node has its output :class:`RowType` (field names and SQL types). The translator walks this tree bottom-up
into DataStream operators; :mod:`strom.table.planner.changelog` infers each node's changelog mode.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from strom.table.planner.expand_logical import Expand, explain_expand
from strom.table.planner.rex import RexNode
from strom.table.planner.row_count_window_logical import RowCountWindowAggregate
from strom.table.planner.temporal_logical import LookupJoin, MatchRecognize, TemporalJoin, explain_details
from strom.table.types import DataType

__all__ = [
    "Aggregate",
    "AggregateCall",
    "Calc",
    "Correlate",
    "DataStreamScan",
    "Join",
    "OverAggregate",
    "Rank",
    "RelNode",
    "RowType",
    "SingleRel",
    "Sort",
    "TableScan",
    "Union",
    "Values",
    "WatermarkAssigner",
    "WindowJoin",
    "explain",
]


@dataclass(frozen=True, slots=True)
class RowType:
    """The fields of a relation: names and types, in order."""

    names: tuple[str, ...]
    types: tuple[DataType, ...]

    def index_of(self, name: str) -> int | None:
        try:
            return self.names.index(name)
        except ValueError:
            lowered = [n.lower() for n in self.names]
            return lowered.index(name.lower()) if lowered.count(name.lower()) == 1 else None

    def __len__(self) -> int:
        return len(self.names)

    def describe(self) -> str:
        return ", ".join(f"{n} {t}" for n, t in zip(self.names, self.types, strict=True))


class SingleRel:
    """Calcite's ``SingleRel``: a node with one input, so ``inputs`` is ``(input,)`` (``input`` is a dataclass
    field of each subclass)."""

    __slots__ = ()
    input: RelNode

    @property
    def inputs(self) -> tuple[RelNode, ...]:
        return (self.input,)


@dataclass(frozen=True, slots=True, eq=False)
class TableScan:
    """A catalog table read by its connector (``source`` builds the DataStream)."""

    row_type: RowType
    table_name: str
    source: Any = field(repr=False)  # strom.table.connectors.DynamicTableSource

    @property
    def inputs(self) -> tuple[RelNode, ...]:
        return ()


@dataclass(frozen=True, slots=True, eq=False)
class DataStreamScan:
    """A DataStream turned into a table (``from_data_stream``): rows as they arrive, insert-only or a changelog."""

    row_type: RowType
    stream: Any = field(repr=False)
    changelog: bool = False

    @property
    def inputs(self) -> tuple[RelNode, ...]:
        return ()


@dataclass(frozen=True, slots=True, eq=False)
class Values:
    """Literal rows (``VALUES``, ``from_elements``)."""

    row_type: RowType
    rows: tuple[tuple[Any, ...], ...]

    @property
    def inputs(self) -> tuple[RelNode, ...]:
        return ()


@dataclass(frozen=True, slots=True, eq=False)
class Calc(SingleRel):
    """A projection and an optional filter (Flink merges Project and Filter into one Calc)."""

    row_type: RowType
    input: RelNode
    projection: tuple[RexNode, ...] | None
    condition: RexNode | None = None


@dataclass(frozen=True, slots=True)
class AggregateCall:
    """``name([DISTINCT] args) [FILTER (WHERE filter_arg)]`` over input columns."""

    name: str
    args: tuple[int, ...]
    distinct: bool
    result_type: DataType
    filter_arg: int | None = None


@dataclass(frozen=True, slots=True, eq=False)
class Aggregate(SingleRel):
    """``GROUP BY`` keys (input columns) and aggregate calls; output = keys then calls."""

    row_type: RowType
    input: RelNode
    group_keys: tuple[int, ...]
    calls: tuple[AggregateCall, ...]


@dataclass(frozen=True, slots=True, eq=False)
class Union:
    """``UNION ALL`` of inputs with the same row type."""

    row_type: RowType
    members: tuple[RelNode, ...]

    @property
    def inputs(self) -> tuple[RelNode, ...]:
        return self.members


@dataclass(frozen=True, slots=True, eq=False)
class Join:
    """A regular join: ``kind`` INNER/LEFT/RIGHT/FULL (SEMI/ANTI) on equi-keys plus a residual condition over
    left ++ right. ``null_safe``: the keys compare NULL equal to NULL (``IS NOT DISTINCT FROM``, Flink's
    ``filterNulls`` false: INTERSECT / EXCEPT); otherwise SQL's ``=``, a row with a NULL key matches nothing."""

    row_type: RowType
    left: RelNode
    right: RelNode
    kind: str
    left_keys: tuple[int, ...]
    right_keys: tuple[int, ...]
    condition: RexNode | None = None
    null_safe: bool = False

    @property
    def inputs(self) -> tuple[RelNode, ...]:
        return (self.left, self.right)


@dataclass(frozen=True, slots=True, eq=False)
class Rank(SingleRel):
    """``ROW_NUMBER() OVER (PARTITION BY … ORDER BY …)`` kept where ``rn <= limit`` (Top-N, deduplication)."""

    row_type: RowType
    input: RelNode
    partition_keys: tuple[int, ...]
    order_keys: tuple[tuple[int, bool], ...]  # (column, ascending)
    limit: int
    output_rank: bool
    offset: int = 0  # rows before rank offset + 1 are not emitted (LIMIT … OFFSET)
    rank_type: str = "ROW_NUMBER"  # or RANK / DENSE_RANK (BATCH only, as Flink)
    nulls_first: tuple[bool, ...] = ()  # per order key; empty: first for ASC, last for DESC (Flink's default)


@dataclass(frozen=True, slots=True, eq=False)
class Sort(SingleRel):
    """``ORDER BY keys [OFFSET m] [FETCH n]`` (Calcite's ``Sort``): in BATCH the whole input sorted (Flink's
    Sort / SortLimit); in STREAMING, with ``rowtime`` set, the temporal sort on an ascending time attribute first."""

    row_type: RowType
    input: RelNode
    order_keys: tuple[tuple[int, bool], ...]  # (column, ascending)
    offset: int = 0
    fetch: int | None = None
    rowtime: bool = False
    nulls_first: tuple[bool, ...] = ()  # per order key; empty: first for ASC, last for DESC (Flink's default)


@dataclass(frozen=True, slots=True, eq=False)
class WatermarkAssigner(SingleRel):
    """``WATERMARK FOR rowtime AS expression``: record timestamps and watermarks (row type: rowtime marked)."""

    row_type: RowType
    input: RelNode
    rowtime_index: int
    expression: RexNode


@dataclass(frozen=True, slots=True, eq=False)
class Correlate(SingleRel):
    """A Python table function applied to each row (``Table.flat_map``): its rows replace the input row."""

    row_type: RowType
    input: RelNode
    function: Any = field(repr=False)


@dataclass(frozen=True, slots=True, eq=False)
class WindowTableFunction(SingleRel):
    """TUMBLE / HOP / CUMULATE / SESSION over ``input``: its rows with their windows appended."""

    row_type: RowType
    input: RelNode
    kind: str
    params: tuple[int, ...]  # milliseconds: (size,) / (slide, size) / (step, size), then the offset; SESSION: (gap,)
    rowtime_index: int
    partition_keys: tuple[int, ...] = ()  # SESSION's PARTITION BY columns of the input
    group_window: bool = False  # a legacy group window (GROUP BY HOP(...), Table API Slide): any size and slide

    def assigner(self) -> Any:
        from strom.table.runtime.window.slice_assigners import (
            CumulativeSliceAssigner,
            HoppingSliceAssigner,
            TumblingSliceAssigner,
        )

        *sizes, offset = self.params
        if self.kind == "TUMBLE":
            return TumblingSliceAssigner(sizes[0], offset)
        if self.kind == "HOP":
            return HoppingSliceAssigner(sizes[1], sizes[0], offset)
        return CumulativeSliceAssigner(sizes[1], sizes[0], offset)


@dataclass(frozen=True, slots=True, eq=False)
class WindowAggregate(SingleRel):
    """GROUP BY window_start, window_end, keys over a window TVF: output keys, aggregates, window properties."""

    row_type: RowType
    input: RelNode  # rows of the TVF's input, projected to keys and aggregate arguments
    window: WindowTableFunction = field(repr=False)
    group_keys: tuple[int, ...]
    calls: tuple[AggregateCall, ...]
    window_properties: tuple[str, ...]


@dataclass(frozen=True, slots=True, eq=False)
class OverAggregate(SingleRel):
    """``agg(...) OVER (PARTITION BY keys ORDER BY rowtime ROWS|RANGE … PRECEDING)``: the input row plus the values."""

    row_type: RowType
    input: RelNode
    partition_keys: tuple[int, ...]
    calls: tuple[AggregateCall, ...]
    rows: bool
    preceding: int | None  # rows, or milliseconds for RANGE; None: UNBOUNDED PRECEDING
    rowtime_index: int


@dataclass(frozen=True, slots=True, eq=False)
class WindowJoin:
    """A join of two windowed inputs on window_start, window_end and keys: joined at the window's end (insert-only)."""

    row_type: RowType
    left: RelNode
    right: RelNode
    kind: str
    left_keys: tuple[int, ...]
    right_keys: tuple[int, ...]
    left_window_end: int
    right_window_end: int
    condition: RexNode | None = None

    @property
    def inputs(self) -> tuple[RelNode, ...]:
        return (self.left, self.right)


@dataclass(frozen=True, slots=True, eq=False)
class IntervalJoin:
    """An event-time interval join (Flink's ``StreamPhysicalIntervalJoin``): equi-keys and
    ``left.rowtime BETWEEN right.rowtime + lower_bound AND right.rowtime + upper_bound`` (ms); insert-only, the
    outer sides padded once the watermark passes a row's bound."""

    row_type: RowType
    left: RelNode
    right: RelNode
    kind: str
    left_keys: tuple[int, ...]
    right_keys: tuple[int, ...]
    lower_bound: int
    upper_bound: int
    condition: RexNode | None = None

    @property
    def inputs(self) -> tuple[RelNode, ...]:
        return (self.left, self.right)


RelNode = (
    TemporalJoin
    | Expand
    | RowCountWindowAggregate
    | LookupJoin
    | MatchRecognize
    | WindowJoin
    | IntervalJoin
    | OverAggregate
    | Correlate
    | TableScan
    | DataStreamScan
    | Values
    | Calc
    | Aggregate
    | Union
    | Join
    | Rank
    | Sort
    | WatermarkAssigner
    | WindowTableFunction
    | WindowAggregate
)


def explain(node: RelNode, indent: int = 0) -> str:
    """Flink's ``explain()`` tree form of a plan."""
    name = type(node).__name__
    details: list[str] = []
    if isinstance(node, TableScan):
        details.append(f"table=[[{node.table_name}]], fields=[{', '.join(node.row_type.names)}]")
    elif isinstance(node, Calc):
        details.append(f"select=[{', '.join(node.row_type.names)}]")
        if node.condition is not None:
            details.append("where=[...]")
    elif isinstance(node, Aggregate):
        keys = ", ".join(node.input.row_type.names[k] for k in node.group_keys)
        details.append(f"groupBy=[{keys}], select=[{', '.join(node.row_type.names)}]")
    elif isinstance(node, Join):
        details.append(f"joinType=[{node.kind}]")
    elif isinstance(node, IntervalJoin):
        details.append(
            f"joinType=[{node.kind}], windowBounds=[isRowTime=true, leftLowerBound={node.lower_bound}, "
            f"leftUpperBound={node.upper_bound}]"
        )
    elif isinstance(node, Values):
        details.append(f"tuples={len(node.rows)}")
    elif isinstance(node, Expand):
        details.append(explain_expand(node))
    elif isinstance(node, TemporalJoin | LookupJoin | MatchRecognize):
        details.extend(explain_details(node))
    elif isinstance(node, Sort):
        names = node.input.row_type.names
        keys = ", ".join(f"{names[c]} {'ASC' if a else 'DESC'}" for c, a in node.order_keys)
        details.append(f"orderBy=[{keys}]" + (f", offset={node.offset}, fetch={node.fetch}" if node.fetch else ""))
    if isinstance(node, Sort) and node.rowtime:
        name = "TemporalSort"
    text = " " * indent + ("+- " if indent else "") + f"{name}({', '.join(details)})"
    children: Sequence[RelNode] = node.inputs
    return "\n".join([text, *(explain(child, indent + 3) for child in children)])
