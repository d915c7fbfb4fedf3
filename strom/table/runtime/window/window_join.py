"""The window join (Flink's ``WindowJoinOperator``): rows of two inputs that carry their windows (``window_end``
columns, as after a window TVF), joined on equal keys within the same window, INNER, LEFT, RIGHT or FULL OUTER — or
SEMI / ANTI (``IN`` / ``EXISTS`` / ``NOT EXISTS``: the left rows with / without a partner, left values only).

Each input keeps its rows per key and window (``window-join-left`` / ``-right``: key → window end → rows in arrival
order) and registers the key's timer at the window's end; a row whose window fired already is late: dropped and
counted (``numLateRecordsDropped``, and per side ``left_num_late_records_dropped`` / ``right_...``). When the
watermark passes the window's end its rows are joined as Flink's join variants do — for each left row every right
row meeting ``condition`` (the non-equi rest of the ``ON`` clause, or ``None``), then, for outer joins, the left
rows that met none padded with NULLs on the right, then the right rows that met none padded on the left — and the
window's state goes. A joined row is ``left values + right values``, stamped with ``window_time``.

Factory (what the planner calls)::

    window_join(left, right, *, left_key_indices, right_key_indices, left_window_end_index,
                right_window_end_index, left_arity, right_arity, join_type="INNER", condition=None,
                time_zone=None, field_names=None) -> DataStream[Row]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from strom.exceptions import InvalidProgramError
from strom.runtime.operators.timer_service import InternalTimer, InternalTimerService
from strom.runtime.operators.two_input import TwoInputStreamOperator
from strom.table.runtime.window.table_stream_operator import RowKeySelector, TableStreamOperator, ns_pop, ns_put
from strom.table.runtime.window.time_window_util import TimeShift, datetime_to_millis

if TYPE_CHECKING:
    from strom.api.datastream import DataStream

__all__ = ["WindowJoinOperator", "window_join"]

JOIN_TYPES = ("INNER", "LEFT", "RIGHT", "FULL", "SEMI", "ANTI")


class WindowJoinOperator(TwoInputStreamOperator, TableStreamOperator):
    """Joins the rows of two inputs per key and window at the window's end."""

    def __init__(
        self,
        key_selector1: RowKeySelector,
        key_selector2: RowKeySelector,
        *,
        left_window_end_index: int,
        right_window_end_index: int,
        left_arity: int,
        right_arity: int,
        join_type: str = "INNER",
        condition: Callable[[Any, Any], bool] | None = None,
        time_zone: str | None = None,
        field_names: Sequence[str] | None = None,
    ) -> None:
        TableStreamOperator.__init__(self, field_names=field_names)
        if join_type not in JOIN_TYPES:
            raise InvalidProgramError(
                f"expected a window join of type {'/'.join(JOIN_TYPES)}; got {join_type!r}; hint: join_type='LEFT'"
            )
        self.name = "WindowJoin"
        self.key_selector1, self.key_selector2 = key_selector1, key_selector2
        self.window_end_indices = (left_window_end_index, right_window_end_index)
        self.left_nulls, self.right_nulls = [None] * left_arity, [None] * right_arity
        self.join_type = join_type
        self.condition = condition
        self.shift = TimeShift(time_zone)
        self.left_num_late_records_dropped = 0
        self.right_num_late_records_dropped = 0
        self._tables: tuple[Any, Any] = ({}, {})
        self._timers: InternalTimerService | None = None

    def open(self) -> None:
        backend = self.keyed_backend
        assert backend is not None
        self._tables = (
            backend.get_namespaced_table("window-join-left"),
            backend.get_namespaced_table("window-join-right"),
        )
        self._timers = self.get_internal_timer_service("window-timers", self)
        super().open()

    def process_batch1(self, batch: list[Any]) -> None:
        self._process(batch, 0)

    def process_batch2(self, batch: list[Any]) -> None:
        self._process(batch, 1)

    def _process(self, batch: list[Any], side: int) -> None:
        key_of = self.key_selector1 if side == 0 else self.key_selector2
        backend, timers, table = self.keyed_backend, self._timers, self._tables[side]
        assert key_of is not None and backend is not None and timers is not None
        index = self.window_end_indices[side]
        fired, wm = self.shift.is_window_fired, self.current_watermark
        groups: dict[tuple[Any, int], list[Any]] = {}
        late = 0
        for row in batch:
            end = datetime_to_millis(row[index])
            if fired(end, wm):
                late += 1
                continue
            groups.setdefault((key_of(row), end), []).append(row)
        if late:
            self.num_late_records_dropped += late
            if side == 0:
                self.left_num_late_records_dropped += late
            else:
                self.right_num_late_records_dropped += late
        for (key, end), rows in groups.items():
            backend.current_key = key
            per_key = table.get(key)
            stored = per_key.get(end) if per_key is not None else None
            ns_put(table, key, end, rows if stored is None else [*stored, *rows])
            timers.register_event_time_timer(end, self.shift.to_epoch(end - 1))
        self._records_in += len(batch)

    def on_event_time(self, timer: InternalTimer) -> None:
        key, end, time_ms = timer.key, timer.namespace, timer.timestamp
        lefts = ns_pop(self._tables[0], key, end) or []
        rights = ns_pop(self._tables[1], key, end) or []
        condition, join_type = self.condition, self.join_type
        if join_type in ("SEMI", "ANTI"):  # Flink's SemiAntiJoinOperator: left rows with (without) a partner
            keep = join_type == "SEMI"
            for left in lefts:
                matched = any(condition is None or condition(left, right) for right in rights)
                if matched == keep:
                    self.emit(list(left._values), time_ms)
            return
        right_matched = [False] * len(rights)
        for left in lefts:
            matched = False
            for j, right in enumerate(rights):
                if condition is None or condition(left, right):
                    matched = right_matched[j] = True
                    self.emit([*left._values, *right._values], time_ms)
            if not matched and join_type in ("LEFT", "FULL"):
                self.emit([*left._values, *self.right_nulls], time_ms)
        if join_type in ("RIGHT", "FULL"):
            for right, matched in zip(rights, right_matched, strict=True):
                if not matched:
                    self.emit([*self.left_nulls, *right._values], time_ms)


def window_join(
    left: DataStream[Any],
    right: DataStream[Any],
    *,
    left_key_indices: Sequence[int],
    right_key_indices: Sequence[int],
    left_window_end_index: int,
    right_window_end_index: int,
    left_arity: int,
    right_arity: int,
    join_type: str = "INNER",
    condition: Callable[[Any, Any], bool] | None = None,
    time_zone: str | None = None,
    field_names: Sequence[str] | None = None,
) -> DataStream[Any]:
    """``L [LEFT|RIGHT|FULL] JOIN R ON L.window_start = R.window_start AND L.window_end = R.window_end AND keys``."""
    sel1, sel2 = RowKeySelector(left_key_indices), RowKeySelector(right_key_indices)
    operator = WindowJoinOperator(
        sel1,
        sel2,
        left_window_end_index=left_window_end_index,
        right_window_end_index=right_window_end_index,
        left_arity=left_arity,
        right_arity=right_arity,
        join_type=join_type,
        condition=condition,
        time_zone=time_zone,
        field_names=field_names,
    )
    keyed_right = right.key_by(sel2)
    return left.key_by(sel1)._two_input("WindowJoin", keyed_right.get_transformation(), operator, None, "window_join()")
