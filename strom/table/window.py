"""PyFlink's ``pyflink.table.window``: the Table API's group windows ``Tumble``, ``Slide`` and ``Session``.

``table.window(Tumble.over(lit(1).seconds).on(col('ts')).alias('w'))`` names a window over a time attribute;
``group_by(col('w'), ...)`` then plans it as Flink's window TVF (``TUMBLE``/``HOP``/``SESSION``) with a window
aggregation, and ``col('w').start`` / ``.end`` / ``.rowtime`` read ``window_start`` / ``window_end`` /
``window_time``. ``Over.partition_by(...).order_by(...).preceding(...).alias('w')`` is an OVER window for
``table.over_window(w).select(agg.over(col('w')))``: the OVER clause of each such aggregate.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from sqlglot import exp

from strom.table.errors import ValidationException
from strom.table.expression import to_sql_expression

__all__ = ["GroupWindow", "Over", "OverWindow", "Session", "Slide", "Tumble"]


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
    #: a row-count window (``row_interval(n)``): (size, slide) in rows; ``sizes`` unused (``row_count_window``)
    rows: tuple[int, int] | None = None

    def on(self, time_field: Any) -> GroupWindow:
        return replace(self, time_field=_column(time_field))

    def alias(self, alias: Any) -> GroupWindow:
        return replace(self, alias_name=_column(alias))

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


def _row_count(value: Any) -> int | None:
    """``row_interval(n)``'s n (a row-count window), else None."""
    node = to_sql_expression(value)
    if isinstance(node, exp.Literal) and not node.is_string and node.this.isdigit():
        return int(node.this)
    return None


class _Slide:
    def __init__(self, size: Any) -> None:
        self._size = size

    def every(self, slide: Any) -> GroupWindow:
        rows, every = _row_count(self._size), _row_count(slide)
        if rows is not None or every is not None:
            if rows is None or every is None:
                raise ValidationException("Slide: expected a size and a slide of the same kind (rows or time)")
            return GroupWindow("HOP", (), rows=(rows, every))
        return GroupWindow("HOP", (_sql(slide), _sql(self._size)))


class Tumble:
    """``Tumble.over(lit(1).seconds).on(col('ts')).alias('w')``: tumbling event-time windows;
    ``Tumble.over(row_interval(n)).on(col('proctime'))``: of n rows each."""

    @classmethod
    def over(cls, size: Any) -> GroupWindow:
        rows = _row_count(size)
        return (
            GroupWindow("TUMBLE", (), rows=(rows, rows)) if rows is not None else GroupWindow("TUMBLE", (_sql(size),))
        )


class Slide:
    """``Slide.over(size).every(slide).on(col('ts')).alias('w')``: sliding (hopping) windows, of time or of rows."""

    @classmethod
    def over(cls, size: Any) -> _Slide:
        return _Slide(size)


class Session:
    """``Session.with_gap(gap).on(col('ts')).alias('w')``: session windows."""

    @classmethod
    def with_gap(cls, gap: Any) -> GroupWindow:
        return GroupWindow("SESSION", (_sql(gap),))


_BOUNDS = {"UNBOUNDED_ROW": (True, "UNBOUNDED"), "UNBOUNDED_RANGE": (False, "UNBOUNDED")}


def _bound(value: Any) -> tuple[bool, str]:
    """``preceding(...)``: (rows?, the SQL bound): ``row_interval(2)`` → ROWS 2, ``lit(1).hours`` → RANGE INTERVAL."""
    from strom.table.sql.flink_dialect import FlinkDialect

    node = to_sql_expression(value)
    if isinstance(node, exp.Var) and node.name in _BOUNDS:
        return _BOUNDS[node.name]
    if isinstance(node, exp.Literal) and not node.is_string:
        return True, node.name
    if isinstance(node, exp.Interval):
        return False, node.sql(dialect=FlinkDialect)
    raise ValidationException(
        f"Over.preceding: expected row_interval(n), an interval (lit(1).hours), UNBOUNDED_ROW or UNBOUNDED_RANGE; "
        f"got {node.sql(dialect=FlinkDialect)}"
    )


@dataclass(frozen=True)
class OverWindow:
    """An OVER window (PyFlink's ``OverWindow``): partition keys, the time attribute it orders by, the frame."""

    partition_by: tuple[str, ...]
    order_by: str
    rows: bool = False
    preceding: str = "UNBOUNDED"
    alias_name: str | None = None

    def over_clause(self) -> str:
        """The SQL of ``OVER (...)``: ``PARTITION BY k ORDER BY ts ROWS BETWEEN 2 PRECEDING AND CURRENT ROW``."""
        partition = f"PARTITION BY {', '.join(self.partition_by)} " if self.partition_by else ""
        kind = "ROWS" if self.rows else "RANGE"
        return f"({partition}ORDER BY {self.order_by} {kind} BETWEEN {self.preceding} PRECEDING AND CURRENT ROW)"


class OverWindowPartitionedOrderedPreceding:
    """``Over....preceding(...)``: ``following(CURRENT_ROW)`` (the only end a streaming OVER has) and ``alias``."""

    def __init__(self, window: OverWindow) -> None:
        self._window = window

    def following(self, following: Any) -> OverWindowPartitionedOrderedPreceding:
        node = to_sql_expression(following)
        if not (isinstance(node, exp.Var) and node.name in ("CURRENT_ROW", "CURRENT_RANGE")):
            raise ValidationException(f"Over.following: expected CURRENT_ROW or CURRENT_RANGE; got {node.sql()}")
        return self

    def alias(self, alias: str) -> OverWindow:
        return replace(self._window, alias_name=alias)


class OverWindowPartitionedOrdered(OverWindowPartitionedOrderedPreceding):
    """``Over.partition_by(...).order_by(ts)``: ``preceding(...)`` next, or ``alias`` for an unbounded RANGE."""

    def preceding(self, preceding: Any) -> OverWindowPartitionedOrderedPreceding:
        rows, bound = _bound(preceding)
        return OverWindowPartitionedOrderedPreceding(replace(self._window, rows=rows, preceding=bound))


class OverWindowPartitioned:
    """``Over.partition_by(...)``: ``order_by(time attribute)`` next."""

    def __init__(self, keys: tuple[str, ...]) -> None:
        self._keys = keys

    def order_by(self, order_by: Any) -> OverWindowPartitionedOrdered:
        return OverWindowPartitionedOrdered(OverWindow(self._keys, f"`{_column(order_by)}`"))


class Over:
    """``Over.partition_by(col('k')).order_by(col('ts')).preceding(row_interval(2)).alias('w')`` (PyFlink's)."""

    @classmethod
    def partition_by(cls, *partition_by: Any) -> OverWindowPartitioned:
        return OverWindowPartitioned(tuple(f"`{_column(k)}`" for k in partition_by))

    @classmethod
    def order_by(cls, order_by: Any) -> OverWindowPartitionedOrdered:
        return OverWindowPartitioned(()).order_by(order_by)
