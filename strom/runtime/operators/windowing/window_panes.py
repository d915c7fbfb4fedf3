"""``WindowPanes``: the window contents of the
:class:`~strom.runtime.operators.windowing.aligned_window_operator.AlignedWindowOperator` (windows of one size by
event time, the ``EventTimeTrigger``, no evictor), kept window by window, and :func:`pane_adder`, its one pane update.

The :class:`~strom.runtime.operators.windowing.window_operator.WindowOperator` keeps a pane per key and window in
the keyed backend (key → window → pane) with one event-time timer per key and window. With windows of one size
every key's pane of a window fires at the same time — the window's end — and is cleaned up at the same time — its
end plus the allowed lateness — so the aligned operator keeps ``window → key → pane`` and *one* entry per window and
time in a queue of its own: adding an element is one lookup by key in the pane map of its window, firing a window
walks its pane map.

The two layouts hold the same state. For a snapshot the panes are written into the backend's table as the
``WindowOperator`` keeps them, with the timers it would have registered (:meth:`WindowPanes.materialize`,
undone by :meth:`WindowPanes.dematerialize` once the snapshot is taken), so checkpoints and savepoints do not depend
on the operator, and key groups are redistributed as usual. On restore, :meth:`WindowPanes.absorb` takes the restored
panes and timers back.

Whether a window still has to fire is the same for all its keys, except after a restore that merged key groups of
subtasks whose watermarks had passed the window's end in one and not in the other (or restored a window that had
fired, with allowed lateness, under a watermark that starts again at ``Long.MIN_VALUE``): such a window keeps the
keys still waiting for it to fire (``pending``), and a key that gets an element before it fires waits too — the
``EventTimeTrigger`` registers the timer with every element.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, MutableMapping
from typing import Any

from strom.api.eventtime import LONG_MAX
from strom.api.state import AggregateFunction
from strom.api.windowing.windows import TimeWindow
from strom.runtime.operators.timer_service import TimerQueue, _TimerQueue

__all__ = ["CLEANUP", "FIRE", "PaneAdder", "PaneUpdateError", "WindowPanes", "pane_adder"]

FIRE = "fire"  # the window fires at its max timestamp (without allowed lateness: and is cleaned up)
CLEANUP = "cleanup"  # the window's state is cleared at its max timestamp plus the allowed lateness


class WindowPanes:
    """Window → key → pane, and the times at which windows fire and are cleaned up."""

    __slots__ = ("lateness", "panes", "pending", "queue")

    def __init__(self, allowed_lateness: int) -> None:
        self.lateness = allowed_lateness
        self.panes: dict[TimeWindow, dict[Any, Any]] = {}
        #: time -> {(FIRE or CLEANUP, window): None}, in order of time
        self.queue = _TimerQueue()
        #: windows whose firing is pending for these keys only (after some restores); absent: for all their keys
        self.pending: dict[TimeWindow, set[Any]] = {}

    def open_window(self, window: TimeWindow, watermark: int) -> dict[Any, Any]:
        """The pane map of a window that has none yet; it fires at its end unless the watermark passed that (with
        allowed lateness: a late element's pane fires at once instead), and is cleaned up at its cleanup time."""
        panes = self.panes[window] = {}
        max_ts = window[1] - 1
        if max_ts > watermark:
            self.queue.add(max_ts, FIRE, window)
        if self.lateness:
            cleanup = max_ts + self.lateness
            if cleanup < LONG_MAX:
                self.queue.add(cleanup, CLEANUP, window)
        return panes

    def await_firing(self, window: TimeWindow, key: Any) -> None:
        """``key`` got an element of a window waiting to fire for some keys only: it waits too (its timer would)."""
        self.pending[window].add(key)
        self.queue.add(window[1] - 1, FIRE, window)

    def due(self, watermark: int) -> tuple[int, list[tuple[str, TimeWindow]]] | None:
        """The earliest time ``<= watermark`` with windows to fire or clean up, and those entries (taken off)."""
        queue = self.queue
        time = queue.peek()
        if time is None or time > watermark:
            return None
        bucket = queue.buckets[time]
        entries = list(bucket)
        bucket.clear()
        return time, entries

    # -- snapshots -----------------------------------------------------------------------------------------------
    def materialize(self, table: MutableMapping[Any, MutableMapping[Any, Any]], timers: TimerQueue) -> None:
        """Write the panes into ``table`` (key → window → pane) and the timers of the ``WindowOperator`` into
        ``timers`` (one per key, window and time), for a snapshot."""
        for window, panes in self.panes.items():
            for key, pane in panes.items():
                per_key = table.get(key)
                if per_key is None:
                    table[key] = {window: pane}
                else:
                    per_key[window] = pane  # a RocksDB table's per-key mapping writes through
        for time, action, window in self.queue.items():
            keys: Any = self.panes.get(window)
            if not keys:
                continue
            if action == FIRE and self.lateness:
                keys = self.pending.get(window, keys)  # only the keys still waiting to fire have that timer
            for key in keys:
                timers.add(time, key, window)

    def dematerialize(self, table: MutableMapping[Any, MutableMapping[Any, Any]], timers: TimerQueue) -> None:
        """After the snapshot: the backend's copies go again (the aligned operator keeps its own)."""
        table.clear()
        timers.clear()

    def absorb(self, table: MutableMapping[Any, MutableMapping[Any, Any]], timers: TimerQueue) -> None:
        """Take over the restored panes of ``table`` and the restored timers of ``timers`` (both emptied)."""
        for key, per_key in table.items():
            for window, pane in per_key.items():
                panes = self.panes.get(window)
                if panes is None:
                    panes = self.panes[window] = {}
                panes[key] = pane
        table.clear()
        waiting: dict[TimeWindow, set[Any]] = {}
        for time, key, window in timers.items():
            max_ts = window[1] - 1
            if time == max_ts:
                waiting.setdefault(window, set()).add(key)
                self.queue.add(time, FIRE, window)
            if self.lateness and time == max_ts + self.lateness:
                self.queue.add(time, CLEANUP, window)
        timers.clear()
        for window, panes in self.panes.items():
            keys = waiting.get(window, set())
            if len(keys) != len(panes) or not keys.issuperset(panes):
                self.pending[window] = keys & panes.keys()


# -- the pane update --------------------------------------------------------------------------------------------------
#: ``add(panes, keys, values)``: each value into the pane of its key in one window's pane map; ``keys`` is a list, or
#: ``map(key_selector, values)``: the key selector then runs in the adder's loop, and no list of keys is built
PaneAdder = Callable[[dict[Any, Any], Iterable[Any], Iterable[Any]], None]
_MISSING: Any = object()


class PaneUpdateError(Exception):
    """A pane update failed on ``record`` (the key selector or the user's reduce or aggregate function raised, or
    the key is not hashable); the original exception is the ``__cause__``."""

    def __init__(self, record: Any) -> None:
        super().__init__("pane update failed")
        self.record = record


def pane_adder(
    contents: str,
    *,
    reduce: Callable[[Any, Any], Any] | None = None,
    aggregate: AggregateFunction[Any, Any, Any] | None = None,
) -> PaneAdder:
    """The aligned operator's one pane update, for its pane kind (``contents``): an accumulator
    (``"aggregate"``), the reduced value (``"reduce"``) or the element list (``"list"``). It takes the elements of
    one window at a time, so the per-element work is the key, the user's function and two dict operations.

    A failure raises :class:`PaneUpdateError` naming the record: the one being added, or — the key selector failed
    in ``keys`` — the one the loop did not take (``zip`` asks ``keys`` first)."""
    if contents == "aggregate":
        if aggregate is None:
            raise ValueError("expected an aggregate function for aggregate panes; got None")
        return _aggregate_adder(aggregate)
    if contents == "reduce":
        if reduce is None:
            raise ValueError("expected a reduce function for reduce panes; got None")
        return _reduce_adder(reduce)
    return _add_to_lists


def _aggregate_adder(aggregate: AggregateFunction[Any, Any, Any]) -> PaneAdder:
    create, add = aggregate.create_accumulator, aggregate.add

    def add_to_accumulators(panes: dict[Any, Any], keys: Iterable[Any], values: Iterable[Any]) -> None:
        get, missing = panes.get, _MISSING
        rest = iter(values)
        try:
            for k, v in zip(keys, rest, strict=True):
                try:  # costs nothing until it raises
                    old = get(k, missing)
                    panes[k] = add(v, create() if old is missing else old)
                except Exception as exc:
                    raise PaneUpdateError(v) from exc
        except PaneUpdateError:
            raise
        except Exception as exc:  # the key selector
            raise PaneUpdateError(next(rest, None)) from exc

    return add_to_accumulators


def _reduce_adder(reduce: Callable[[Any, Any], Any]) -> PaneAdder:
    def add_to_reduced(panes: dict[Any, Any], keys: Iterable[Any], values: Iterable[Any]) -> None:
        get, missing = panes.get, _MISSING
        rest = iter(values)
        try:
            for k, v in zip(keys, rest, strict=True):
                try:
                    old = get(k, missing)
                    panes[k] = v if old is missing else reduce(old, v)
                except Exception as exc:
                    raise PaneUpdateError(v) from exc
        except PaneUpdateError:
            raise
        except Exception as exc:  # the key selector
            raise PaneUpdateError(next(rest, None)) from exc

    return add_to_reduced


def _add_to_lists(panes: dict[Any, Any], keys: Iterable[Any], values: Iterable[Any]) -> None:
    get = panes.get
    rest = iter(values)
    try:
        for k, v in zip(keys, rest, strict=True):
            try:
                old = get(k)
                if old is None:
                    panes[k] = [v]
                else:
                    old.append(v)
            except Exception as exc:
                raise PaneUpdateError(v) from exc
    except PaneUpdateError:
        raise
    except Exception as exc:  # the key selector
        raise PaneUpdateError(next(rest, None)) from exc
