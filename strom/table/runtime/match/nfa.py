"""Flink's ``NFA`` (``org.apache.flink.cep.nfa``) for a pattern of quantified variables, as a pure state machine.

A :class:`ComputationState` is a partial match: the element it is at, how many rows that element took, and the
events taken so far (variable, event id) — the rows themselves live once in a shared buffer (Flink's
``SharedBuffer``; the operator keeps it in keyed state). Each event, in event-time order:

1. partial matches older than ``WITHIN`` are dropped (``timestamp - start >= within``, Flink's ``advanceTime``,
   also run when the watermark passes), which may release completed matches they held back;
2. every partial match (and the start state, always kept) follows its edges on the event — *take* into its
   element while it has room and the variable's condition holds, *proceed* (an ε-move) to the next element once
   it has its minimum — so a reluctant element branches into both; a greedy loop or range adds ``NOT its
   condition`` to the next element's first take (Flink's ``updateWithGreedyCondition``), so it keeps the row;
3. a state whose take reaches the end of the pattern, or can proceed there over optional elements, is a match;
4. matches are emitted in the order of their first event, but only once no partial match started earlier is
   pending (Flink's ``processMatchesAccordingToSkipStrategy``); each emitted match prunes the partial and pending
   matches its ``AFTER MATCH SKIP`` strategy passes over.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from strom.table.runtime.match.pattern import PatternElement

__all__ = ["NFA", "AfterMatchSkip", "ComputationState", "EventId", "MatchView", "NFAState"]

EventId = tuple[int, int]  # (event timestamp, arrival sequence): the order of events in a partition
Condition = Callable[["MatchView"], bool]


@dataclass(frozen=True, slots=True)
class ComputationState:
    """A partial match at ``element`` having taken ``count`` rows there; ``events``: (variable, event id)."""

    element: int
    count: int
    events: tuple[tuple[int, EventId], ...] = ()

    @property
    def start(self) -> EventId | None:
        return self.events[0][1] if self.events else None

    def order(self) -> tuple[int, int]:
        """Flink's ``COMPUTATION_STATE_COMPARATOR``: by first event; the start state last."""
        start = self.start
        return start if start is not None else (2**63 - 1, 2**31)


@dataclass(slots=True)
class NFAState:
    """The keyed state of one partition: partial matches and completed matches waiting to be emitted."""

    partial: list[ComputationState] = field(default_factory=lambda: [ComputationState(0, 0)])
    completed: list[ComputationState] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class AfterMatchSkip:
    """``AFTER MATCH SKIP``: ``PAST LAST ROW``, ``TO NEXT ROW``, ``TO FIRST`` / ``TO LAST`` a variable."""

    kind: str = "PAST_LAST_ROW"  # PAST_LAST_ROW | TO_NEXT_ROW | TO_FIRST | TO_LAST
    variable: int | None = None

    def pruning_id(self, match: ComputationState) -> tuple[EventId | None, bool]:
        """The event before which (``True``: at or before which) partial matches are dropped; None: none."""
        if self.kind == "PAST_LAST_ROW":
            return max(e for _, e in match.events), True
        if self.kind == "TO_NEXT_ROW":
            return match.events[0][1], True
        taken = [e for v, e in match.events if v == self.variable]
        if not taken:
            return None, False
        target = taken[0] if self.kind == "TO_FIRST" else taken[-1]
        if self.kind == "TO_FIRST" and target == match.events[0][1]:
            raise RuntimeError("Could not skip to first element of a match.")
        return target, False


class MatchView:
    """The rows of a (partial) match by variable, for conditions and measures: ``current`` is the row being
    tested as variable ``current_var`` (it counts among that variable's rows), None for a completed match."""

    __slots__ = ("buffer", "current", "current_var", "events")

    def __init__(
        self,
        events: tuple[tuple[int, EventId], ...],
        buffer: Callable[[EventId], Any],
        current: Any = None,
        current_var: int = -1,
    ) -> None:
        self.events = events
        self.buffer = buffer
        self.current = current
        self.current_var = current_var

    def rows(self, variable: int | None) -> list[Any]:
        """The rows of ``variable`` in order (None: all rows of the match)."""
        found = [self.buffer(e) for v, e in self.events if variable is None or v == variable]
        if self.current is not None and (variable is None or variable == self.current_var):
            found.append(self.current)
        return found

    def last_row(self) -> Any:
        return self.current if self.current is not None else self.buffer(self.events[-1][1])


class NFA:
    """``elements`` with one condition per element (None: always true), ``within`` ms (None: unbounded)."""

    def __init__(
        self,
        elements: Sequence[PatternElement],
        conditions: Sequence[Condition | None],
        within: int | None = None,
        skip: AfterMatchSkip | None = None,
    ) -> None:
        self.elements = tuple(elements)
        self.conditions = tuple(conditions)
        self.within = within
        self.skip = skip or AfterMatchSkip()
        n = len(self.elements)
        # optional_tail[i]: elements i.. are all optional (a state there can proceed to the end)
        self.optional_tail = [all(e.min == 0 for e in self.elements[i:]) for i in range(n + 1)]
        self.variables = {e.name: i for i, e in enumerate(self.elements)}

    def process(
        self, state: NFAState, event: EventId, row: Any, buffer: Callable[[EventId], Any]
    ) -> list[ComputationState]:
        """Feeds one event; returns the matches to emit, in order (``state`` is updated in place)."""
        emitted = self.advance_time(state, event[0])
        retained: list[ComputationState] = []
        found: list[ComputationState] = []
        for partial in state.partial:
            if partial.start is None:
                retained.append(partial)
            for next_state, final in self._next_states(partial, event, row, buffer):
                (found if final else retained).append(next_state)
        state.completed.extend(found)
        state.completed.sort(key=ComputationState.order)
        retained.sort(key=ComputationState.order)
        state.partial = retained
        return emitted + self._emit(state)

    def advance_time(self, state: NFAState, timestamp: int) -> list[ComputationState]:
        """Drops the partial matches ``WITHIN`` or more before ``timestamp`` (Flink's ``advanceTime``): completed
        matches they held back are emitted now."""
        if self.within is None:
            return []
        within = self.within
        kept = [p for p in state.partial if p.start is None or timestamp - p.start[0] < within]
        if len(kept) == len(state.partial):
            return []
        state.partial = kept
        return self._emit(state)

    def _take(self, partial: ComputationState, element: int, row: Any, buffer: Callable[[EventId], Any]) -> bool:
        """Whether the row satisfies ``element``'s condition (and, entering it after a greedy quantified
        element, not that element's: the greedy one keeps the row)."""
        view = MatchView(partial.events, buffer, row, element)
        condition = self.conditions[element]
        if condition is not None and not condition(view):
            return False
        if element > 0 and self.elements[element - 1].keeps_rows:
            previous = self.conditions[element - 1]
            if previous is None or previous(MatchView(partial.events, buffer, row, element - 1)):
                return False
        return True

    def _next_states(
        self, partial: ComputationState, event: EventId, row: Any, buffer: Callable[[EventId], Any]
    ) -> list[tuple[ComputationState, bool]]:
        out: list[tuple[ComputationState, bool]] = []
        element, count = partial.element, partial.count
        while element < len(self.elements):
            spec = self.elements[element]
            entering = count == 0
            room = spec.max is None or count < spec.max
            accepts = self._take if entering else self._loop
            if room and accepts(partial, element, row, buffer):
                events = (*partial.events, (element, event))
                taken = count + 1
                at, n = (element + 1, 0) if taken == spec.max else (element, taken)
                moved = ComputationState(at, n, events)
                if at < len(self.elements):
                    out.append((moved, False))
                if taken >= spec.min and self.optional_tail[element + 1]:
                    out.append((moved, True))  # Flink's findFinalStateAfterProceed
            if count < spec.min:
                break
            element, count = element + 1, 0  # proceed: an ε-move to the next element, on the same row
        return out

    def _loop(self, partial: ComputationState, element: int, row: Any, buffer: Callable[[EventId], Any]) -> bool:
        condition = self.conditions[element]
        return condition is None or condition(MatchView(partial.events, buffer, row, element))

    def _emit(self, state: NFAState) -> list[ComputationState]:
        emitted: list[ComputationState] = []
        while state.completed:
            earliest = state.completed[0]
            pending = [p for p in state.partial if p.start is not None]
            if pending and earliest.order() > pending[0].order():
                break
            state.completed.pop(0)
            emitted.append(earliest)
            pruning, inclusive = self.skip.pruning_id(earliest)
            if pruning is not None:
                state.partial = [p for p in state.partial if not _pruned(p, pruning, inclusive)]
                state.completed = [c for c in state.completed if not _pruned(c, pruning, inclusive)]
        return emitted


def _pruned(state: ComputationState, pruning: EventId, inclusive: bool) -> bool:
    start = state.start
    if start is None:
        return False
    return start <= pruning if inclusive else start < pruning
