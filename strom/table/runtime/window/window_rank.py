"""Window Top-N and window deduplication (Flink's ``WindowRankOperator`` with the ``WindowRankProcessor``, and
``RowTimeWindowDeduplicateOperator``), over rows that carry their window (``window_end`` column, as after a window
TVF or a window aggregate).

* **Top-N**: ``ROW_NUMBER() OVER (PARTITION BY window_start, window_end[, keys] ORDER BY ...) AS rn ... WHERE rn <=
  N`` (or ``BETWEEN start AND end``). Per key and window (namespaced table ``window-rank``: key → window end → rows in
  arrival order; trimmed to the ``rank_end`` best rows as they come) the rows wait for the window's end; then they go
  out sorted (ties in arrival order, as Flink's buffer keeps them), numbered from 1, those ranked ``rank_start`` to
  ``rank_end`` — with the number appended when ``output_rank_number``.
* **Deduplication**: ``ROW_NUMBER() OVER (PARTITION BY window_start, window_end[, keys] ORDER BY rowtime ASC|DESC)
  = 1``: per key and window one row (table ``window-dedup``): the first by the order column (``keep_last_row=False``:
  an equal one later does not replace it) or the last (``True``: an equal one later replaces it), emitted at the
  window's end.

Rows of a window whose end the watermark passed are late: dropped and counted (``numLateRecordsDropped``). Emitted
rows carry ``window_time`` as their timestamp.

Factories (what the planner calls)::

    window_top_n(stream, *, window_end_index, partition_indices, sort_keys, rank_end, rank_start=1,
                 output_rank_number=True, time_zone=None, field_names=None) -> DataStream[Row]
    window_deduplicate(stream, *, window_end_index, partition_indices, order_index, keep_last_row,
                       time_zone=None, field_names=None) -> DataStream[Row]

``sort_keys`` is a sequence of ``(column, ascending, nulls_first)``; Flink's default NULL order is first for ASC,
last for DESC (:func:`sort_key`).
"""

from __future__ import annotations

import functools
from abc import abstractmethod
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from strom.exceptions import InvalidProgramError
from strom.runtime.operators.timer_service import InternalTimer, InternalTimerService
from strom.table.runtime.window.table_stream_operator import (
    RowKeySelector,
    TableStreamOperator,
    ns_get,
    ns_pop,
    ns_put,
)
from strom.table.runtime.window.time_window_util import TimeShift, datetime_to_millis

if TYPE_CHECKING:
    from strom.api.datastream import DataStream

__all__ = [
    "WindowDeduplicateOperator",
    "WindowRankOperator",
    "sort_key",
    "sorted_rows",
    "window_deduplicate",
    "window_top_n",
]

SortKey = tuple[int, bool, bool]
TIMERS = "window-timers"


def sort_key(column: int, ascending: bool = True, nulls_first: bool | None = None) -> SortKey:
    """``(column, ascending, nulls_first)`` with Flink's default NULL order (ASC: first, DESC: last)."""
    return column, ascending, ascending if nulls_first is None else nulls_first


def _comparator(keys: Sequence[SortKey]) -> Callable[[Any, Any], int]:
    def compare(a: Any, b: Any) -> int:
        for column, ascending, nulls_first in keys:
            x, y = a[column], b[column]
            if x is None or y is None:
                if x is None and y is None:
                    continue
                return (-1 if x is None else 1) * (1 if nulls_first else -1)
            if x != y:
                less = x < y
                return (-1 if less else 1) * (1 if ascending else -1)
        return 0

    return compare


def sorted_rows(rows: list[Any], keys: Sequence[SortKey]) -> list[Any]:
    """``rows`` in the order of ``keys``, equal rows in their given order (a stable sort)."""
    return sorted(rows, key=functools.cmp_to_key(_comparator(keys)))


class _WindowBufferOperator(TableStreamOperator):
    """Rows buffered per key and attached window until the window's end."""

    state_name = ""

    def __init__(
        self,
        key_selector: RowKeySelector,
        *,
        window_end_index: int,
        time_zone: str | None = None,
        field_names: Sequence[str] | None = None,
    ) -> None:
        super().__init__(field_names=field_names)
        self.key_selector = key_selector
        self.window_end_index = window_end_index
        self.shift = TimeShift(time_zone)
        self._table: Any = {}
        self._timers: InternalTimerService | None = None

    def open(self) -> None:
        assert self.keyed_backend is not None
        self._table = self.keyed_backend.get_namespaced_table(self.state_name)
        self._timers = self.get_internal_timer_service(TIMERS, self)
        super().open()

    def process_batch(self, batch: list[Any]) -> None:
        key_of, index = self.key_selector, self.window_end_index
        backend, timers = self.keyed_backend, self._timers
        assert key_of is not None and backend is not None and timers is not None
        fired, to_epoch, wm = self.shift.is_window_fired, self.shift.to_epoch, self.current_watermark
        groups: dict[tuple[Any, int], list[Any]] = {}
        for row in batch:
            end = datetime_to_millis(row[index])
            if fired(end, wm):
                self.num_late_records_dropped += 1
                continue
            groups.setdefault((key_of(row), end), []).append(row)
        for (key, end), rows in groups.items():
            backend.current_key = key
            self._add(key, end, rows)
            timers.register_event_time_timer(end, to_epoch(end - 1))
        self._records_in += len(batch)

    @abstractmethod
    def _add(self, key: Any, window_end: int, rows: list[Any]) -> None:
        """Buffer ``rows`` of ``key``'s window ending at ``window_end`` (the key is current)."""

    @abstractmethod
    def on_event_time(self, timer: InternalTimer) -> None:
        """The window ``timer`` names ended: emit its rows and drop its state."""


class WindowRankOperator(_WindowBufferOperator):
    """``ROW_NUMBER()`` Top-N per key and window, emitted at the window's end."""

    state_name = "window-rank"

    def __init__(
        self,
        key_selector: RowKeySelector,
        *,
        window_end_index: int,
        sort_keys: Sequence[SortKey],
        rank_end: int,
        rank_start: int = 1,
        output_rank_number: bool = True,
        time_zone: str | None = None,
        field_names: Sequence[str] | None = None,
    ) -> None:
        super().__init__(key_selector, window_end_index=window_end_index, time_zone=time_zone, field_names=field_names)
        if not 1 <= rank_start <= rank_end:
            raise InvalidProgramError(
                f"expected a rank range 1 <= start <= end; got {rank_start}..{rank_end}; hint: WHERE rn <= 3 is "
                "rank_start=1, rank_end=3"
            )
        self.name = "WindowRank"
        self.sort_keys: list[SortKey] = [(int(c), bool(a), bool(n)) for c, a, n in sort_keys]
        self.rank_start, self.rank_end = rank_start, rank_end
        self.output_rank_number = output_rank_number

    def _add(self, key: Any, window_end: int, rows: list[Any]) -> None:
        buffer = ns_get(self._table, key, window_end) or []
        buffer.extend(rows)
        if len(buffer) > 2 * self.rank_end:  # never ranked within rank_end again: trimmed
            buffer = sorted_rows(buffer, self.sort_keys)[: self.rank_end]
        ns_put(self._table, key, window_end, buffer)

    def on_event_time(self, timer: InternalTimer) -> None:
        rows = ns_pop(self._table, timer.key, timer.namespace)
        if not rows:
            return
        time_ms = timer.timestamp
        ranked = sorted_rows(rows, self.sort_keys)
        for rn in range(self.rank_start, min(self.rank_end, len(ranked)) + 1):
            row = ranked[rn - 1]
            values = [*row._values, rn] if self.output_rank_number else list(row._values)
            self.emit(values, time_ms, row._row_kind)


class WindowDeduplicateOperator(_WindowBufferOperator):
    """The first (or last) row per key and window by ``order_index``, emitted at the window's end."""

    state_name = "window-dedup"

    def __init__(
        self,
        key_selector: RowKeySelector,
        *,
        window_end_index: int,
        order_index: int,
        keep_last_row: bool,
        time_zone: str | None = None,
        field_names: Sequence[str] | None = None,
    ) -> None:
        super().__init__(key_selector, window_end_index=window_end_index, time_zone=time_zone, field_names=field_names)
        self.name = "WindowDeduplicate"
        self.order_index = order_index
        self.keep_last_row = keep_last_row

    def _add(self, key: Any, window_end: int, rows: list[Any]) -> None:
        kept = ns_get(self._table, key, window_end)
        i, last = self.order_index, self.keep_last_row
        for row in rows:  # Flink's DeduplicateFunctionHelper.isDuplicate on rowtime
            if kept is None or (row[i] >= kept[i] if last else row[i] < kept[i]):
                kept = row
        ns_put(self._table, key, window_end, kept)

    def on_event_time(self, timer: InternalTimer) -> None:
        row = ns_pop(self._table, timer.key, timer.namespace)
        if row is not None:
            self.emit(list(row._values), timer.timestamp, row._row_kind)


def window_top_n(
    stream: DataStream[Any],
    *,
    window_end_index: int,
    partition_indices: Sequence[int],
    sort_keys: Sequence[SortKey],
    rank_end: int,
    rank_start: int = 1,
    output_rank_number: bool = True,
    time_zone: str | None = None,
    field_names: Sequence[str] | None = None,
) -> DataStream[Any]:
    """Window Top-N: the ``rank_start..rank_end`` best rows per window and partition key, at the window's end."""
    selector = RowKeySelector(partition_indices)
    operator = WindowRankOperator(
        selector,
        window_end_index=window_end_index,
        sort_keys=sort_keys,
        rank_end=rank_end,
        rank_start=rank_start,
        output_rank_number=output_rank_number,
        time_zone=time_zone,
        field_names=field_names,
    )
    return stream.key_by(selector)._one_input("WindowRank", operator)


def window_deduplicate(
    stream: DataStream[Any],
    *,
    window_end_index: int,
    partition_indices: Sequence[int],
    order_index: int,
    keep_last_row: bool,
    time_zone: str | None = None,
    field_names: Sequence[str] | None = None,
) -> DataStream[Any]:
    """Window deduplication: the first (or last) row per window and key, at the window's end."""
    selector = RowKeySelector(partition_indices)
    operator = WindowDeduplicateOperator(
        selector,
        window_end_index=window_end_index,
        order_index=order_index,
        keep_last_row=keep_last_row,
        time_zone=time_zone,
        field_names=field_names,
    )
    return stream.key_by(selector)._one_input("WindowDeduplicate", operator)
