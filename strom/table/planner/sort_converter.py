"""``ORDER BY … [LIMIT n] [OFFSET m]`` (Calcite's ``Sort``, Flink's ``FlinkLogicalSort`` and its physical rules).

- BATCH: a :class:`~strom.table.planner.logical.Sort` of the whole input (Flink's Sort / SortLimit).
- STREAMING with ``LIMIT``: Top-N over one partition (Flink's ``StreamPhysicalSortLimit`` is a Rank without the
  rank number): rows entering and leaving the top N, or per position updates with an OFFSET, as Flink.
- STREAMING without ``LIMIT``: only the temporal sort — an ascending time attribute first, then any keys — as Flink's
  ``StreamPhysicalTemporalSort``; any other order is refused with Flink's reason.

``sort`` is the planner piece the Table API's ``order_by`` / ``offset`` / ``fetch`` call with resolved keys.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlglot import exp

from strom.table.errors import TableException, ValidationException
from strom.table.planner.changelog import is_insert_only
from strom.table.planner.logical import Calc, Rank, RelNode, RowType, Sort
from strom.table.planner.rex import RexInputRef
from strom.table.sql.flink_dialect import FlinkDialect
from strom.table.sql.parser import at
from strom.table.types import parse_type

__all__ = ["convert_order_by", "hide_order_items", "order_keys", "sort", "without_sort"]

NON_TIME_SORT = "Sort on a non-time-attribute field is not supported."
_HIDDEN = "strom_order_column"  # meta of an ORDER BY item sorted on a hidden column


def convert_order_by(rel: RelNode, order: exp.Order, offset: int, fetch: int | None, *, streaming: bool) -> RelNode:
    """The SELECT's output ``rel`` ordered by the ORDER BY items (output columns, by name or ordinal); the hidden
    ``$order<i>`` columns of :func:`hide_order_items` are projected away after the sort."""
    keys = order_keys(rel.row_type, order)
    nulls = tuple(bool(item.args.get("nulls_first")) for item in order.expressions)
    sorted_rel = sort(rel, keys, offset, fetch, streaming=streaming, where=order, nulls_first=nulls)
    visible = [i for i, n in enumerate(rel.row_type.names) if not n.startswith("$order")]
    if len(visible) == len(rel.row_type):
        return sorted_rel
    types = tuple(rel.row_type.types[i] for i in visible)
    projection = tuple(RexInputRef(i, rel.row_type.types[i]) for i in visible)
    return Calc(RowType(tuple(rel.row_type.names[i] for i in visible), types), sorted_rel, projection, None)


def without_sort(query: exp.Expr) -> exp.Expr:
    """A subquery in FROM without its ORDER BY when it has no LIMIT / OFFSET: Calcite drops such a sort (its order
    means nothing to the outer query), so Flink runs ``SELECT … FROM (SELECT … ORDER BY x)`` in STREAMING too."""
    if query.args.get("order") is None or query.args.get("limit") is not None or query.args.get("offset") is not None:
        return query
    stripped = query.copy()
    stripped.set("order", None)
    return stripped


def hide_order_items(select: exp.Select, names: Sequence[str]) -> list[exp.Expr]:
    """ORDER BY items that are not in the SELECT list (Calcite sorts on them as extra columns): each such item's
    expression, to project as ``$order<i>``; the item (its meta) then names that column."""
    order = select.args.get("order")
    if order is None or select.args.get("distinct") is not None:
        return []
    lowered = {n.lower() for n in names}
    hidden: list[exp.Expr] = []
    for item in order.expressions:
        node = item.this if isinstance(item, exp.Ordered) else item
        if isinstance(node, exp.Literal) or (isinstance(node, exp.Column) and node.name.lower() in lowered):
            continue
        hidden.append(node.copy())
        item.meta[_HIDDEN] = f"$order{len(hidden) - 1}"  # the ORDER BY keeps its text and position for errors
    return hidden


def order_keys(row_type: RowType, order: exp.Order) -> tuple[tuple[int, bool], ...]:
    keys = []
    for item in order.expressions:
        node = item.this if isinstance(item, exp.Ordered) else item
        ascending = not (isinstance(item, exp.Ordered) and item.args.get("desc"))
        hidden = item.meta.get(_HIDDEN)
        index = row_type.index_of(hidden) if hidden is not None else _column(row_type, node)
        assert index is not None
        keys.append((index, ascending))
    return tuple(keys)


def _column(row_type: RowType, node: exp.Expr) -> int:
    if isinstance(node, exp.Literal) and not node.is_string and node.this.isdigit():
        ordinal = int(node.this)
        if 1 <= ordinal <= len(row_type):
            return ordinal - 1
        raise ValidationException(
            f"SQL validation failed{at(node)}: ORDER BY ordinal {ordinal}; expected 1 .. {len(row_type)}"
        )
    index = row_type.index_of(node.name) if isinstance(node, exp.Column) else None
    if index is None:
        raise TableException(
            f"Unsupported SQL construct{at(node)}: ORDER BY {node.sql()}; expected a column of the SELECT list "
            f"({', '.join(row_type.names)}) or its ordinal; hint: select the expression AS a column"
        )
    return index


def sort(
    rel: RelNode,
    keys: tuple[tuple[int, bool], ...],
    offset: int = 0,
    fetch: int | None = None,
    *,
    streaming: bool,
    where: exp.Expr | None = None,
    nulls_first: tuple[bool, ...] = (),
) -> RelNode:
    """``rel`` sorted by ``keys`` ((column, ascending)), rows ``offset + 1 .. offset + fetch`` kept; NULLs first
    per key where ``nulls_first`` says (empty: Flink's default, first for ASC)."""
    if not streaming:
        return Sort(rel.row_type, rel, keys, offset, fetch, nulls_first=nulls_first)
    if fetch is not None:
        return _top_n(rel, keys, offset, fetch, nulls_first)
    first, ascending = keys[0] if keys else (None, False)
    if first is None or not ascending or "ROWTIME" not in str(rel.row_type.types[first]):
        order = (
            where.sql(dialect=FlinkDialect)
            if where is not None
            else "ORDER BY " + ", ".join(f"{rel.row_type.names[c]}{'' if a else ' DESC'}" for c, a in keys)
        )
        raise TableException(
            f"Unsupported SQL construct{at(where)}: {order.strip()} in a streaming query; {NON_TIME_SORT} "
            "Expected an ascending time attribute first, or ORDER BY … LIMIT n (Top-N)"
        )
    if offset:
        raise TableException(f"Unsupported SQL construct{at(where)}: OFFSET without LIMIT in a streaming query")
    if not is_insert_only(rel):
        raise TableException(
            f"Unsupported SQL construct{at(where)}: ORDER BY {rel.row_type.names[first]} over an updating input; "
            "expected an insert-only input (the temporal sort consumes inserts only, as Flink's)"
        )
    return Sort(rel.row_type, rel, keys[1:], 0, None, rowtime=True, nulls_first=nulls_first[1:])


def _top_n(
    rel: RelNode, keys: tuple[tuple[int, bool], ...], offset: int, fetch: int, nulls_first: tuple[bool, ...]
) -> RelNode:
    rn_type = parse_type("BIGINT NOT NULL")
    rank_type = RowType((*rel.row_type.names, "$rn"), (*rel.row_type.types, rn_type))
    rank = Rank(rank_type, rel, (), keys, offset + fetch, False, offset, nulls_first=nulls_first)
    projection = tuple(RexInputRef(i, t) for i, t in enumerate(rel.row_type.types))
    return Calc(rel.row_type, rank, projection, None)
