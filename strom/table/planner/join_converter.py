"""Regular joins in FROM (Flink's ``FlinkLogicalJoin``): equi-join keys and the residual condition."""

from __future__ import annotations

from sqlglot import exp

from strom.table.errors import TableException
from strom.table.planner.changelog import is_insert_only
from strom.table.planner.expression_converter import ExpressionConverter
from strom.table.planner.interval_join_util import extract_window_bounds
from strom.table.planner.logical import IntervalJoin, Join, RelNode, RowType
from strom.table.planner.rex import RexInputRef, RexLiteral, RexNode, RexSpecial
from strom.table.planner.scope import Scope
from strom.table.planner.window_lineage import window_columns
from strom.table.sql.parser import at

__all__ = ["convert_join", "physical_join"]


def convert_join(
    left: RelNode, left_scope: Scope, right: RelNode, right_scope: Scope, join: exp.Join
) -> tuple[RelNode, Scope]:
    side = (join.args.get("side") or "").upper()
    kind = (join.args.get("kind") or "").upper()
    if join.args.get("using"):
        raise TableException(f"Unsupported SQL construct{at(join)}: JOIN … USING; expected JOIN … ON a = b")
    on = join.args.get("on")
    if on is None and side:
        raise TableException(f"SQL parse failed{at(join)}: {side} JOIN expects an ON condition")
    join_kind = {"": "INNER", "LEFT": "LEFT", "RIGHT": "RIGHT", "FULL": "FULL"}.get(side)
    if join_kind is None or kind not in ("", "CROSS", "INNER", "OUTER"):
        raise TableException(f"Unsupported SQL construct{at(join)}: {side or kind} JOIN")
    scope = left_scope.join(right_scope)
    n_left = len(left.row_type)
    left_keys: list[int] = []
    right_keys: list[int] = []
    residual: list[RexNode] = []
    # CROSS JOIN and comma joins: no condition — a join keyed on the empty tuple (Flink's single exchange)
    on_conjuncts = _conjuncts(ExpressionConverter(scope).convert(on)) if on is not None else []
    for conjunct in on_conjuncts:
        pair = _equi_pair(conjunct, n_left)
        if isinstance(conjunct, RexLiteral) and conjunct.value is True:  # ON TRUE: no condition
            continue
        if pair is None:
            residual.append(conjunct)
        else:
            left_keys.append(pair[0])
            right_keys.append(pair[1] - n_left)
    rest: RexNode | None = None
    for conjunct in residual:
        rest = conjunct if rest is None else RexSpecial("AND", (rest, conjunct), conjunct.type)
    types = list(left.row_type.types) + list(right.row_type.types)
    if join_kind in ("RIGHT", "FULL"):
        types[:n_left] = [t.nullable() for t in types[:n_left]]
    if join_kind in ("LEFT", "FULL"):
        types[n_left:] = [t.nullable() for t in types[n_left:]]
    names = tuple(f.name for f in scope.fields)
    row_type = RowType(names, tuple(types))
    join_node = Join(row_type, left, right, join_kind, tuple(left_keys), tuple(right_keys), rest)
    fields = [type(f)(f.qualifier, f.name, t) for f, t in zip(scope.fields, types, strict=True)]
    return physical_join(join_node), Scope(fields)


def physical_join(join: Join) -> RelNode:
    """A window join, an interval join, or the regular join itself (Flink's physical join rules, in that order)."""
    left, right, kind = join.left, join.right, join.kind
    windowed = _window_join(
        left, right, kind, list(join.left_keys), list(join.right_keys), join.condition, join.row_type
    )
    if windowed is not None:
        return windowed
    if kind in ("INNER", "LEFT", "RIGHT", "FULL") and is_insert_only(left) and is_insert_only(right):
        return _interval_join(join) or join
    return join


def _interval_join(join: Join) -> RelNode | None:
    """Both rowtimes bounded against each other → an IntervalJoin (Flink's ``StreamPhysicalIntervalJoinRule``)."""
    bounds = extract_window_bounds(
        _conjuncts(join.condition) if join.condition is not None else [], len(join.left.row_type)
    )
    if bounds is None:
        return None
    rest: RexNode | None = None
    for conjunct in bounds.rest:
        rest = conjunct if rest is None else RexSpecial("AND", (rest, conjunct), conjunct.type)
    return IntervalJoin(
        join.row_type,
        join.left,
        join.right,
        join.kind,
        join.left_keys,
        join.right_keys,
        bounds.lower_bound,
        bounds.upper_bound,
        rest,
    )


def _window_join(
    left: RelNode,
    right: RelNode,
    kind: str,
    left_keys: list[int],
    right_keys: list[int],
    rest: RexNode | None,
    row_type: RowType,
) -> RelNode | None:
    """Keys pairing window_start with window_start and window_end with window_end → a WindowJoin (Flink's rule)."""
    from strom.table.planner.logical import WindowJoin

    lw, rw = window_columns(left), window_columns(right)
    pairs = list(zip(left_keys, right_keys, strict=True))
    window_pairs = {name: (lw[name], rw[name]) for name in ("window_start", "window_end") if name in lw and name in rw}
    if len(window_pairs) != 2 or any(pair not in pairs for pair in window_pairs.values()):
        return None
    others = [p for p in pairs if p not in window_pairs.values()]
    return WindowJoin(
        row_type,
        left,
        right,
        kind,
        tuple(a for a, _ in others),
        tuple(b for _, b in others),
        window_pairs["window_end"][0],
        window_pairs["window_end"][1],
        rest,
    )


def _conjuncts(node: RexNode) -> list[RexNode]:
    if isinstance(node, RexSpecial) and node.kind == "AND":
        return [c for o in node.operands for c in _conjuncts(o)]
    return [node]


def _equi_pair(node: RexNode, n_left: int) -> tuple[int, int] | None:
    from strom.table.planner.rex import RexCall

    if not (isinstance(node, RexCall) and node.name == "=" and len(node.operands) == 2):
        return None
    a, b = node.operands
    if not (isinstance(a, RexInputRef) and isinstance(b, RexInputRef)):
        return None
    if a.index < n_left <= b.index:
        return a.index, b.index
    if b.index < n_left <= a.index:
        return b.index, a.index
    return None
