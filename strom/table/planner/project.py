"""Flink's ``RelBuilder.project``: projections (merged into the Calc below when it only filters) and the names of
SELECT items (the alias, the column name, else ``EXPR$<position>``)."""

from __future__ import annotations

from sqlglot import exp

from strom.table.planner.logical import Calc, RelNode, RowType, Values
from strom.table.planner.rex import RexInputRef, RexNode

__all__ = ["output_names", "project", "rename"]


def output_names(items: list[exp.Expr]) -> tuple[str, ...]:
    """Flink's names of SELECT items: the alias, the column name, else ``EXPR$<position>``."""
    names: list[str] = []
    for i, item in enumerate(items):
        if isinstance(item, exp.Alias):
            names.append(item.alias)
        elif isinstance(item, exp.Column):
            names.append(item.name)
        else:
            names.append(f"EXPR${i}")
    return _dedupe(names)


def _dedupe(names: list[str]) -> tuple[str, ...]:
    seen: dict[str, int] = {}
    result = []
    for name in names:
        if name in seen:
            seen[name] += 1
            result.append(f"{name}{seen[name] - 1}")
        else:
            seen[name] = 0
            result.append(name)
    return tuple(result)


def project(rel: RelNode, projection: tuple[RexNode, ...], names: tuple[str, ...]) -> RelNode:
    row_type = RowType(names, tuple(p.type for p in projection))
    identity = len(projection) == len(rel.row_type) and all(
        isinstance(p, RexInputRef) and p.index == i for i, p in enumerate(projection)
    )
    if isinstance(rel, Calc) and rel.projection is None:  # merge with the filter below: one Calc
        if identity:
            return Calc(row_type, rel.input, None, rel.condition)
        return Calc(row_type, rel.input, projection, rel.condition)
    if identity:
        return rename(rel, list(names)) if names != rel.row_type.names else rel
    return Calc(row_type, rel, projection, None)


def rename(rel: RelNode, names: list[str]) -> RelNode:
    row_type = RowType(tuple(names), rel.row_type.types)
    if isinstance(rel, Calc):
        return Calc(row_type, rel.input, rel.projection, rel.condition)
    if isinstance(rel, Values):
        return Values(row_type, rel.rows)
    projection = tuple(RexInputRef(i, t) for i, t in enumerate(rel.row_type.types))
    return Calc(row_type, rel, projection, None)
