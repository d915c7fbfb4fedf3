"""Flink's ``CepOperator`` for ``MATCH_RECOGNIZE`` (``StreamExecMatch``): per partition key, rows wait in keyed
state until the watermark passes their rowtime, then enter the :class:`~strom.table.runtime.match.nfa.NFA` sorted
by rowtime (arrival order within one rowtime); every match the NFA emits becomes one output row (ONE ROW PER
MATCH: the partition columns, then the measures), stamped with the match's last rowtime (run it in
:class:`~strom.table.runtime.rowtime_timers.RowtimeKeyedProcessOperator`). Rows at or behind the watermark when
they arrive are late and dropped, as Flink's. The shared buffer (events by id), the partial and pending matches and
the rows waiting for the watermark are all keyed state, so they checkpoint, restore and rescale with the key."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from strom.api.functions import KeyedProcessFunction, RuntimeContext
from strom.api.row import Row, _create_row
from strom.api.state import MapStateDescriptor, ValueStateDescriptor
from strom.table.runtime.match.match_expression import MatchExpression
from strom.table.runtime.match.nfa import NFA, AfterMatchSkip, EventId, MatchView, NFAState
from strom.table.runtime.match.pattern import PatternElement
from strom.table.runtime.watermark_assigner import to_epoch_millis

__all__ = ["MatchFunction", "MatchSpec"]


@dataclass(frozen=True, slots=True)
class MatchSpec:
    """What the planner hands the operator: the pattern with one DEFINE condition per element (None: TRUE), the
    measures, the skip strategy, WITHIN (ms), and the input's partition and rowtime columns."""

    elements: tuple[PatternElement, ...]
    conditions: tuple[MatchExpression | None, ...]
    measures: tuple[MatchExpression, ...]
    skip: AfterMatchSkip
    within: int | None
    partition_keys: tuple[int, ...]
    rowtime_index: int


class MatchFunction(KeyedProcessFunction[Any, Row, tuple[Row, int]]):
    def __init__(self, spec: MatchSpec) -> None:
        self.spec = spec

    def open(self, runtime_context: RuntimeContext) -> None:
        spec = self.spec
        self.nfa = NFA(spec.elements, spec.conditions, spec.within, spec.skip)
        self.buffer = runtime_context.get_map_state(MapStateDescriptor("shared-buffer"))
        self.waiting = runtime_context.get_map_state(MapStateDescriptor("rows-by-time"))
        self.nfa_state = runtime_context.get_state(ValueStateDescriptor("nfa-state"))
        self.sequence = runtime_context.get_state(ValueStateDescriptor("event-sequence"))

    def process_element(self, value: Row, ctx: KeyedProcessFunction.Context) -> Iterator[tuple[Row, int]] | None:
        rowtime = value._values[self.spec.rowtime_index]
        if rowtime is None:
            return None
        time = to_epoch_millis(rowtime)
        timers = ctx.timer_service()
        if time <= timers.current_watermark():
            return None  # late
        rows = self.waiting.get(time)
        self.waiting.put(time, [*(rows or ()), value])
        timers.register_event_time_timer(time)
        return None

    def on_timer(self, timestamp: int, ctx: KeyedProcessFunction.OnTimerContext) -> Iterator[tuple[Row, int]] | None:
        """The matches' rows, each with its last row's rowtime (see :mod:`strom.table.runtime.rowtime_timers`)."""
        timers = ctx.timer_service()
        watermark = timers.current_watermark()
        times: list[int] = self.waiting.keys()
        ready = sorted(t for t in times if t <= watermark)
        state: NFAState | None = self.nfa_state.value()
        if not ready and (state is None or self.spec.within is None):
            return None
        state = state or NFAState()
        sequence: int = self.sequence.value() or 0
        matches = []
        for time in ready:
            for row in self.waiting.get(time) or ():
                event: EventId = (time, sequence)
                sequence += 1
                self.buffer.put(event, row)
                matches += self.nfa.process(state, event, row, self.buffer.get)
            self.waiting.remove(time)
        matches += self.nfa.advance_time(state, watermark)
        out = [(self._output(match.events), match.events[-1][1][0]) for match in matches]
        self._release_unreferenced(state)
        self._register_timeouts(state, timers)
        self.nfa_state.update(state)
        self.sequence.update(sequence)
        return iter(out)

    def _register_timeouts(self, state: NFAState, timers: Any) -> None:
        """A timer when each partial match times out (``WITHIN``), so its end releases what it held back."""
        within = self.spec.within
        if within is None:
            return
        for start in {p.start[0] for p in state.partial if p.start is not None}:
            timers.register_event_time_timer(start + within)

    def _output(self, events: tuple[tuple[int, EventId], ...]) -> Row:
        view = MatchView(events, self.buffer.get)
        first: Row = view.rows(None)[0]
        keys = [first._values[k] for k in self.spec.partition_keys]
        return _create_row(None, [*keys, *(measure(view) for measure in self.spec.measures)])

    def _release_unreferenced(self, state: NFAState) -> None:
        """Drops the events no partial or pending match refers to (Flink's ``SharedBuffer`` release)."""
        referenced = {e for pm in (*state.partial, *state.completed) for _, e in pm.events}
        events: list[EventId] = self.buffer.keys()
        for event in [e for e in events if e not in referenced]:
            self.buffer.remove(event)
