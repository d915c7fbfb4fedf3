"""What the SQL time operators share (Flink's ``TableStreamOperator``): keys of rows, the keyed backend and its
tables, event time from record timestamps, window properties as SQL values, and output rows.

* **Keys.** :class:`RowKeySelector` picks the key columns of a row as a tuple (``()`` for none): the stream is
  ``key_by`` it, so state and timers are per key and key group — checkpoints, rescaling and RocksDB as for any keyed
  operator.
* **State.** Operators keep their state in the keyed backend's tables (``key → value``, and ``key → namespace →
  value`` with a window end as namespace); :func:`ns_put` / :func:`ns_pop` write through (a RocksDB table hands out
  copies, so what changed is always stored back).
* **Event time.** A row's rowtime is its record timestamp (epoch ms, set by the scan's watermark assigner); a batch
  without timestamps takes it from the rowtime column (:meth:`TableStreamOperator.rowtimes`).
* **Window properties.** :class:`WindowProperties` turns a window ``[start, end)`` in local milliseconds into the
  values ``window_start``, ``window_end`` (``TIMESTAMP(3)``: naive local datetimes) and ``window_time`` (the rowtime's
  type: ``end - 1 ms``, for ``TIMESTAMP_LTZ`` the naive UTC datetime of that instant), and the epoch milliseconds of
  ``window_time`` — the timestamp of the rows a window emits.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, MutableMapping, Sequence
from typing import Any, Protocol

from strom.api.row import Row, RowKind
from strom.exceptions import InvalidProgramError
from strom.runtime.operators.base import StreamingRuntimeContext, StreamOperator
from strom.runtime.operators.collector import TimestampedCollector
from strom.runtime.operators.timer_service import InternalTimer
from strom.runtime.operators.two_input import ensure_keyed_backend
from strom.runtime.streamrecord import timestamps_of
from strom.table.runtime.window.time_window_util import TimeShift, datetime_to_millis, millis_to_datetime

__all__ = [
    "ACCUMULATE_KINDS",
    "AggsHandleFunction",
    "RowKeySelector",
    "TableStreamOperator",
    "WindowProperties",
    "fast_key",
    "keys_of",
    "make_row",
    "ns_get",
    "ns_pop",
    "ns_put",
]

_INSERT = RowKind.INSERT
_new = object.__new__


def make_row(values: list[Any], fields: list[str] | None = None, kind: RowKind = _INSERT) -> Row:
    """A row of ``values`` (the list itself, not a copy), built without ``Row.__init__``'s argument handling."""
    row: Row = _new(Row)
    row._values = values
    if fields is not None:
        row._fields = fields
    row._row_kind = kind
    return row


class RowKeySelector:
    """The key of a row: the tuple of its columns ``indices`` (``()`` when there are none). ``RowKeySelector(indices)``
    builds the variant for that many columns (a per-record call, so each is one expression)."""

    __slots__ = ("indices",)
    indices: tuple[int, ...]

    def __new__(cls, indices: Sequence[int]) -> RowKeySelector:
        indices = tuple(indices)
        kind = _BY_ARITY.get(len(indices), _KeyN) if cls is RowKeySelector else cls
        self = object.__new__(kind)
        self.indices = indices
        return self

    def __call__(self, row: Row) -> tuple[Any, ...]:
        values = row._values
        return tuple([values[i] for i in self.indices])

    def get_key(self, row: Row) -> tuple[Any, ...]:
        return self(row)

    def __reduce__(self) -> tuple[Any, ...]:
        return (RowKeySelector, (self.indices,))

    def __repr__(self) -> str:
        return f"RowKeySelector({list(self.indices)})"


class _KeyN(RowKeySelector):
    __slots__ = ()


class _Key0(RowKeySelector):
    __slots__ = ()

    def __call__(self, row: Row) -> tuple[Any, ...]:
        return ()


class _Key1(RowKeySelector):
    __slots__ = ()

    def __call__(self, row: Row) -> tuple[Any, ...]:
        return (row._values[self.indices[0]],)


class _Key2(RowKeySelector):
    __slots__ = ()

    def __call__(self, row: Row) -> tuple[Any, ...]:
        values, (i, j) = row._values, self.indices
        return (values[i], values[j])


_BY_ARITY: dict[int, type[RowKeySelector]] = {0: _Key0, 1: _Key1, 2: _Key2}


def fast_key(selector: RowKeySelector | None) -> Callable[[Row], tuple[Any, ...]]:
    """The key function an operator's loop calls: the selector (one call per row), ``()`` without one."""
    return selector if selector is not None else _Key0(())


def keys_of(selector: Callable[[Row], tuple[Any, ...]], batch: list[Row]) -> list[tuple[Any, ...]]:
    """The key of each row of ``batch``: for one key column in one comprehension (no call per row)."""
    if type(selector) is _Key1:
        k = selector.indices[0]
        return [(row._values[k],) for row in batch]
    return list(map(selector, batch))


def ns_get(table: MutableMapping[Any, Any], key: Any, namespace: Any) -> Any:
    """The value of ``key`` in ``namespace``, or ``None``."""
    per_key = table.get(key)
    return None if per_key is None else per_key.get(namespace)


def ns_put(table: MutableMapping[Any, Any], key: Any, namespace: Any, value: Any) -> None:
    """Store ``value`` for ``key`` in ``namespace`` (written through on RocksDB)."""
    per_key = table.get(key)
    if per_key is None:
        table[key] = {namespace: value}
    else:
        per_key[namespace] = value


def ns_pop(table: MutableMapping[Any, Any], key: Any, namespace: Any) -> Any:
    """Remove and return the value of ``key`` in ``namespace`` (``None`` if absent); a key left empty goes."""
    per_key = table.get(key)
    if per_key is None:
        return None
    value = per_key.pop(namespace, None)
    if not per_key:
        table.pop(key, None)
    return value


class WindowProperties:
    """``window_start``, ``window_end``, ``window_time`` of windows given in local milliseconds (cached per window)."""

    __slots__ = ("_cache", "shift")

    def __init__(self, shift: TimeShift) -> None:
        self.shift = shift
        self._cache: dict[tuple[int, int], tuple[datetime.datetime, datetime.datetime, datetime.datetime, int]] = {}

    def of(self, start: int, end: int) -> tuple[datetime.datetime, datetime.datetime, datetime.datetime, int]:
        """``(window_start, window_end, window_time, window_time's epoch ms)``."""
        cached = self._cache.get((start, end))
        if cached is None:
            time_ms = self.shift.to_epoch(end - 1)
            cached = (millis_to_datetime(start), millis_to_datetime(end), millis_to_datetime(time_ms), time_ms)
            if len(self._cache) > 1024:
                self._cache.clear()
            self._cache[(start, end)] = cached
        return cached


class TableStreamOperator(StreamOperator):
    """A keyed one- or two-input SQL operator: its keyed backend, a collector of output rows with timestamps, the
    timers fired by the watermark before it goes on, and the late rows it dropped (``numLateRecordsDropped``)."""

    key_selector: RowKeySelector | None = None

    def __init__(self, *, rowtime_index: int = -1, field_names: Sequence[str] | None = None) -> None:
        super().__init__()
        self.rowtime_index = rowtime_index
        self.field_names = list(field_names) if field_names is not None else None
        self._collector: TimestampedCollector = TimestampedCollector()
        self.num_late_records_dropped = 0

    def setup(self, runtime_context: StreamingRuntimeContext, output: Any) -> None:
        if self.key_selector is not None or getattr(self, "key_selector1", None) is not None:
            ensure_keyed_backend(self, runtime_context)
        super().setup(runtime_context, output)

    def rowtimes(self, batch: list[Any], *, side: str = "") -> list[Any]:
        """The rowtime (epoch ms) of each row of ``batch``: its record timestamps, else its rowtime column."""
        timestamps = timestamps_of(batch)
        if timestamps is not None:
            return timestamps
        index = self.rowtime_index
        if index < 0:
            raise InvalidProgramError(
                f"expected rows with event timestamps in {side or 'the input'} of '{self.name}'; got rows without "
                "them and no rowtime column; hint: assign_timestamps_and_watermarks(...) from the rowtime column, "
                "or pass rowtime_index="
            )
        return [None if (v := r[index]) is None else datetime_to_millis(v) for r in batch]

    def process_watermark(self, timestamp: int) -> None:
        self.current_watermark = timestamp
        if self.time_service_manager is not None:
            self.time_service_manager.advance_watermark(timestamp)
        self._collector.flush(self.output)  # what the timers emitted precedes the watermark
        self.output.emit_watermark(timestamp)

    def on_processing_time(self, timer: InternalTimer) -> None:
        """The SQL time operators work in event time only."""

    def emit(self, values: list[Any], timestamp: int | None, kind: RowKind = _INSERT) -> None:
        self._collector.add(make_row(values, self.field_names, kind), timestamp)


class AggsHandleFunction(Protocol):
    """The aggregates of a SQL operator (Flink's ``AggsHandleFunction``; the structural twin of
    ``strom.table.runtime.aggs_handle.AggsHandle``, whose handles the planner passes): accumulators are a picklable
    list, changed in place."""

    def create_accumulators(self) -> list[Any]: ...

    def accumulate(self, accs: list[Any], row: Row) -> None: ...

    def retract(self, accs: list[Any], row: Row) -> None: ...

    def merge(self, accs: list[Any], other: list[Any]) -> None: ...

    def get_value(self, accs: list[Any]) -> tuple[Any, ...]: ...

    def record_count_is_zero(self, accs: list[Any]) -> bool: ...


#: the row kinds an aggregate accumulates (the others retract), Flink's ``isAccumulateMsg``
ACCUMULATE_KINDS = frozenset({RowKind.INSERT, RowKind.UPDATE_AFTER})
