"""Which columns of a plan are a window's ``window_start`` / ``window_end`` (Flink's ``WindowUtil`` /
``getWindowProperties``): traced from a window TVF or a window aggregation through projections, for the rules that
plan window joins and window Top-N."""

from __future__ import annotations

from strom.table.planner.logical import Calc, Rank, RelNode, WindowAggregate, WindowTableFunction
from strom.table.planner.rex import RexInputRef
from strom.table.planner.window_converter import WINDOW_COLUMNS

__all__ = ["is_window_deduplicate", "window_columns", "window_rank_columns"]


def window_columns(rel: RelNode) -> dict[str, int]:
    """Which columns of ``rel`` are a window TVF's window_start / window_end (traced through projections)."""
    if isinstance(rel, WindowTableFunction):
        width = len(rel.input.row_type)
        return {name: width + i for i, name in enumerate(WINDOW_COLUMNS)}
    if isinstance(rel, WindowAggregate):
        offset = len(rel.group_keys) + len(rel.calls)
        return {name: offset + i for i, name in enumerate(rel.window_properties)}
    if isinstance(rel, Calc):
        below = window_columns(rel.input)
        if rel.projection is None:
            return below
        found: dict[str, int] = {}
        for i, p in enumerate(rel.projection):
            for name, index in below.items():
                if isinstance(p, RexInputRef) and p.index == index:
                    found.setdefault(name, i)
        return found
    return {}


def window_rank_columns(rank: Rank) -> tuple[tuple[int, ...], int] | None:
    """For a Rank partitioned by window_start and window_end of a windowed input (Flink's WindowRank): the other
    partition keys and the window_end column; else None."""
    windows = window_columns(rank.input)
    start, end = windows.get("window_start"), windows.get("window_end")
    if start is None or end is None or start not in rank.partition_keys or end not in rank.partition_keys:
        return None
    return tuple(k for k in rank.partition_keys if k not in (start, end)), end


def is_window_deduplicate(rank: Rank) -> bool:
    """A window Rank keeping one row by the time attribute (Flink's ``WindowDeduplicate``: ``ROW_NUMBER() OVER
    (PARTITION BY window_start, window_end, … ORDER BY rowtime ASC|DESC) … WHERE rn = 1``)."""
    if rank.limit != 1 or rank.offset != 0 or len(rank.order_keys) != 1:
        return False
    column = rank.order_keys[0][0]
    return "ROWTIME" in str(rank.input.row_type.types[column])
