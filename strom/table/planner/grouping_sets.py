"""``GROUP BY GROUPING SETS / ROLLUP / CUBE`` and ``GROUPING()`` / ``GROUPING_ID()`` as Flink plans them: Calcite's
grouping sets (each a set of the grouping keys, ordered by ``ImmutableBitSet.COMPARATOR``: enclosing sets first,
then by their lowest keys) → an ``Expand`` (Flink's ``StreamPhysicalExpand``: each input row once per grouping set,
the keys not in the set NULL, plus the expand id ``$e`` of ``ExpandUtil.genExpandId``) → the regular
``GroupAggregate`` keyed on (keys…, ``$e``) → the Calc of the SELECT list, where ``GROUPING()`` and ``GROUPING_ID()``
are functions of ``$e``.
"""

from __future__ import annotations

import functools
import itertools
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from sqlglot import exp

from strom.table.errors import TableException, ValidationException
from strom.table.planner.expand_logical import Expand
from strom.table.planner.logical import Aggregate, AggregateCall, RelNode, RowType, Union
from strom.table.planner.rex import RexCall, RexInputRef, RexNode
from strom.table.planner.window_converter import WindowAggregate
from strom.table.runtime.expand import ExpandIdLookup
from strom.table.sql.flink_dialect import FlinkDialect
from strom.table.sql.parser import at
from strom.table.types import DataTypes

__all__ = [
    "GroupingSets",
    "expand_aggregate",
    "expand_window_aggregate",
    "grouping_call",
    "grouping_sets",
    "is_grouping_call",
]

_BIGINT = DataTypes.BIGINT(False)


@dataclass(frozen=True, slots=True)
class GroupingSets:
    """The GROUP BY's distinct key expressions (first appearance order) and its sets over their positions: ``sets``
    the distinct ones, ``repeats`` the sets named again (their second, third… naming), as Calcite's
    ``rewriteAggregateWithDuplicateGroupSets`` gives each repetition its own aggregate in a UNION ALL."""

    keys: tuple[exp.Expr, ...]
    sets: tuple[frozenset[int], ...]
    repeats: tuple[tuple[frozenset[int], ...], ...] = ()


def is_grouping_call(node: exp.Expr) -> bool:
    return isinstance(node, exp.Grouping | exp.GroupingId)


def _name(node: exp.Expr) -> str:
    return "GROUPING_ID" if isinstance(node, exp.GroupingId) else "GROUPING"


def _text(node: exp.Expr) -> str:
    return node.sql(dialect=FlinkDialect)


def _unparen(node: exp.Expr) -> list[exp.Expr]:
    if isinstance(node, exp.Tuple):
        return list(node.expressions)
    if isinstance(node, exp.Paren):
        return _unparen(node.this)
    return [node]


def _factor(item: exp.Expr) -> list[list[exp.Expr]]:
    """One GROUP BY item as its list of sets (Calcite's ``SqlValidatorUtil.analyzeGroupItem``)."""
    if isinstance(item, exp.GroupingSets):
        return [s for e in item.expressions for s in _factor(e)] if item.expressions else [[]]
    if isinstance(item, exp.Rollup):
        parts = [_unparen(e) for e in item.expressions]
        return [[x for p in parts[:n] for x in p] for n in range(len(parts), -1, -1)]
    if isinstance(item, exp.Cube):
        parts = [_unparen(e) for e in item.expressions]
        return [
            [x for p, keep in zip(parts, mask, strict=True) if keep for x in p]
            for mask in itertools.product((True, False), repeat=len(parts))
        ]
    return [_unparen(item)]


def _compare(left: frozenset[int], right: frozenset[int]) -> int:
    """Calcite's ``ImmutableBitSet.COMPARATOR``."""
    if left == right:
        return 0
    if left > right:
        return -1
    if right > left:
        return 1
    a, b = sorted(left), sorted(right)
    return -1 if a < b else 1


def grouping_sets(group: exp.Group | None, calls: Sequence[exp.Expr]) -> GroupingSets | None:
    """The grouping sets of a GROUP BY with GROUPING SETS / ROLLUP / CUBE / ``()`` or a GROUPING() call, else None."""
    items = list(group.expressions) if group is not None else []
    if not any(isinstance(i, exp.GroupingSets | exp.Rollup | exp.Cube | exp.Tuple) for i in items) and not calls:
        return None
    keys: dict[str, exp.Expr] = {}
    factors = [_factor(i) for i in items]
    for sets in factors:
        for key in (k for s in sets for k in s):
            keys.setdefault(_text(key), key)
    position = {t: i for i, t in enumerate(keys)}
    combined = Counter(
        frozenset(position[_text(k)] for part in combo for k in part) for combo in itertools.product(*factors)
    )
    ordered = sorted(combined, key=functools.cmp_to_key(_compare))
    repeats = tuple(tuple(s for s in ordered if combined[s] > n) for n in range(1, max(combined.values(), default=1)))
    return GroupingSets(tuple(keys.values()), tuple(ordered), repeats)


def _expand_id(width: int, grouped: frozenset[int]) -> int:
    """Flink's ``ExpandUtil.genExpandId``: a bit per key (the first key highest), set where the key is not grouped."""
    return sum(1 << (width - 1 - i) for i in range(width) if i not in grouped)


def _grouping_value(node: exp.Expr, position: dict[str, int], grouped: frozenset[int]) -> int:
    args = list(node.expressions) or ([node.this] if node.this is not None else [])
    value = 0
    for arg in args:
        index = position.get(_text(arg))
        if index is None:
            raise ValidationException(
                f"SQL validation failed{at(node)}: Argument to {_name(node)} operator must be a grouped expression "
                f"(expected one of the GROUP BY keys: {', '.join(position) or 'none'}; got {_text(arg)})"
            )
        value = (value << 1) | (index not in grouped)
    return value


def expand_aggregate(
    pre_rel: RelNode,
    sets: GroupingSets,
    keys: tuple[int, ...],
    calls: tuple[AggregateCall, ...],
    names: tuple[tuple[str, ...], tuple[str, ...]],
) -> RelNode:
    """Expand → Aggregate keyed on (keys…, ``$e``), a UNION ALL of such when sets repeat; output = keys, ``$e``,
    calls."""
    members = [_expand_aggregate(pre_rel, s, keys, calls, names) for s in (sets.sets, *sets.repeats)]
    return members[0] if len(members) == 1 else Union(members[0].row_type, tuple(members))


def _expand_aggregate(
    pre_rel: RelNode,
    sets: tuple[frozenset[int], ...],
    keys: tuple[int, ...],
    calls: tuple[AggregateCall, ...],
    names: tuple[tuple[str, ...], tuple[str, ...]],
) -> Aggregate:
    key_names, call_names = names
    width = len(pre_rel.row_type)
    key_types = tuple(pre_rel.row_type.types[k].nullable() for k in keys)
    expand = Expand(
        RowType((*pre_rel.row_type.names, *key_names, "$e"), (*pre_rel.row_type.types, *key_types, _BIGINT)),
        pre_rel,
        keys,
        sets,
        tuple((_expand_id(len(keys), s),) for s in sets),
    )
    return Aggregate(
        RowType((*key_names, "$e", *call_names), (*key_types, _BIGINT, *(c.result_type for c in calls))),
        expand,
        tuple(range(width, width + len(keys) + 1)),
        calls,
    )


def grouping_call(node: exp.Expr, sets: GroupingSets, expand_id: RexInputRef) -> RexNode:
    """``GROUPING(…)`` / ``GROUPING_ID(…)`` as a function of ``$e`` (its value for each set's expand id)."""
    position = {_text(k): i for i, k in enumerate(sets.keys)}
    values = {_expand_id(len(sets.keys), s): _grouping_value(node, position, s) for s in sets.sets}
    return RexCall(_name(node), ExpandIdLookup(values), (expand_id,), _BIGINT)


def expand_window_aggregate(
    node: WindowAggregate, positions: list[int], sets: GroupingSets
) -> tuple[WindowAggregate, list[int], GroupingSets]:
    """Grouping sets of a window TVF aggregate (window_start and window_end in every set): Expand over its projected
    input → the WindowAggregate keyed on (plain keys…, ``$e``); the keys' new positions and the sets of the plain
    keys (``$e``'s bits, right after them)."""
    width, plain = len(node.input.row_type), len(node.group_keys)
    windows = {i for i, p in enumerate(positions) if p >= plain}
    if sets.repeats or any(not windows <= s for s in sets.sets):
        raise TableException(
            "Unsupported: grouping sets of a window aggregation; expected window_start and window_end in every "
            "grouping set, none repeated"
        )
    plain_sets = GroupingSets(
        tuple(k for _, k in sorted((positions[i], k) for i, k in enumerate(sets.keys) if i not in windows)),
        tuple(frozenset(positions[i] for i in s if i not in windows) for s in sets.sets),
    )
    names, types = node.row_type.names, node.row_type.types
    key_types = tuple(t.nullable() for t in types[:plain])
    expand = Expand(
        RowType((*node.input.row_type.names, *names[:plain], "$e"), (*node.input.row_type.types, *key_types, _BIGINT)),
        node.input,
        tuple(range(plain)),
        plain_sets.sets,
        tuple((_expand_id(plain, s),) for s in plain_sets.sets),
    )
    aggregate = WindowAggregate(
        RowType((*names[:plain], "$e", *names[plain:]), (*key_types, _BIGINT, *types[plain:])),
        expand,
        node.window,
        tuple(range(width, width + plain + 1)),
        node.calls,
        node.window_properties,
    )
    return aggregate, [p if p < plain else p + 1 for p in positions], plain_sets
