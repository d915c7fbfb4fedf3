"""A trigger test harness (Flink's ``TriggerTestHarness``): in-memory window state and timer sets, one key."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from strom.api._time import LONG_MIN
from strom.api.state import ReducingStateDescriptor, StateDescriptor, ValueStateDescriptor
from strom.api.windowing import Trigger, TriggerResult, Window

NO_TIMESTAMP = LONG_MIN  # what Flink's StreamRecord without a timestamp reports


class FakeReducingState:
    def __init__(self, cells: dict[tuple[str, Window], Any], name: str, window: Window, reduce: Callable[..., Any]):
        self._cells, self._key, self._reduce = cells, (name, window), reduce

    def get(self) -> Any:
        return self._cells.get(self._key)

    def add(self, value: Any) -> None:
        current = self._cells.get(self._key)
        self._cells[self._key] = value if current is None else self._reduce(current, value)

    def clear(self) -> None:
        self._cells.pop(self._key, None)


class FakeValueState:
    def __init__(self, cells: dict[tuple[str, Window], Any], name: str, window: Window, default: Any):
        self._cells, self._key, self._default = cells, (name, window), default

    def value(self) -> Any:
        return self._cells.get(self._key, self._default)

    def update(self, value: Any) -> None:
        if value is None:
            self.clear()
        else:
            self._cells[self._key] = value

    def clear(self) -> None:
        self._cells.pop(self._key, None)


class FakeTriggerContext:
    """Flink's ``TestTriggerContext``: timers and state scoped to ``window``."""

    def __init__(self, harness: TriggerTestHarness, window: Window) -> None:
        self.harness, self.window = harness, window

    def get_current_processing_time(self) -> int:
        return self.harness.processing_time

    def get_current_watermark(self) -> int:
        return self.harness.watermark

    def register_processing_time_timer(self, time: int) -> None:
        self.harness.processing_time_timers.add((time, self.window))

    def register_event_time_timer(self, time: int) -> None:
        self.harness.event_time_timers.add((time, self.window))

    def delete_processing_time_timer(self, time: int) -> None:
        self.harness.processing_time_timers.discard((time, self.window))

    def delete_event_time_timer(self, time: int) -> None:
        self.harness.event_time_timers.discard((time, self.window))

    def get_partitioned_state(self, descriptor: StateDescriptor) -> Any:
        cells = self.harness.cells
        if isinstance(descriptor, ReducingStateDescriptor):
            return FakeReducingState(cells, descriptor.name, self.window, descriptor.get_reduce_callable())
        if isinstance(descriptor, ValueStateDescriptor):
            return FakeValueState(cells, descriptor.name, self.window, descriptor.default_value)
        raise TypeError(f"the harness has no {descriptor.kind} state")


class FakeOnMergeContext(FakeTriggerContext):
    """Flink's ``TestOnMergeContext``: merges state of ``merged_windows`` into the target window."""

    def __init__(self, harness: TriggerTestHarness, window: Window, merged_windows: Iterable[Window]) -> None:
        super().__init__(harness, window)
        self.merged_windows = list(merged_windows)

    def merge_partitioned_state(self, descriptor: StateDescriptor) -> None:
        if not isinstance(descriptor, ReducingStateDescriptor):
            raise TypeError("the given state descriptor does not refer to a mergeable state")
        reduce = descriptor.get_reduce_callable()
        merged = None
        for source in self.merged_windows:
            value = self.harness.cells.pop((descriptor.name, source), None)
            if value is not None:
                merged = value if merged is None else reduce(merged, value)
        if merged is not None:
            FakeReducingState(self.harness.cells, descriptor.name, self.window, reduce).add(merged)


class TriggerTestHarness:
    """Drives one trigger for one key: elements, watermarks, processing time, merges and clears."""

    def __init__(self, trigger: Trigger[Any, Any]) -> None:
        self.trigger = trigger
        self.cells: dict[tuple[str, Window], Any] = {}
        self.event_time_timers: set[tuple[int, Window]] = set()
        self.processing_time_timers: set[tuple[int, Window]] = set()
        self.watermark = LONG_MIN
        self.processing_time = 0

    def num_state_entries(self, window: Window | None = None) -> int:
        return sum(1 for (_, w) in self.cells if window is None or w == window)

    def num_event_time_timers(self, window: Window | None = None) -> int:
        return sum(1 for (_, w) in self.event_time_timers if window is None or w == window)

    def num_processing_time_timers(self, window: Window | None = None) -> int:
        return sum(1 for (_, w) in self.processing_time_timers if window is None or w == window)

    def process_element(self, element: Any, window: Window, timestamp: int = NO_TIMESTAMP) -> TriggerResult:
        return self.trigger.on_element(element, timestamp, window, FakeTriggerContext(self, window))

    @staticmethod
    def _due(timers: set[tuple[int, Window]], time: int) -> list[tuple[int, Window]]:
        due = sorted((t for t in timers if t[0] <= time), key=lambda t: t[0])
        timers.difference_update(due)
        return due

    def advance_watermark(self, time: int) -> list[tuple[Window, TriggerResult]]:
        self.watermark = time
        return [(w, self.invoke_on_event_time(ts, w)) for ts, w in self._due(self.event_time_timers, time)]

    def advance_processing_time(self, time: int) -> list[tuple[Window, TriggerResult]]:
        self.processing_time = time
        fired = self._due(self.processing_time_timers, time)
        return [(w, self.trigger.on_processing_time(ts, w, FakeTriggerContext(self, w))) for ts, w in fired]

    @staticmethod
    def _single(firings: list[tuple[Window, TriggerResult]], window: Window) -> TriggerResult:
        assert len(firings) == 1, f"must have exactly one timer firing; fired: {firings}"
        assert firings[0][0] == window, "trigger fired for another window"
        return firings[0][1]

    def advance_watermark_for(self, time: int, window: Window) -> TriggerResult:
        return self._single(self.advance_watermark(time), window)

    def advance_processing_time_for(self, time: int, window: Window) -> TriggerResult:
        return self._single(self.advance_processing_time(time), window)

    def invoke_on_event_time(self, timestamp: int, window: Window) -> TriggerResult:
        return self.trigger.on_event_time(timestamp, window, FakeTriggerContext(self, window))

    def merge_windows(self, target: Window, merged_windows: Iterable[Window]) -> None:
        """``on_merge``, then ``clear`` on every merged window, as Flink's WindowOperator does."""
        merged = list(merged_windows)
        self.trigger.on_merge(target, FakeOnMergeContext(self, target, merged))
        for window in merged:
            self.clear_trigger_state(window)

    def clear_trigger_state(self, window: Window) -> None:
        self.trigger.clear(window, FakeTriggerContext(self, window))


class FixedProcessingTime:
    """A ``WindowAssignerContext`` / ``EvictorContext`` with a settable clock."""

    def __init__(self, now: int = 0, watermark: int = LONG_MIN) -> None:
        self.now, self.watermark = now, watermark

    def get_current_processing_time(self) -> int:
        return self.now

    def get_current_watermark(self) -> int:
        return self.watermark
