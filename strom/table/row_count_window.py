"""The Table API's row-count group windows: ``window(Tumble.over(row_interval(n)).on(col('proctime')).alias('w'))``
and ``Slide.over(row_interval(n)).every(row_interval(m))``, then ``group_by(col('w'), keys…).select(…)``.

Planned as Flink plans them: a group aggregation whose Aggregate becomes a
:class:`~strom.table.planner.row_count_window_logical.RowCountWindowAggregate` (counted per key, on a
processing-time attribute, STREAMING only). Flink 2.3's refusals with its messages: an event-time attribute, BATCH
mode, and window properties (``col('w').start``) of a row-count window (facts ``tests/data/flink_sql/feat_tab_*``).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from strom.table.errors import TableException, ValidationException
from strom.table.planner.logical import Aggregate, Calc, RelNode
from strom.table.planner.row_count_window_logical import RowCountWindowAggregate
from strom.table.types import TimestampKind

if TYPE_CHECKING:
    from strom.table.table import Table
    from strom.table.window import GroupWindow

__all__ = ["row_count_window_plan"]

_PROPERTIES = ("__WINDOW_START", "__WINDOW_END", "__WINDOW_ROWTIME")


def row_count_window_plan(
    table: Table, window: GroupWindow, keys: list[exp.Expr], fields: tuple[Any, ...], items: list[exp.Expr]
) -> RelNode:
    """The plan of ``table.window(window).group_by(window, *keys).select(*fields)`` (``items``: the fields as SQL)."""
    assert window.rows is not None and window.time_field is not None
    size, slide = window.rows
    tumbling = size == slide
    shown = (
        f"TumblingGroupWindow('{window.alias_name}, {window.time_field}, {size})"
        if tumbling
        else f"SlidingGroupWindow('{window.alias_name}, {window.time_field}, {size}, {slide})"
    )
    for item in items:
        if any(str(n.this) in _PROPERTIES for n in item.find_all(exp.Anonymous)):
            raise ValidationException(
                "Window start and Window end cannot be selected for a row-count "
                f"{'tumble' if tumbling else 'slide'} window."
            )
    _check_time_attribute(table, window.time_field, shown)
    grouped = table.group_by(*keys).select(*fields) if keys else table.select(*fields)
    return _windowed(grouped._plan, size, slide)


def _check_time_attribute(table: Table, time_field: str, shown: str) -> None:
    if not table._t_env._streaming():
        raise TableException(
            "Sql optimization: Cannot generate a valid execution plan for the given query: "
            f"Window {shown} is not supported right now."
        )
    row_type = table._plan.row_type
    index = row_type.index_of(time_field)
    if index is None:
        raise ValidationException(
            f"Cannot resolve field [{time_field}], input field list:[{', '.join(row_type.names)}]."
        )
    kind = getattr(row_type.types[index], "kind", None)
    if kind is TimestampKind.ROWTIME:
        raise TableException("Event-time grouping windows on row intervals are currently not supported.")
    if kind is not TimestampKind.PROCTIME:
        raise ValidationException(
            f"A group window expects a time attribute for grouping in a stream environment; got the column "
            f"'{time_field}' of type {row_type.types[index]}; hint: a processing-time attribute (pt AS PROCTIME())"
        )


def _windowed(plan: RelNode, size: int, slide: int) -> RelNode:
    """``plan`` with its group aggregation counted in row windows."""
    if isinstance(plan, Aggregate):
        return RowCountWindowAggregate(plan.row_type, plan.input, plan.group_keys, plan.calls, size, slide)
    if isinstance(plan, Calc):
        return dataclasses.replace(plan, input=_windowed(plan.input, size, slide))
    raise TableException(f"row-count window: expected a grouped aggregation; got {type(plan).__name__}")
