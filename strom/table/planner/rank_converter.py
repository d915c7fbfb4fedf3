"""``ROW_NUMBER() OVER (PARTITION BY … ORDER BY …)`` in a SELECT list (Flink's ``FlinkLogicalRank``)."""

from __future__ import annotations

from sqlglot import exp

from strom.table.errors import TableException
from strom.table.planner.logical import RelNode
from strom.table.planner.scope import Scope
from strom.table.sql.parser import at

__all__ = ["convert_rank", "has_window_function"]


def has_window_function(items: list[exp.Expr]) -> bool:
    return any(i.find(exp.Window) is not None for i in items)


def convert_rank(rel: RelNode, scope: Scope, items: list[exp.Expr]) -> RelNode:
    window = next(w for w in (i.find(exp.Window) for i in items) if w is not None)
    raise TableException(
        f"Unsupported SQL construct{at(window)}: {window.sql()[:60]}; "
        "expected ROW_NUMBER() OVER (PARTITION BY … ORDER BY …) filtered by rn <= N (Top-N) — not yet supported"
    )
