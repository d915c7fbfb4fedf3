"""``AlignedWindowOperator``: tumbling and sliding event-time windows with the ``EventTimeTrigger`` and no evictor
(strom's name; Flink's table runtime has the idea as its ``SlicingWindowOperator`` / ``WindowAggOperator``).

Windows of one size by event time fire for every key at the same time — the window's end — and are cleaned up at
the same time — the end plus the allowed lateness. So the panes are kept window by window
(:class:`~strom.runtime.operators.windowing.window_panes.WindowPanes`: window → key → pane, one firing and one
cleanup entry per window instead of a timer per key and window), a batch's elements go into them window by window
(each window's in arrival order) through one pane adder
(:func:`~strom.runtime.operators.windowing.window_panes.pane_adder`), and a watermark fires the windows it passed
window by window. When user code fails, the earliest failing record of the batch is named, as the
``WindowOperator`` (record by record) names it. No trigger context per element: this is what the
:class:`~strom.runtime.operators.windowing.window_operator.WindowOperator` does with the ``EventTimeTrigger``,
results, late data, allowed lateness and metrics included. ``strom.api.windowed_stream`` picks this operator when
the graph is built (:func:`~strom.api.windowed_stream.uses_aligned_window_operator`).

Everything else — contexts, the window function, late-data handling, the timer service and its callbacks — is the
``WindowOperator``'s, inherited. The snapshot format is the ``WindowOperator``'s too: the panes and the timers it
would have registered are written into the keyed backend while a snapshot is taken, and taken back on restore,
so a savepoint restores into either operator. BATCH execution set after the window was built (the rule picks
the ``WindowOperator`` for BATCH) hands the panes to the timer service at the end of input, which fires them key
by key in Flink's batch order, as the ``WindowOperator`` would.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from itertools import chain, pairwise
from typing import TYPE_CHECKING, Any, NoReturn

from strom.api._time import java_rem
from strom.api.eventtime import LONG_MAX
from strom.api.windowing.assigners import SlidingEventTimeWindows, TumblingEventTimeWindows
from strom.api.windowing.windows import TimeWindow
from strom.exceptions import InvalidProgramError
from strom.runtime.operators.windowing.window_operator import WindowOperator
from strom.runtime.operators.windowing.window_panes import FIRE, PaneUpdateError, WindowPanes, pane_adder
from strom.runtime.streamrecord import timestamps_of

if TYPE_CHECKING:
    from strom.runtime.checkpoint.snapshot import OperatorSnapshot

__all__ = ["AlignedWindowOperator"]

_WINDOW_CACHE_SIZE = 64
# a slide interval's windows: the open ones (window, its pane map, waits to fire for some keys only), those behind
# the watermark within the allowed lateness, and whether any window is not late
_SlidePlan = tuple[list[tuple[TimeWindow, dict[Any, Any], bool]], list[TimeWindow], bool]


class AlignedWindowOperator(WindowOperator):
    """Takes the ``WindowOperator``'s arguments; the assigner is a ``TumblingEventTimeWindows`` (aligned) or a
    ``SlidingEventTimeWindows``, the trigger an ``EventTimeTrigger``, and there is no evictor."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        assigner = self.assigner
        if type(assigner) not in (TumblingEventTimeWindows, SlidingEventTimeWindows) or self.evictor is not None:
            raise InvalidProgramError(
                "expected tumbling or sliding event-time windows without an evictor in the AlignedWindowOperator; "
                f"got {assigner!r} with evictor {self.evictor!r}; hint: build window operators with "
                "strom.api.windowed_stream.window_operator(...), which picks the WindowOperator for these"
            )
        self._sliding = assigner if isinstance(assigner, SlidingEventTimeWindows) else None
        if isinstance(assigner, TumblingEventTimeWindows):
            self._size, self._offset = assigner.size, java_rem(assigner.global_offset, assigner.size)
        elif self._sliding is not None:
            self._size, self._offset = self._sliding.slide, self._sliding.offset  # the slide intervals
        self._store = WindowPanes(self.allowed_lateness)
        self._add_to_panes = pane_adder(self.contents, reduce=self.reduce_function, aggregate=self.aggregate_function)
        # the tumbling windows by start: one object per window, so the pane maps of a window are found by an
        # identity check (not a comparison of large ints)
        self._windows: dict[int, TimeWindow] = {}

    def open(self) -> None:
        super().open()
        self._store.absorb(self._table, self.timer_service._event)  # what a restore brought

    # -- elements ------------------------------------------------------------------------------------
    def process_batch(self, batch: list[Any]) -> None:
        timestamps = timestamps_of(batch)
        if timestamps is not None:
            if self._sliding is None:
                self._process_tumbling(batch, timestamps)
            else:
                self._process_sliding(batch, timestamps, self._sliding)
        else:  # no timestamps at all: the assigner refuses the first record, as in the WindowOperator
            self._process_general(batch, None)
        self._records_in += len(batch)
        self._collector.flush(self.output)

    def _process_tumbling(self, batch: list[Any], timestamps: list[Any]) -> None:
        """One window per element. The elements go into groups by window (a run of elements in one window shares
        the window: event time mostly advances), then each group into its window's pane map through the pane adder,
        which runs the key selector. Elements of a window the watermark passed are late, or fire the window at once
        within the allowed lateness, one by one in order."""
        size, offset = self._size, self._offset
        wm = self.current_watermark
        windows = self._windows
        if len(windows) > _WINDOW_CACHE_SIZE:
            windows.clear()
        groups: dict[int, tuple[TimeWindow, list[Any]]] = {}  # by window start: the window, its elements in order
        w: Any = None
        add: Callable[[Any], None] = _discard
        start, end = 1, 0  # the current window [start, end); none yet
        behind = False
        failures: list[tuple[Exception, Any]] = []
        v = t = None
        try:
            for v, t in zip(batch, timestamps, strict=True):
                # timestamps are large ints: comparing them allocates nothing, arithmetic does
                if not start <= t < end:
                    start = t - (t - offset) % size
                    end = start + size
                    w = windows.get(start)
                    if w is None:
                        w = windows[start] = TimeWindow(start, end)
                    behind = end - 1 <= wm
                    if not behind:
                        grouped = groups.get(start)
                        if grouped is None:
                            grouped = groups[start] = (w, [])
                        add = grouped[1].append
                if behind:  # the window's end is behind the watermark: late, or fires at once
                    self._add_behind(self._key(v), v, t, w)
                else:
                    add(v)
        except Exception as failed:
            exc, v = _unwrap(failed, v)
            failures.append((_no_timestamp(self.name, v) if t is None else self._explain(exc, v), v))
        for w, values in groups.values():
            try:
                self._add_group(w, values)
            except PaneUpdateError as failed:
                exc, v = _unwrap(failed, None)
                failures.append((self._explain(exc, v), v))
        if failures:
            self._raise_first(batch, failures)

    def _add_group(self, w: TimeWindow, values: list[Any]) -> None:
        """Elements of a tumbling window the watermark has not passed: into its pane map (opened if new)."""
        store = self._store
        panes = store.panes.get(w)
        if panes is None:
            panes = store.open_window(w, self.current_watermark)
        if w in store.pending:  # the window waits to fire for some keys only (a restore): now for these too
            keys = self._keys_of(values)
            self._add_to_panes(panes, keys, values)
            for k in keys:
                store.await_firing(w, k)
        else:
            self._add_to_panes(panes, map(self._key, values), values)

    def _keys_of(self, values: list[Any]) -> list[Any]:
        key_of = self._key
        keys: list[Any] = []
        v = None
        try:
            for v in values:
                keys.append(key_of(v))
        except Exception as exc:
            raise PaneUpdateError(v) from exc
        return keys

    def _process_sliding(self, batch: list[Any], timestamps: list[Any], assigner: SlidingEventTimeWindows) -> None:
        """Several windows per element. The elements of one slide interval share their windows — of the part of it
        before and of the part from ``size % slide`` on, when the size is no multiple of the slide — so the plan of
        each interval — which windows are open (with their pane maps), which are behind the watermark — is made once
        per batch. The elements go into each open window's pane map window by window, in order: a window takes the
        runs of elements whose plan has it."""
        key_of = self._key
        slide, offset = self._size, self._offset
        rest = assigner.size % slide  # where in a slide interval its oldest window ends (0: at its end)
        lateness, wm = self.allowed_lateness, self.current_watermark
        plans: dict[int, _SlidePlan] = {}
        runs: list[tuple[int, _SlidePlan]] = []  # where a run of elements with one plan starts, its plan
        keys: list[Any] = []
        add_key = keys.append
        start, end = 1, 0  # the current run's (part of a) slide interval [start, end); none yet
        behind: list[TimeWindow] = []
        live = other = False  # other: the plan has windows behind the watermark, or none that is not late
        failures: list[tuple[Exception, Any]] = []
        v = None
        try:
            for v, t in zip(batch, timestamps, strict=True):
                if t is None:
                    raise _no_timestamp(self.name, v)
                if not start <= t < end:  # timestamps are large ints: comparing them allocates nothing
                    start = t - (t - offset) % slide
                    if t - start < rest:
                        end = start + rest
                    else:
                        start, end = start + rest, start + slide
                    plan = plans.get(start)
                    if plan is None:
                        plan = plans[start] = self._slide_plan(t, assigner)
                    runs.append((len(keys), plan))
                    _, behind, live = plan
                    other = bool(behind) or not live
                k = key_of(v)
                add_key(k)
                if other:
                    for w in behind:
                        self._add_and_fire(k, v, w)  # EventTimeTrigger: behind the watermark, it fires at once
                    if not live and t + lateness <= wm:
                        self._late(v, t)
        except Exception as failed:
            exc, v = _unwrap(failed, v)
            failures.append((self._explain(exc, v), v))
        failures[:0] = self._add_runs(batch, keys, runs)  # an element's adds come before its other work
        if failures:
            self._raise_first(batch, failures)

    def _add_runs(
        self, batch: list[Any], keys: list[Any], runs: list[tuple[int, _SlidePlan]]
    ) -> list[tuple[Exception, Any]]:
        """Each run of elements into the pane maps of its plan's open windows, window by window; the failures."""
        runs.append((len(keys), ([], [], False)))
        by_window: dict[TimeWindow, tuple[dict[Any, Any], bool, list[tuple[int, int]]]] = {}
        for (lo, (open_windows, _, _)), (hi, _) in pairwise(runs):
            for w, panes, waiting in open_windows:
                taken = by_window.get(w)
                if taken is None:
                    by_window[w] = (panes, waiting, [(lo, hi)])
                else:
                    taken[2].append((lo, hi))
        failures: list[tuple[Exception, Any]] = []
        for w, (panes, waiting, spans) in by_window.items():
            try:
                self._add_spans(w, panes, waiting, keys, batch, spans)
            except PaneUpdateError as failed:
                exc, v = _unwrap(failed, None)
                failures.append((self._explain(exc, v), v))
        return failures

    def _add_spans(
        self,
        w: TimeWindow,
        panes: dict[Any, Any],
        waiting: bool,
        keys: list[Any],
        batch: list[Any],
        spans: list[tuple[int, int]],
    ) -> None:
        """The elements of ``spans`` of the batch (their keys in ``keys``) into the pane map of ``w``, in order."""
        if len(spans) == 1:
            lo, hi = spans[0]
            span_keys: Iterable[Any] = keys[lo:hi]
            values: Iterable[Any] = batch[lo:hi]
        else:
            span_keys = chain.from_iterable(keys[lo:hi] for lo, hi in spans)
            values = chain.from_iterable(batch[lo:hi] for lo, hi in spans)
        if waiting:  # the window waits to fire for some keys only (a restore): now for these too
            span_keys = list(span_keys)
            for k in span_keys:
                self._store.await_firing(w, k)
        self._add_to_panes(panes, span_keys, values)

    def _raise_first(self, batch: list[Any], failures: list[tuple[Exception, Any]]) -> NoReturn:
        """The failure of the earliest record, which the WindowOperator (record by record) would have raised."""
        position = {id(v): i for i, v in reversed(list(enumerate(batch)))}
        error, v = min(failures, key=lambda f: position.get(id(f[1]), len(batch)))
        raise self.user_error(error, batch, v) from error

    def _slide_plan(self, timestamp: int, assigner: SlidingEventTimeWindows) -> _SlidePlan:
        """The windows of ``timestamp`` that are open (each with its pane map and whether it waits to fire for some
        keys only), those behind the watermark but within the allowed lateness, and whether any is not late."""
        store = self._store
        wm = self.current_watermark
        open_windows: list[tuple[TimeWindow, dict[Any, Any], bool]] = []
        behind: list[TimeWindow] = []
        for w in assigner._windows_of(timestamp):
            max_ts = w[1] - 1
            if max_ts + self.allowed_lateness <= wm:
                continue  # the window is late: its state is gone
            if max_ts <= wm:
                behind.append(w)
                continue
            panes = store.panes.get(w)
            if panes is None:
                panes = store.open_window(w, wm)
            open_windows.append((w, panes, w in store.pending))
        return open_windows, behind, bool(open_windows or behind)

    def _add_behind(self, k: Any, v: Any, t: int, w: TimeWindow) -> None:
        """An element of a window whose end the watermark has passed: dropped as late once its cleanup time has
        passed too; otherwise (allowed lateness) added, and the window fires at once."""
        if w[1] - 1 + self.allowed_lateness <= self.current_watermark:
            self._late(v, t)  # the window's state is gone
        else:
            self._add_and_fire(k, v, w)

    def _add_and_fire(self, k: Any, v: Any, w: TimeWindow) -> None:
        """An element within the allowed lateness: into the pane, which the EventTimeTrigger fires at once."""
        store = self._store
        panes = store.panes.get(w)
        if panes is None:
            panes = store.open_window(w, self.current_watermark)
        self._add_to_panes(panes, [k], [v])  # its PaneUpdateError: the caller names the record
        backend = self.keyed_backend
        assert backend is not None
        backend.current_key = k
        self._emit(k, w, self._pane_contents(panes[k]))

    def _pane_contents(self, pane: Any) -> Any:
        """The pane as the window function takes it: the accumulator's result or the reduced value as a
        one-element list, or the elements (``_fire_window`` does the same inline, per key)."""
        agg = self.aggregate_function if self.contents == "aggregate" else None
        if agg is not None:
            return [agg.get_result(pane)]
        return [pane] if self.contents == "reduce" else pane

    # -- firing --------------------------------------------------------------------------------------
    def process_watermark(self, timestamp: int) -> None:
        self.current_watermark = timestamp
        if timestamp == LONG_MAX and self.timer_service.batch_order:
            # BATCH execution: the timer service fires the end of input key by key (Flink's batch order)
            self._store.materialize(self._table, self.timer_service._event)
            self._store = WindowPanes(self.allowed_lateness)
        else:
            self._fire_due(timestamp)
        super().process_watermark(timestamp)  # timers, then the watermark after what it fired

    def _fire_due(self, watermark: int) -> None:
        """The windows whose end (fire) or cleanup time the watermark reached, in order of time."""
        store = self._store
        while (due := store.due(watermark)) is not None:
            for action, w in due[1]:
                if action == FIRE:
                    self._fire_window(w, cleanup=self.allowed_lateness == 0)
                else:
                    self._cleanup_window(w)

    def _fire_window(self, w: TimeWindow, *, cleanup: bool) -> None:
        """What the EventTimeTrigger's timers of ``w`` do at its end, for every key waiting: emit the pane through
        the window function (stamped with the window's max timestamp); ``cleanup``: clear the window's state."""
        store = self._store
        panes = store.panes.pop(w, None) if cleanup else store.panes.get(w)
        waiting = store.pending.pop(w, None)
        if not panes:
            return
        agg = self.aggregate_function if self.contents == "aggregate" else None
        get_result = agg.get_result if agg is not None else None
        one = self.contents == "reduce"
        wf = self.window_function
        process = wf.keyed_process  # a ProcessWindowFunction's ``process``, called without the adapter
        fn = wf.direct_call
        clear = wf._clear if cleanup else None
        out: list[Any] = []
        extend = out.extend
        ctx = self.ctx
        ctx._window = w
        backend = self.keyed_backend
        assert backend is not None
        key = None
        try:
            for key, pane in panes.items():
                backend.current_key = key
                ctx.key = key
                if waiting is None or key in waiting:
                    # _pane_contents(pane), inline: a call per pane would cost as much as one per element
                    contents = [get_result(pane)] if get_result is not None else [pane] if one else pane
                    results = process(key, ctx, contents) if process is not None else fn(key, w, ctx, contents)
                    if results is not None:
                        extend(results)
                if clear is not None:
                    clear(ctx)
        except Exception as exc:
            role = f"the window function of operator '{self.name}' (key {key!r:.60})"
            raise self.user_error(exc, None, role=role) from exc
        if out:
            self._collector.add_all(out, w[1] - 1)

    def _cleanup_window(self, w: TimeWindow) -> None:
        """The cleanup time of ``w`` (with allowed lateness): its panes go, its per-window function state too."""
        store = self._store
        panes = store.panes.pop(w, None)
        store.pending.pop(w, None)
        clear = self.window_function._clear
        if not panes or clear is None:
            return
        ctx = self.ctx
        ctx._window = w
        backend = self.keyed_backend
        assert backend is not None
        key = None
        try:
            for key in panes:
                backend.current_key = key
                ctx.key = key
                clear(ctx)
        except Exception as exc:
            role = f"the window function of operator '{self.name}' (key {key!r:.60})"
            raise self.user_error(exc, None, role=role) from exc

    # -- checkpoints ---------------------------------------------------------------------------------
    def snapshot_state(self, checkpoint_id: int, timestamp_ms: int) -> OperatorSnapshot | None:
        # the backend holds the panes and timers only while the snapshot is taken, as the WindowOperator keeps them
        if not self._store.panes:  # nothing to write (or not opened yet): the backend's table and timers are empty
            return super().snapshot_state(checkpoint_id, timestamp_ms)
        timers = self.timer_service._event
        self._store.materialize(self._table, timers)
        try:
            return super().snapshot_state(checkpoint_id, timestamp_ms)
        finally:
            self._store.dematerialize(self._table, timers)


def _discard(value: Any) -> None:
    """Where the first element's key would go before its window is known: never called."""


def _unwrap(exc: Exception, record: Any) -> tuple[Exception, Any]:
    """The user's exception and its record: a pane update names the record it failed on."""
    if isinstance(exc, PaneUpdateError) and isinstance(exc.__cause__, Exception):
        return exc.__cause__, exc.record
    return exc, record


def _no_timestamp(operator: str, value: Any) -> InvalidProgramError:
    return InvalidProgramError(
        f"expected records with event-time timestamps in the event-time window operator '{operator}'; got "
        f"{value!r:.80} without one; hint: call assign_timestamps_and_watermarks(...) before the window"
    )
