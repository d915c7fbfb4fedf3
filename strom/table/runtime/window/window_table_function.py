"""The window table-valued functions TUMBLE, HOP and CUMULATE (Flink's ``AlignedWindowTableFunctionOperator``).

    windowed = window_tvf(rows, TumblingSliceAssigner(size=10_000), time_zone=None)

Each row goes out once per window containing its rowtime with three columns appended: ``window_start``,
``window_end`` (``TIMESTAMP(3)``) and ``window_time`` (``window_end - 1 ms``, of the rowtime's type), as Flink's
operator does, at once (no state, no timers; HOP's windows latest first, CUMULATE's smallest first). The output
row's timestamp is ``window_time`` — the new time attribute — and it keeps the input row's kind. A row with a
NULL rowtime is dropped and counted (``numNullRowTimeRecordsDropped``). SESSION, which needs state, is
:func:`~strom.table.runtime.window.session_window.session_window_tvf`.

Factory (what the planner calls)::

    window_tvf(stream, assigner, *, time_zone=None, rowtime_index=-1, field_names=None) -> DataStream[Row]

``assigner`` is a :class:`~strom.table.runtime.window.slice_assigners.TumblingSliceAssigner`, ``HoppingSliceAssigner``
or ``CumulativeSliceAssigner``; ``time_zone`` the session time zone when the rowtime is ``TIMESTAMP_LTZ`` (``None``:
``TIMESTAMP``, no shift); ``rowtime_index`` the rowtime column, read only when records carry no timestamps.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from strom.runtime.streamrecord import with_timestamps
from strom.table.runtime.window.slice_assigners import SliceAssigner
from strom.table.runtime.window.table_stream_operator import TableStreamOperator, WindowProperties, make_row
from strom.table.runtime.window.time_window_util import TimeShift

if TYPE_CHECKING:
    from strom.api.datastream import DataStream

__all__ = ["WindowTableFunctionOperator", "window_tvf"]


class WindowTableFunctionOperator(TableStreamOperator):
    """Appends ``window_start, window_end, window_time`` to each row, once per window of ``assigner``."""

    def __init__(
        self,
        assigner: SliceAssigner,
        *,
        time_zone: str | None = None,
        rowtime_index: int = -1,
        field_names: Sequence[str] | None = None,
    ) -> None:
        super().__init__(rowtime_index=rowtime_index, field_names=field_names)
        self.name = "WindowTableFunction"
        self.assigner = assigner
        self.shift = TimeShift(time_zone)
        self._properties = WindowProperties(self.shift)
        self.num_null_rowtime_records_dropped = 0

    def process_batch(self, batch: list[Any]) -> None:
        assign = self.assigner.assign_windows
        properties = self._properties.of
        to_local = self.shift.to_local
        fields = self.field_names
        out: list[Any] = []
        stamps: list[Any] = []
        for row, t in zip(batch, self.rowtimes(batch), strict=True):
            if t is None:
                self.num_null_rowtime_records_dropped += 1
                continue
            values = row._values
            kind = row._row_kind
            for start, end in assign(to_local(t)):
                ws, we, wt, wt_ms = properties(start, end)
                out.append(make_row([*values, ws, we, wt], fields, kind))
                stamps.append(wt_ms)
        self._records_in += len(batch)
        if out:
            self.output.emit(with_timestamps(out, stamps))


def window_tvf(
    stream: DataStream[Any],
    assigner: SliceAssigner,
    *,
    time_zone: str | None = None,
    rowtime_index: int = -1,
    field_names: Sequence[str] | None = None,
) -> DataStream[Any]:
    """``TABLE(TUMBLE|HOP|CUMULATE(TABLE t, DESCRIPTOR(rowtime), ...))``: the rows of ``stream`` with their windows."""
    operator = WindowTableFunctionOperator(
        assigner, time_zone=time_zone, rowtime_index=rowtime_index, field_names=field_names
    )
    return stream._one_input("WindowTableFunction", operator)
