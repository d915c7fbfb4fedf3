"""Keyed process operators whose timers emit rows stamped with their own rowtime (Flink's
``TimestampedCollector.setAbsoluteTimestamp`` in ``TemporalRowTimeJoinOperator`` and ``CepOperator``): the
function's ``on_timer`` returns ``(row, timestamp)`` pairs, so a row a watermark releases keeps its event time
(the left row's rowtime of a temporal join, the last row's of a match) for the window operators downstream."""

from __future__ import annotations

from strom.api.functions import TimeDomain
from strom.runtime.operators.co.co_process import KeyedCoProcessOperator
from strom.runtime.operators.keyed import KeyedProcessOperator, UserTimersOperator
from strom.runtime.operators.timer_service import InternalTimer

__all__ = ["RowtimeKeyedCoProcessOperator", "RowtimeKeyedProcessOperator"]


class _RowtimeStampedTimers(UserTimersOperator):
    def _fire(self, timer: InternalTimer, domain: TimeDomain) -> None:
        on_timer = self._on_timer
        ctx = self._ctx
        if on_timer is None or ctx is None:
            return
        ctx.key = timer.key
        ctx.domain = domain
        ctx.current_timestamp = timer.timestamp if domain is TimeDomain.EVENT_TIME else None
        try:
            pairs = on_timer(timer.timestamp, ctx)
            if pairs is not None:
                rows = [(row, stamp) for row, stamp in pairs]
                if rows:
                    self._collector.add_timestamped([r for r, _ in rows], [t for _, t in rows])
        except Exception as exc:
            raise self.user_error(
                exc, None, role=f"on_timer of operator '{self.name}' (key {timer.key!r:.60})"
            ) from exc


class RowtimeKeyedProcessOperator(_RowtimeStampedTimers, KeyedProcessOperator):
    """A ``KeyedProcessOperator`` whose ``on_timer`` yields ``(row, rowtime)`` pairs."""


class RowtimeKeyedCoProcessOperator(_RowtimeStampedTimers, KeyedCoProcessOperator):
    """A ``KeyedCoProcessOperator`` whose ``on_timer`` yields ``(row, rowtime)`` pairs."""
