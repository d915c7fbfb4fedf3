"""Window table-valued functions and window aggregation (Flink's ``FlinkLogicalTableFunctionScan`` of TUMBLE/HOP/
CUMULATE and ``StreamPhysicalWindowAggregate``), planned onto sqlwindow's operators.

``FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' SECOND))`` becomes a :class:`WindowTableFunction` node
(the input's columns plus ``window_start``, ``window_end``, ``window_time``); a GROUP BY over it that includes
``window_start`` and ``window_end`` becomes a :class:`WindowAggregate` — insert-only, one row per key and window at
the window's end — instead of an updating group aggregation, as Flink's ``WindowAggregate`` rule does.
"""

from __future__ import annotations

import datetime
from typing import Any

from sqlglot import exp

from strom.table.errors import TableException, ValidationException
from strom.table.planner.expression_converter import ExpressionConverter
from strom.table.planner.logical import Calc, RelNode, RowType, WindowAggregate, WindowTableFunction
from strom.table.planner.rex import RexInputRef, RexLiteral
from strom.table.planner.scope import Scope
from strom.table.sql.flink_dialect import Descriptor, FlinkDialect, PartitionedTable
from strom.table.sql.parser import at
from strom.table.types import parse_type

__all__ = [
    "WINDOW_COLUMNS",
    "WindowAggregate",
    "WindowTableFunction",
    "check_session_keys",
    "convert_window_tvf",
    "is_window_tvf",
    "refuse_session_in_batch",
]

WINDOW_COLUMNS = ("window_start", "window_end", "window_time")
_TVFS = ("TUMBLE", "HOP", "CUMULATE", "SESSION")


def is_window_tvf(node: exp.Expr) -> bool:
    return (
        isinstance(node, exp.Table)
        and isinstance(node.this, exp.Anonymous)
        and str(node.this.this).upper() == "TABLE"
        and len(node.this.expressions) == 1
        and isinstance(node.this.expressions[0], exp.Anonymous)
    )


def _millis(node: exp.Expr) -> int:
    value = ExpressionConverter(Scope([])).convert(node)
    if not isinstance(value, RexLiteral) or not isinstance(value.value, datetime.timedelta):
        raise ValidationException(
            f"SQL validation failed{at(node)}: expected an INTERVAL literal; got {node.sql(dialect=FlinkDialect)}"
        )
    return int(value.value / datetime.timedelta(milliseconds=1))


def convert_window_tvf(node: exp.Table, table_of: Any) -> WindowTableFunction:
    call = node.this.expressions[0]
    name = str(call.this).upper()
    if name not in _TVFS:
        raise TableException(
            f"Unsupported SQL construct{at(call)}: TABLE({name}(...)); expected TUMBLE, HOP, CUMULATE or SESSION"
        )
    args = [a.expression if isinstance(a, exp.Kwarg) else a for a in call.expressions]
    partition = args[0].expressions if args and isinstance(args[0], PartitionedTable) else []
    if partition:
        args[0] = args[0].this
    if partition and name != "SESSION":
        raise ValidationException(f"SQL validation failed{at(call)}: only SESSION takes TABLE t PARTITION BY keys")
    if len(args) < 3 or not isinstance(args[0], exp.Table) or not isinstance(args[1], Descriptor):
        raise ValidationException(
            f"SQL validation failed{at(call)}: expected {name}(TABLE t, DESCRIPTOR(rowtime), INTERVAL …); "
            f"got {call.sql(dialect=FlinkDialect)[:80]}"
        )
    source: RelNode = table_of(args[0])
    column = args[1].expressions[0].name
    index = source.row_type.index_of(column)
    if index is None:
        raise ValidationException(f"SQL validation failed{at(args[1])}: Column '{column}' not found in table")
    rowtime_type = source.row_type.types[index]
    if "ROWTIME" not in str(rowtime_type):
        raise ValidationException(
            f"SQL validation failed{at(args[1])}: The window function requires the timecol to be a time attribute "
            f"type, but is {rowtime_type}; hint: declare WATERMARK FOR {column} AS … on the table"
        )
    sizes = [_millis(a) for a in args[2:]]
    expected = 1 if name in ("TUMBLE", "SESSION") else 2
    offsets = 0 if name == "SESSION" else 1
    if not expected <= len(sizes) <= expected + offsets:
        what = "a gap" if name == "SESSION" else f"{expected} interval(s) and an offset"
        raise ValidationException(f"SQL validation failed{at(call)}: {name} expects {what}")
    params = tuple(sizes) if name == "SESSION" else (*sizes[:expected], sizes[expected] if len(sizes) > expected else 0)
    keys = tuple(_column_index(source, k) for k in partition)
    window_type = parse_type("TIMESTAMP(3) NOT NULL")
    time_type = rowtime_type.not_null()
    row_type = RowType(
        (*source.row_type.names, *WINDOW_COLUMNS), (*source.row_type.types, window_type, window_type, time_type)
    )
    group_window = bool(call.meta.get("group_window"))  # the Table API's Slide (Flink's legacy group window)
    return WindowTableFunction(row_type, source, name, params, index, keys, group_window=group_window)


def _column_index(source: RelNode, column: exp.Expr) -> int:
    index = source.row_type.index_of(column.name)
    if index is None:
        raise ValidationException(f"SQL validation failed{at(column)}: Column '{column.name}' not found in table")
    return index


def check_session_keys(rel: WindowAggregate) -> None:
    """A session window aggregation runs keyed by its group keys, so they must be the SESSION's PARTITION BY keys
    (sessions of other keys would be other sessions); else refused as not planned."""
    projection = rel.input.projection if isinstance(rel.input, Calc) else None
    keys = (
        {(p.index if isinstance(p, RexInputRef) else -1) for p in (projection[k] for k in rel.group_keys)}
        if projection is not None
        else set(rel.group_keys)
    )
    if keys != set(rel.window.partition_keys):
        names = rel.window.input.row_type.names
        raise TableException(
            "Unsupported: a SESSION window aggregation grouped by other keys than the SESSION's PARTITION BY; "
            f"expected GROUP BY window_start, window_end, {', '.join(names[k] for k in rel.window.partition_keys)}"
        )


def refuse_session_in_batch(select: exp.Select) -> None:
    """BATCH has no SESSION window TVF (Flink 2.3's planner refuses ``TABLE(SESSION(TABLE t, …))``; the legacy
    ``GROUP BY SESSION(ts, gap)`` runs): raise Flink's reason."""
    for call in select.find_all(exp.Anonymous):
        first = call.expressions[0] if call.expressions else None
        if str(call.this).upper() == "SESSION" and first is not None and not isinstance(first, exp.Column):
            raise TableException(
                f"Unsupported SQL construct{at(call)}: Unaligned windows like session are not supported in batch "
                "mode yet. Expected TUMBLE, HOP or CUMULATE in BATCH; hint: run the query in STREAMING mode"
            )
