"""The event-time interval join of SQL (Flink's ``RowTimeIntervalJoin`` / ``TimeIntervalJoin``).

    SELECT ... FROM l JOIN r ON l.k = r.k AND l.ts BETWEEN r.ts - INTERVAL '2' SECOND AND r.ts + INTERVAL '3' SECOND

joins rows of equal keys with ``r.ts + lower_bound <= l.ts <= r.ts + upper_bound`` (here ``lower_bound = -2000``,
``upper_bound = 3000``; an exclusive bound is the planner's ``± 1``), INNER, LEFT, RIGHT or FULL OUTER, with an
optional further ``condition(left_row, right_row)``. Flink's algorithm, step for step:

* Each side keeps, per key, its rows by rowtime with an "emitted" flag (``IntervalJoinLeftCache`` /
  ``IntervalJoinRightCache``: key → ``{ts: [[row, emitted], ...]}``). A left row joins the right rows of times in
  ``[ts - upper_bound, ts - lower_bound]`` (marking them emitted for a right outer join), and is cached unless the
  watermark has passed its last possible partner (``watermark >= ts - lower_bound``); a row not cached and never
  joined goes out padded with NULLs at once (outer side). The right side mirrors it.
* While joining, cached rows of the other side older than ``watermark - relative size - 1`` expire; one cleanup
  timer per key and side (``IntervalJoinLeftTimerState`` / ``...Right...``) expires the rest later. An expiring row
  of an outer side that never joined goes out padded with NULLs (Flink's ``OuterJoinPaddingUtil``).
* The output watermark is held back by ``max(-lower_bound, upper_bound)`` (Flink's
  ``KeyedCoProcessOperatorWithWatermarkDelay``): joined rows can be that much behind the input's event time.

A joined row is ``left values + right values`` (NULLs for the missing side), stamped with the left row's rowtime
(the right's for a right-padded row).

Factory (what the planner calls)::

    interval_join(left, right, *, left_key_indices, right_key_indices, lower_bound, upper_bound,
                  join_type="INNER", left_arity, right_arity, condition=None, min_clean_up_interval=0,
                  field_names=None) -> DataStream[Row]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from strom.exceptions import InvalidProgramError
from strom.runtime.operators.timer_service import InternalTimer, InternalTimerService
from strom.runtime.operators.two_input import TwoInputStreamOperator
from strom.runtime.streamrecord import timestamps_of
from strom.table.runtime.window.table_stream_operator import RowKeySelector, TableStreamOperator
from strom.table.runtime.window.time_window_util import LONG_MAX

if TYPE_CHECKING:
    from strom.api.datastream import DataStream

__all__ = ["JOIN_TYPES", "RowTimeIntervalJoin", "interval_join"]

JOIN_TYPES = ("INNER", "LEFT", "RIGHT", "FULL")
Cache = dict[int, list[list[Any]]]  # rowtime -> [[row, emitted], ...]


class RowTimeIntervalJoin(TwoInputStreamOperator, TableStreamOperator):
    """Rows of two keyed inputs joined when their rowtimes lie within the bounds (left relative to right)."""

    def __init__(
        self,
        key_selector1: RowKeySelector,
        key_selector2: RowKeySelector,
        *,
        lower_bound: int,
        upper_bound: int,
        join_type: str = "INNER",
        left_arity: int,
        right_arity: int,
        condition: Callable[[Any, Any], bool] | None = None,
        min_clean_up_interval: int = 0,
        field_names: Sequence[str] | None = None,
        filter_null_keys: bool = False,
    ) -> None:
        TableStreamOperator.__init__(self, field_names=field_names)
        if join_type not in JOIN_TYPES or lower_bound > upper_bound:
            raise InvalidProgramError(
                f"expected an interval join of type {'/'.join(JOIN_TYPES)} with lower <= upper bound; got "
                f"{join_type!r} with [{lower_bound}, {upper_bound}] ms; hint: l.ts BETWEEN r.ts - INTERVAL '2' "
                "SECOND AND r.ts + INTERVAL '3' SECOND is lower_bound=-2000, upper_bound=3000"
            )
        self.name = "IntervalJoin"
        self.key_selector1, self.key_selector2 = key_selector1, key_selector2
        self.left_relative_size, self.right_relative_size = -lower_bound, upper_bound
        self.left_outer = join_type in ("LEFT", "FULL")
        self.right_outer = join_type in ("RIGHT", "FULL")
        self.left_nulls, self.right_nulls = [None] * left_arity, [None] * right_arity
        self.condition = condition
        self.filter_null_keys = filter_null_keys  # SQL's =: a key with a NULL joins nothing (Flink's filterNulls)
        self.min_clean_up_interval = max(0, min_clean_up_interval)
        self.delay = max(self.left_relative_size, self.right_relative_size)
        # Flink's approximations of how far each cache was cleaned (operator fields, not state)
        self.left_expiration_time = 0
        self.right_expiration_time = 0
        self._caches: tuple[Any, Any] = ({}, {})
        self._timer_states: tuple[Any, Any] = ({}, {})
        self._timers: InternalTimerService | None = None

    def open(self) -> None:
        backend = self.keyed_backend
        assert backend is not None
        self._caches = (backend.get_table("IntervalJoinLeftCache"), backend.get_table("IntervalJoinRightCache"))
        self._timer_states = (
            backend.get_table("IntervalJoinLeftTimerState"),
            backend.get_table("IntervalJoinRightTimerState"),
        )
        self._timers = self.get_internal_timer_service("interval-join-timers", self)
        super().open()

    def _operator_time(self) -> int:
        wm = self.current_watermark
        return wm if wm > 0 else 0

    def _expiration(self, operator_time: int, relative_size: int) -> int:
        return operator_time - relative_size - 1 if operator_time < LONG_MAX else LONG_MAX

    def process_batch1(self, batch: list[Any]) -> None:
        self._process(batch, True)

    def process_batch2(self, batch: list[Any]) -> None:
        self._process(batch, False)

    def _process(self, batch: list[Any], is_left: bool) -> None:
        timestamps = timestamps_of(batch)
        if timestamps is None or None in timestamps:
            raise InvalidProgramError(
                f"expected rows with rowtimes in both inputs of '{self.name}'; got a row without one; hint: the scan's "
                "watermark assigner stamps rows with the rowtime column"
            )
        key_of = self.key_selector1 if is_left else self.key_selector2
        assert key_of is not None and self.keyed_backend is not None
        for row, t in zip(batch, timestamps, strict=True):
            assert t is not None
            self.keyed_backend.current_key = key = key_of(row)
            self._element(key, row, t, is_left)
        self._records_in += len(batch)
        self._collector.flush(self.output)

    def _element(self, key: Any, row: Any, t: int, is_left: bool) -> None:
        """Flink's ``processElement1`` (left) / ``processElement2`` (right), mirrored by ``is_left``."""
        own_size = self.left_relative_size if is_left else self.right_relative_size
        other_size = self.right_relative_size if is_left else self.left_relative_size
        low, high = t - other_size, t + own_size
        other_outer = self.right_outer if is_left else self.left_outer
        own_cache, other_cache = self._caches if is_left else self._caches[::-1]
        operator_time = self._operator_time()
        emitted = False
        expiration = self.right_expiration_time if is_left else self.left_expiration_time
        if expiration < high:
            expiration = self._expiration(operator_time, other_size)
            if is_left:
                self.right_expiration_time = expiration
            else:
                self.left_expiration_time = expiration
            entries: Cache | None = None if self.filter_null_keys and None in key else other_cache.get(key)
            if entries:
                emitted = self._join_cached(row, t, entries, low, high, expiration, is_left, other_outer)
                if entries:
                    other_cache[key] = entries
                else:
                    del other_cache[key]
        if operator_time < high:
            cached: Cache = own_cache.get(key) or {}
            cached.setdefault(t, []).append([row, emitted])
            own_cache[key] = cached
            other_timer_state = self._timer_states[1] if is_left else self._timer_states[0]
            if other_timer_state.get(key) is None:
                self._register_clean_up(key, t, is_left)
        elif not emitted and (self.left_outer if is_left else self.right_outer):
            self._pad(row, t, is_left)

    def _join_cached(
        self, row: Any, t: int, entries: Cache, low: int, high: int, expiration: int, is_left: bool, outer: bool
    ) -> bool:
        emitted = False
        for other_time in list(entries):
            others = entries[other_time]
            if low <= other_time <= high:
                for pair in others:
                    left, right = (row, pair[0]) if is_left else (pair[0], row)
                    if self.condition is None or self.condition(left, right):
                        emitted = True
                        pair[1] = True
                        self.emit([*left._values, *right._values], t if is_left else other_time)
            if other_time <= expiration:
                if outer:
                    for other, joined in others:
                        if not joined:
                            self._pad(other, other_time, not is_left)
                del entries[other_time]
        return emitted

    def _pad(self, row: Any, t: int, is_left: bool) -> None:
        values = [*row._values, *self.right_nulls] if is_left else [*self.left_nulls, *row._values]
        self.emit(values, t)

    def _register_clean_up(self, key: Any, row_time: int, left_row: bool) -> None:
        """A timer to expire the rows of the side ``left_row`` names; its time kept in the other side's state."""
        size = self.left_relative_size if left_row else self.right_relative_size
        clean_up = row_time + size + self.min_clean_up_interval + 1
        assert self._timers is not None
        self._timers.register_event_time_timer(None, clean_up)
        (self._timer_states[1] if left_row else self._timer_states[0])[key] = clean_up

    def on_event_time(self, timer: InternalTimer) -> None:
        key, timestamp = timer.key, timer.timestamp
        operator_time = self._operator_time()
        left_state, right_state = self._timer_states
        if left_state.get(key) == timestamp:  # a right-row timer: expire right rows
            self.right_expiration_time = self._expiration(operator_time, self.right_relative_size)
            self._remove_expired(key, self.right_expiration_time, False)
        if right_state.get(key) == timestamp:
            self.left_expiration_time = self._expiration(operator_time, self.left_relative_size)
            self._remove_expired(key, self.left_expiration_time, True)

    def _remove_expired(self, key: Any, expiration: int, remove_left: bool) -> None:
        cache = self._caches[0] if remove_left else self._caches[1]
        timer_state = self._timer_states[1] if remove_left else self._timer_states[0]
        outer = self.left_outer if remove_left else self.right_outer
        entries: Cache = cache.get(key) or {}
        earliest = -1
        for row_time in list(entries):
            if row_time <= expiration:
                if outer:
                    for row, joined in entries[row_time]:
                        if not joined:
                            self._pad(row, row_time, remove_left)
                del entries[row_time]
            elif row_time < earliest or earliest < 0:
                earliest = row_time
        if earliest > 0:
            cache[key] = entries
            self._register_clean_up(key, earliest, remove_left)
        else:
            timer_state.pop(key, None)
            cache.pop(key, None)

    def process_watermark(self, timestamp: int) -> None:
        """Timers fire at the input's watermark; the output's is held back by the join's largest relative size."""
        self.current_watermark = timestamp
        if self.time_service_manager is not None:
            self.time_service_manager.advance_watermark(timestamp)
        self._collector.flush(self.output)
        self.output.emit_watermark(timestamp if timestamp == LONG_MAX else timestamp - self.delay)

    def output_watermark(self) -> int:
        wm = self.current_watermark
        return wm if wm == LONG_MAX or wm < -(1 << 62) else wm - self.delay


def interval_join(
    left: DataStream[Any],
    right: DataStream[Any],
    *,
    left_key_indices: Sequence[int],
    right_key_indices: Sequence[int],
    lower_bound: int,
    upper_bound: int,
    left_arity: int,
    right_arity: int,
    join_type: str = "INNER",
    condition: Callable[[Any, Any], bool] | None = None,
    min_clean_up_interval: int = 0,
    field_names: Sequence[str] | None = None,
    filter_null_keys: bool = False,
) -> DataStream[Any]:
    """``l JOIN r ON l.k = r.k AND l.ts BETWEEN r.ts + lower_bound AND r.ts + upper_bound`` (event time)."""
    sel1, sel2 = RowKeySelector(left_key_indices), RowKeySelector(right_key_indices)
    operator = RowTimeIntervalJoin(
        sel1,
        sel2,
        lower_bound=lower_bound,
        upper_bound=upper_bound,
        join_type=join_type,
        left_arity=left_arity,
        right_arity=right_arity,
        condition=condition,
        min_clean_up_interval=min_clean_up_interval,
        field_names=field_names,
        filter_null_keys=filter_null_keys,
    )
    keyed_right = right.key_by(sel2)
    return left.key_by(sel1)._two_input(
        "IntervalJoin", keyed_right.get_transformation(), operator, None, "interval_join()"
    )
