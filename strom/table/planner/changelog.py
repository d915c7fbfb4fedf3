"""Flink's ``FlinkChangelogModeInferenceProgram``: which changes each node of a plan produces.

A node is insert-only (``[I]``) or updating (``[I, UB, UA, D]``): scans of append sources, VALUES, Calcs over
insert-only inputs and UNION ALL of insert-only inputs are insert-only; a group aggregation, a regular join of an
updating input or an outer join, and Top-N produce updates. A sink that only accepts inserts refuses an updating
plan with Flink's message.
"""

from __future__ import annotations

from strom.table.errors import TableException
from strom.table.planner.expand_logical import Expand
from strom.table.planner.logical import (
    Aggregate,
    Calc,
    Correlate,
    DataStreamScan,
    IntervalJoin,
    Join,
    OverAggregate,
    Rank,
    RelNode,
    Sort,
    TableScan,
    Union,
    Values,
    WatermarkAssigner,
    WindowAggregate,
    WindowJoin,
    WindowTableFunction,
)
from strom.table.planner.row_count_window_logical import RowCountWindowAggregate
from strom.table.planner.temporal_logical import LookupJoin, MatchRecognize, TemporalJoin
from strom.table.planner.window_lineage import window_rank_columns

__all__ = ["changelog_mode", "check_sink_accepts", "describe_updating_node", "is_insert_only"]


def is_insert_only(rel: RelNode) -> bool:
    if isinstance(rel, Values):
        return True
    if isinstance(rel, TableScan):
        return bool(getattr(rel.source, "insert_only", True))
    if isinstance(rel, DataStreamScan):
        return not rel.changelog
    if isinstance(rel, OverAggregate):
        return is_insert_only(rel.input)
    if isinstance(rel, TemporalJoin | LookupJoin):
        return is_insert_only(rel.left)
    if isinstance(rel, MatchRecognize | RowCountWindowAggregate):
        return True
    if isinstance(rel, WindowAggregate | WindowJoin | IntervalJoin | Sort):  # Sort: the rows once, sorted
        return True
    if isinstance(rel, Calc | WatermarkAssigner | Correlate | WindowTableFunction | Expand):
        return is_insert_only(rel.input)
    if isinstance(rel, Union):
        return all(is_insert_only(m) for m in rel.members)
    if isinstance(rel, Join):
        return rel.kind in ("INNER", "SEMI") and is_insert_only(rel.left) and is_insert_only(rel.right)
    if isinstance(rel, Rank):
        return window_rank_columns(rel) is not None and rel.offset == 0 and rel.limit < 2**62
    if isinstance(rel, Aggregate):
        return False
    return False


def changelog_mode(rel: RelNode) -> str:
    """``[I]`` or ``[I,UB,UA,D]`` as Flink's explain shows it."""
    return "[I]" if is_insert_only(rel) else "[I,UB,UA,D]"


def describe_updating_node(rel: RelNode) -> str:
    """The node that first makes the plan updating, as Flink names it in its refusal."""
    for child in rel.inputs:
        if not is_insert_only(child):
            return describe_updating_node(child)
    if isinstance(rel, Aggregate):
        keys = ", ".join(rel.input.row_type.names[k] for k in rel.group_keys)
        names = rel.input.row_type.names
        calls = ", ".join(
            f"{c.name}({'DISTINCT ' if c.distinct else ''}{', '.join(names[a] for a in c.args) or '*'}) AS {n}"
            for c, n in zip(rel.calls, rel.row_type.names[len(rel.group_keys) :], strict=True)
        )
        return f"GroupAggregate(groupBy=[{keys}], select=[{', '.join([keys, calls]) if keys else calls}])"
    return f"{type(rel).__name__}"


def check_sink_accepts(rel: RelNode, sink_name: str, accepts_updates: bool) -> None:
    if accepts_updates or is_insert_only(rel):
        return
    raise TableException(
        f"Table sink '{sink_name}' doesn't support consuming update changes which is produced by node "
        f"{describe_updating_node(rel)}"
    )
