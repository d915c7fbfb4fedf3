"""Ports Flink's MergingWindowSetTest."""

from __future__ import annotations

import pickle
from collections.abc import Collection
from typing import Any

import pytest

from strom.api.windowing import EventTimeSessionWindows, EventTimeTrigger, MergingWindowAssigner, TimeWindow
from strom.runtime.operators.windowing import MergingWindowSet

pytestmark = pytest.mark.timeout(60)


def tw(start: int, end: int) -> TimeWindow:
    return TimeWindow(start, end)


class RecordingMergeFunction:
    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.target: TimeWindow | None = None
        self.sources: list[TimeWindow] = []
        self.state_window: TimeWindow | None = None
        self.merged_state_windows: list[TimeWindow] = []

    def has_merged(self) -> bool:
        return self.target is not None

    def __call__(
        self, merge_result: TimeWindow, merged: Collection[TimeWindow], state: TimeWindow, merged_states: Any
    ) -> None:
        assert self.target is None, "more than one merge for adding a window should not occur"
        self.target, self.sources, self.state_window = merge_result, list(merged), state
        self.merged_state_windows = list(merged_states)


class NonEagerlyMergingWindowAssigner(MergingWindowAssigner[object, TimeWindow]):
    """Lets windows grow, so windows are merged lazily (a misbehaving assigner, as in Flink's test)."""

    def __init__(self, session_timeout: int) -> None:
        self.session_timeout = session_timeout

    def assign_windows(self, element: object, timestamp: int, context: Any) -> list[TimeWindow]:
        return [TimeWindow(timestamp, timestamp + self.session_timeout)]

    def get_default_trigger(self) -> EventTimeTrigger:
        return EventTimeTrigger.create()

    def is_event_time(self) -> bool:
        return True

    def merge_windows(self, windows: Collection[TimeWindow], callback: Any) -> None:
        earliest = min(windows, key=lambda w: w.start)
        associated = [w for w in windows if earliest.start <= w.start < earliest.end]
        if len(associated) > 1:
            callback(associated, TimeWindow(earliest.start, earliest.end + 1))


def session_set() -> MergingWindowSet[TimeWindow]:
    return MergingWindowSet(EventTimeSessionWindows.with_gap(3))


def test_non_eager_merging() -> None:
    window_set = MergingWindowSet(NonEagerlyMergingWindowAssigner(3000))
    merge = RecordingMergeFunction()
    for window in (tw(0, 2), tw(2, 5), tw(1, 2), tw(10, 12)):
        merge.reset()
        assert window_set.get_state_window(window_set.add_window(window, merge)) is not None


def test_incremental_merging() -> None:
    window_set, merge = session_set(), RecordingMergeFunction()
    assert window_set.add_window(tw(0, 4), merge) == tw(0, 4) and not merge.has_merged()
    assert window_set.get_state_window(tw(0, 4)) == tw(0, 4)

    merge.reset()
    assert window_set.add_window(tw(0, 4), merge) == tw(0, 4) and not merge.has_merged()

    merge.reset()
    assert window_set.add_window(tw(3, 5), merge) == tw(0, 5)
    assert (merge.target, merge.state_window, merge.sources, merge.merged_state_windows) == (
        tw(0, 5),
        tw(0, 4),
        [tw(0, 4)],
        [],
    )
    merge.reset()
    assert window_set.add_window(tw(4, 6), merge) == tw(0, 6)
    assert (merge.target, merge.state_window, merge.sources, merge.merged_state_windows) == (
        tw(0, 6),
        tw(0, 4),
        [tw(0, 5)],
        [],
    )
    assert window_set.get_state_window(tw(0, 6)) == tw(0, 4)

    # windows that fall into the already merged region
    for window in (tw(1, 4), tw(0, 4), tw(3, 5), tw(4, 6)):
        merge.reset()
        assert window_set.add_window(window, merge) == tw(0, 6) and not merge.has_merged()
    assert window_set.get_state_window(tw(0, 6)) == tw(0, 4)

    # windows that don't merge with the first bunch
    merge.reset()
    assert window_set.add_window(tw(11, 14), merge) == tw(11, 14) and not merge.has_merged()
    assert window_set.get_state_window(tw(0, 6)) == tw(0, 4)
    assert window_set.get_state_window(tw(11, 14)) == tw(11, 14)

    # windows that merge with the second bunch
    merge.reset()
    assert window_set.add_window(tw(10, 13), merge) == tw(10, 14)
    assert (merge.target, merge.state_window, merge.sources, merge.merged_state_windows) == (
        tw(10, 14),
        tw(11, 14),
        [tw(11, 14)],
        [],
    )
    merge.reset()
    assert window_set.add_window(tw(12, 15), merge) == tw(10, 15)
    assert (merge.target, merge.state_window, merge.sources) == (tw(10, 15), tw(11, 14), [tw(10, 14)])
    merge.reset()
    assert window_set.add_window(tw(11, 14), merge) == tw(10, 15) and not merge.has_merged()
    assert window_set.get_state_window(tw(0, 6)) == tw(0, 4)
    assert window_set.get_state_window(tw(10, 15)) == tw(11, 14)

    # retire the first batch of windows
    window_set.retire_window(tw(0, 6))
    assert window_set.get_state_window(tw(0, 6)) is None
    assert window_set.get_state_window(tw(10, 15)) == tw(11, 14)
    with pytest.raises(ValueError, match="not in the in-flight window set"):
        window_set.retire_window(tw(0, 6))


def test_late_merging() -> None:
    window_set, merge = session_set(), RecordingMergeFunction()
    for window in (tw(0, 3), tw(5, 8), tw(10, 13)):
        merge.reset()
        assert window_set.add_window(window, merge) == window and not merge.has_merged()
        assert window_set.get_state_window(window) == window

    # a window that merges the later two windows
    merge.reset()
    assert window_set.add_window(tw(8, 10), merge) == tw(5, 13)
    assert merge.target == tw(5, 13) and merge.state_window in (tw(5, 8), tw(10, 13))
    assert set(merge.sources) == {tw(5, 8), tw(10, 13)}
    assert merge.merged_state_windows in ([tw(10, 13)], [tw(5, 8)])
    assert merge.target not in merge.merged_state_windows
    assert window_set.get_state_window(tw(0, 3)) == tw(0, 3)

    for window in (tw(5, 8), tw(8, 10), tw(10, 13)):
        merge.reset()
        assert window_set.add_window(window, merge) == tw(5, 13) and not merge.has_merged()
    assert window_set.get_state_window(tw(5, 13)) in (tw(5, 8), tw(10, 13))

    # a window that merges all of them together
    merge.reset()
    assert window_set.add_window(tw(3, 5), merge) == tw(0, 13)
    assert merge.target == tw(0, 13) and merge.state_window in (tw(0, 3), tw(5, 8), tw(10, 13))
    assert set(merge.sources) == {tw(0, 3), tw(5, 13)}
    assert len(merge.merged_state_windows) == 1 and merge.state_window not in merge.merged_state_windows
    assert window_set.get_state_window(tw(0, 13)) in (tw(0, 3), tw(5, 8), tw(10, 13))
    window_set.validate()


def test_merge_large_window_covering_single_window() -> None:
    window_set, merge = session_set(), RecordingMergeFunction()
    assert window_set.add_window(tw(1, 2), merge) == tw(1, 2) and not merge.has_merged()
    assert window_set.add_window(tw(0, 3), merge) == tw(0, 3) and merge.has_merged()
    assert window_set.get_state_window(tw(0, 3)) == tw(1, 2)
    assert window_set.get_state_window(tw(1, 2)) is None


def test_adding_identical_windows() -> None:
    window_set, merge = session_set(), RecordingMergeFunction()
    for _ in range(2):
        assert window_set.add_window(tw(1, 2), merge) == tw(1, 2) and not merge.has_merged()
        assert window_set.get_state_window(tw(1, 2)) == tw(1, 2)


def test_merge_large_window_covering_multiple_windows() -> None:
    window_set, merge = session_set(), RecordingMergeFunction()
    for window in (tw(1, 3), tw(5, 8), tw(10, 13)):
        assert window_set.add_window(window, merge) == window and not merge.has_merged()
    assert window_set.add_window(tw(0, 13), merge) == tw(0, 13) and merge.has_merged()
    state = window_set.get_state_window(tw(0, 13))
    assert state in (tw(1, 3), tw(5, 8), tw(10, 13))
    assert sorted(merge.merged_state_windows) == sorted({tw(1, 3), tw(5, 8), tw(10, 13)} - {state})
    assert len(window_set) == 1


def test_restore_from_state() -> None:
    restored = {tw(17, 42): tw(42, 17), tw(1, 2): tw(3, 4)}
    window_set = MergingWindowSet(EventTimeSessionWindows.with_gap(3), restored)
    assert window_set.get_state_window(tw(17, 42)) == tw(42, 17)
    assert window_set.get_state_window(tw(1, 2)) == tw(3, 4)
    pairs = MergingWindowSet(EventTimeSessionWindows.with_gap(3), list(restored.items()))
    assert pairs.persist() == restored


def test_persist() -> None:
    window_set, merge = session_set(), RecordingMergeFunction()
    window_set.add_window(tw(1, 2), merge)
    window_set.add_window(tw(17, 42), merge)
    assert window_set.has_updates()
    persisted = window_set.persist()
    assert persisted == {tw(1, 2): tw(1, 2), tw(17, 42): tw(17, 42)}
    assert pickle.loads(pickle.dumps(persisted)) == persisted


def test_persist_only_if_have_updates() -> None:
    restored = {tw(17, 42): tw(42, 17), tw(1, 2): tw(3, 4)}
    window_set = MergingWindowSet(EventTimeSessionWindows.with_gap(3), restored)
    assert window_set.get_state_window(tw(17, 42)) == tw(42, 17)
    assert not window_set.has_updates()
