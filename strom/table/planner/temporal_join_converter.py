"""Joins with ``FOR SYSTEM_TIME AS OF left.time`` (Flink's ``TemporalJoinRewriteWithUniqueKeyRule`` and
``StreamPhysicalTemporalJoinRule`` / ``StreamPhysicalLookupJoinRule``).

``AS OF`` a left rowtime plans an event-time temporal join against a *versioned table*: a table with a PRIMARY KEY
and a rowtime, or a view deduplicating by its rowtime (``ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts DESC) …
= 1``); the equality condition must cover the primary key. ``AS OF`` a left proctime plans a lookup join when the
table's source can look rows up (:class:`~strom.table.connectors.lookup.LookupTableSource`). INNER and LEFT only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from strom.table.catalog.catalog_manager import CatalogTable
from strom.table.errors import TableException, ValidationException
from strom.table.logical_types import TimestampKind
from strom.table.planner.expression_converter import ExpressionConverter
from strom.table.planner.join_converter import _conjuncts, _equi_pair
from strom.table.planner.logical import Calc, Rank, RelNode, RowType, TableScan, WatermarkAssigner
from strom.table.planner.rex import RexInputRef, RexNode, RexSpecial
from strom.table.planner.scope import Scope
from strom.table.planner.temporal_logical import LookupJoin, TemporalJoin
from strom.table.sql.parser import at
from strom.table.types import DataType

if TYPE_CHECKING:
    from collections.abc import Mapping

    from strom.table.planner.sql_to_rel import SqlToRel

__all__ = ["convert_temporal_join", "is_temporal_join", "versioned_key"]


def is_temporal_join(join: exp.Join) -> bool:
    return isinstance(join.this, exp.Table) and join.this.args.get("version") is not None


def convert_temporal_join(
    converter: SqlToRel, left: RelNode, left_scope: Scope, join: exp.Join, ctes: Mapping[str, RelNode]
) -> tuple[RelNode, Scope]:
    table = join.this
    assert isinstance(table, exp.Table)
    version = table.args["version"]
    side = (join.args.get("side") or "").upper()
    kind = {"": "INNER", "LEFT": "LEFT"}.get(side)
    if kind is None or (join.args.get("kind") or "").upper() == "CROSS" or join.args.get("on") is None:
        raise TableException(
            f"Unsupported SQL construct{at(join)}: {side or 'CROSS'} JOIN … FOR SYSTEM_TIME AS OF; "
            "expected [LEFT] JOIN versioned_table FOR SYSTEM_TIME AS OF left.time AS alias ON equality conditions"
        )
    period = ExpressionConverter(left_scope).convert(version.expression)
    time_kind = getattr(period.type, "kind", None)
    if not isinstance(period, RexInputRef) or time_kind not in (TimestampKind.ROWTIME, TimestampKind.PROCTIME):
        raise ValidationException(
            f"SQL validation failed{at(version.expression)}: FOR SYSTEM_TIME AS OF expects a time attribute "
            f"(rowtime or proctime) of the left input; got {version.expression.sql()} of type {period.type}"
        )
    right = converter.table(table, ctes)
    alias = table.alias_or_name
    right_scope = Scope.of(right.row_type, alias)
    scope = left_scope.join(right_scope)
    left_keys, right_keys, rest = _split_condition(scope, join, len(left.row_type))
    types = [
        *left.row_type.types,
        *(_regular(t).nullable() if kind == "LEFT" else _regular(t) for t in right.row_type.types),
    ]
    row_type = RowType(tuple(f.name for f in scope.fields), tuple(types))
    out_scope = Scope([type(f)(f.qualifier, f.name, t) for f, t in zip(scope.fields, types, strict=True)])
    if time_kind is TimestampKind.PROCTIME:
        return _lookup_join(row_type, left, right, kind, left_keys, right_keys, rest, table), out_scope
    key = versioned_key(right, _catalog_primary_key(converter, table, ctes))
    if key is None:
        raise ValidationException(
            f"SQL validation failed{at(table)}: Temporal Table Join requires primary key in versioned table, but no "
            f"primary key can be found; expected a table with PRIMARY KEY (...) NOT ENFORCED and a rowtime, or a "
            f"view deduplicating by rowtime; got {table.name} ({right.row_type.describe()})"
        )
    primary_key, right_rowtime = key
    if not set(primary_key) <= set(right_keys):
        names = ", ".join(right.row_type.names[k] for k in primary_key)
        raise ValidationException(
            f"SQL validation failed{at(join.args['on'])}: Temporal table's primary key [{names}] must be included in "
            f"the equivalence condition of temporal join; got {join.args['on'].sql()}"
        )
    node = TemporalJoin(
        row_type, left, right, kind, tuple(left_keys), tuple(right_keys), period.index, right_rowtime, rest
    )
    return node, out_scope


def _lookup_join(
    row_type: RowType,
    left: RelNode,
    right: RelNode,
    kind: str,
    left_keys: list[int],
    right_keys: list[int],
    rest: RexNode | None,
    table: exp.Table,
) -> LookupJoin:
    """``AS OF`` a proctime: the table's source must look rows up by the keys the condition binds."""
    from strom.table.connectors.lookup import LookupTableSource

    source = right.source if isinstance(right, TableScan) else None
    if not isinstance(right, TableScan) or not isinstance(source, LookupTableSource):
        raise TableException(
            f"Unsupported SQL construct{at(table)}: Processing-time temporal join is not supported yet; expected a "
            f"lookup table (a connector with lookups, e.g. 'jdbc') after FOR SYSTEM_TIME AS OF a proctime; got "
            f"{table.name}, whose source cannot look rows up"
        )
    return LookupJoin(
        row_type, left, right.table_name, source, right.row_type, kind, tuple(left_keys), tuple(right_keys), rest
    )


def _regular(data_type: DataType) -> DataType:
    """The right side's time attributes become regular timestamps in the join's output (as Flink's)."""
    with_kind = getattr(data_type, "with_kind", None)
    if callable(with_kind) and getattr(data_type, "kind", None) is not TimestampKind.REGULAR:
        regular: DataType = with_kind(TimestampKind.REGULAR)
        return regular
    return data_type


def _split_condition(scope: Scope, join: exp.Join, n_left: int) -> tuple[list[int], list[int], RexNode | None]:
    condition = ExpressionConverter(scope).convert(join.args["on"])
    left_keys: list[int] = []
    right_keys: list[int] = []
    rest: RexNode | None = None
    for conjunct in _conjuncts(condition):
        pair = _equi_pair(conjunct, n_left)
        if pair is None:
            rest = conjunct if rest is None else RexSpecial("AND", (rest, conjunct), conjunct.type)
        else:
            left_keys.append(pair[0])
            right_keys.append(pair[1] - n_left)
    if not left_keys:
        raise TableException(
            f"Unsupported SQL construct{at(join)}: Temporal table join requires an equality condition on fields of "
            "table; expected ON left.k = right.k"
        )
    return left_keys, right_keys, rest


def _catalog_primary_key(converter: SqlToRel, table: exp.Table, ctes: Mapping[str, RelNode]) -> tuple[str, ...]:
    parts = [p.name for p in table.parts]
    if len(parts) == 1 and parts[0] in ctes:
        return ()
    found = converter.catalog.get_table(converter.catalog.qualify(parts))
    return found.primary_key if isinstance(found, CatalogTable) else ()


def versioned_key(rel: RelNode, primary_key: tuple[str, ...] = ()) -> tuple[tuple[int, ...], int] | None:
    """``(primary key columns, rowtime column)`` of a versioned table's plan, or None when it is not one."""
    rowtimes = [i for i, t in enumerate(rel.row_type.types) if getattr(t, "kind", None) is TimestampKind.ROWTIME]
    if len(rowtimes) != 1:
        return None
    if primary_key:
        indices = [rel.row_type.index_of(name) for name in primary_key]
        return (tuple(i for i in indices if i is not None), rowtimes[0]) if None not in indices else None
    keys = _unique_key(rel)
    return (keys, rowtimes[0]) if keys is not None else None


def _unique_key(rel: RelNode) -> tuple[int, ...] | None:
    """The key a deduplication by rowtime makes unique, traced through projections (Flink's upsert keys)."""
    if isinstance(rel, Rank):
        ordered_by_time = len(rel.order_keys) == 1 and "ROWTIME" in str(rel.input.row_type.types[rel.order_keys[0][0]])
        return rel.partition_keys if rel.limit == 1 and rel.offset == 0 and ordered_by_time else None
    if isinstance(rel, WatermarkAssigner):
        return _unique_key(rel.input)
    if isinstance(rel, Calc):
        below = _unique_key(rel.input)
        if below is None:
            return None
        if rel.projection is None:
            return below
        mapped = []
        for key in below:
            found = [i for i, p in enumerate(rel.projection) if isinstance(p, RexInputRef) and p.index == key]
            if not found:
                return None
            mapped.append(found[0])
        return tuple(mapped)
    return None
