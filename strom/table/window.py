"""PyFlink's ``pyflink.table.window``: the Table API's group windows ``Tumble``, ``Slide`` and ``Session``.

``table.window(Tumble.over(lit(1).seconds).on(col('ts')).alias('w'))`` names a window over a time attribute;
``group_by(col('w'), ...)`` then plans it as Flink's window TVF (``TUMBLE``/``HOP``/``SESSION``) with a window
aggregation, and ``col('w').start`` / ``.end`` / ``.rowtime`` read ``window_start`` / ``window_end`` /
``window_time``. Row-count windows (``lit(10).rows``) are not supported.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from strom.table.errors import ValidationException
from strom.table.expression import to_sql_expression

__all__ = ["GroupWindow", "Session", "Slide", "Tumble"]


def _sql(value: Any) -> str:
    from strom.table.sql.flink_dialect import FlinkDialect

    node = to_sql_expression(value)
    if not isinstance(node, exp.Interval):
        raise ValidationException(
            f"group window: expected a time interval; got {node.sql(dialect=FlinkDialect)}; hint: lit(1).seconds"
        )
    return node.sql(dialect=FlinkDialect)


def _column(value: Any) -> str:
    node = to_sql_expression(value) if not isinstance(value, str) else exp.column(value)
    if not isinstance(node, exp.Column):
        raise ValidationException(f"group window: expected a time attribute column in on(...); got {node.sql()}")
    return node.name


@dataclass(frozen=True)
class GroupWindow:
    """A group window: its window table function's name and arguments, its time column and alias."""

    function: str
    sizes: tuple[str, ...]
    time_field: str | None = None
    alias_name: str | None = None

    def on(self, time_field: Any) -> GroupWindow:
        return GroupWindow(self.function, self.sizes, _column(time_field), self.alias_name)

    def alias(self, alias: Any) -> GroupWindow:
        return GroupWindow(self.function, self.sizes, self.time_field, _column(alias))

    def table_function(self, source: str, partition_by: str = "") -> str:
        """The window TVF over the table named ``source``: ``TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), size))``; a
        SESSION's sessions are per group key (``partition_by``: the keys, SQL): ``TABLE src PARTITION BY k``."""
        if self.time_field is None or self.alias_name is None:
            raise ValidationException("group window: expected .on(time_field) and .alias(name); got neither")
        args = ", ".join(self.sizes)
        table = f"TABLE `{source}`"
        if self.function == "SESSION" and partition_by:
            table += f" PARTITION BY {partition_by}"
        return f"TABLE({self.function}({table}, DESCRIPTOR(`{self.time_field}`), {args}))"


class _Slide:
    def __init__(self, size: str) -> None:
        self._size = size

    def every(self, slide: Any) -> GroupWindow:
        return GroupWindow("HOP", (_sql(slide), self._size))


class Tumble:
    """``Tumble.over(lit(1).seconds).on(col('ts')).alias('w')``: tumbling event-time windows."""

    @classmethod
    def over(cls, size: Any) -> GroupWindow:
        return GroupWindow("TUMBLE", (_sql(size),))


class Slide:
    """``Slide.over(size).every(slide).on(col('ts')).alias('w')``: sliding (hopping) windows."""

    @classmethod
    def over(cls, size: Any) -> _Slide:
        return _Slide(_sql(size))


class Session:
    """``Session.with_gap(gap).on(col('ts')).alias('w')``: session windows."""

    @classmethod
    def with_gap(cls, gap: Any) -> GroupWindow:
        return GroupWindow("SESSION", (_sql(gap),))
