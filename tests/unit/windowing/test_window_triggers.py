"""Ports Flink's CountTriggerTest, EventTimeTriggerTest, ProcessingTimeTriggerTest, PurgingTriggerTest and
ContinuousEventTimeTriggerTest on an in-memory TriggerTestHarness."""

from __future__ import annotations

from typing import Any

import pytest
from windowing_harness import TriggerTestHarness

from strom.api.windowing import (
    ContinuousEventTimeTrigger,
    ContinuousProcessingTimeTrigger,
    CountTrigger,
    EventTimeTrigger,
    ProcessingTimeTrigger,
    PurgingTrigger,
    TimeWindow,
    Trigger,
    TriggerResult,
)
from strom.exceptions import InvalidProgramError

pytestmark = pytest.mark.timeout(60)

CONTINUE, FIRE, PURGE, FIRE_AND_PURGE = (
    TriggerResult.CONTINUE,
    TriggerResult.FIRE,
    TriggerResult.PURGE,
    TriggerResult.FIRE_AND_PURGE,
)
W02, W24, W46, W04 = TimeWindow(0, 2), TimeWindow(2, 4), TimeWindow(4, 6), TimeWindow(0, 4)
HOUR = 3_600_000


def test_trigger_result_flags() -> None:
    assert [(r.is_fire(), r.is_purge()) for r in (CONTINUE, FIRE, PURGE, FIRE_AND_PURGE)] == [
        (False, False),
        (True, False),
        (False, True),
        (True, True),
    ]


# --- CountTriggerTest ------------------------------------------------------------------------------


def test_count_window_separation_and_firing() -> None:
    h = TriggerTestHarness(CountTrigger.of(3))
    assert h.process_element(1, W02) is CONTINUE
    assert h.process_element(1, W24) is CONTINUE
    assert (h.num_processing_time_timers(), h.num_event_time_timers()) == (0, 0)
    assert (h.num_state_entries(), h.num_state_entries(W02), h.num_state_entries(W24)) == (2, 1, 1)
    assert h.process_element(1, W02) is CONTINUE
    assert h.process_element(1, W02) is FIRE
    assert h.process_element(1, W24) is CONTINUE
    # CountTrigger clears its state in on_element when firing
    assert (h.num_state_entries(), h.num_state_entries(W02), h.num_state_entries(W24)) == (1, 0, 1)
    assert h.process_element(1, W24) is FIRE
    assert h.num_state_entries() == 0


def test_count_clear() -> None:
    h = TriggerTestHarness(CountTrigger.of(3))
    h.process_element(1, W02)
    h.process_element(1, W24)
    h.clear_trigger_state(W24)
    assert (h.num_state_entries(), h.num_state_entries(W02), h.num_state_entries(W24)) == (1, 1, 0)
    h.clear_trigger_state(W02)
    assert h.num_state_entries() == 0


def test_count_merging_windows() -> None:
    h = TriggerTestHarness(CountTrigger.of(3))
    for window in (W02, W24, W46):
        assert h.process_element(1, window) is CONTINUE
    assert h.num_state_entries() == 3
    h.merge_windows(W04, [W02, W24])
    assert (h.num_state_entries(), h.num_state_entries(W04), h.num_state_entries(W46)) == (2, 1, 1)
    assert h.process_element(1, W04) is FIRE
    assert (h.num_state_entries(), h.num_state_entries(W04)) == (1, 0)
    assert h.process_element(1, W46) is CONTINUE
    assert h.process_element(1, W46) is FIRE
    assert h.num_state_entries() == 0


def test_count_merge_subsuming_window() -> None:
    h = TriggerTestHarness(CountTrigger.of(3))
    h.process_element(1, W24)
    h.process_element(1, W46)
    h.merge_windows(TimeWindow(0, 8), [W24, W46])
    assert (h.num_state_entries(), h.num_state_entries(TimeWindow(0, 8))) == (1, 1)
    assert h.process_element(1, TimeWindow(0, 8)) is FIRE
    assert h.num_state_entries() == 0
    assert repr(CountTrigger.of(3)) == "CountTrigger(3)" and CountTrigger.of(3).can_merge()


# --- EventTimeTriggerTest --------------------------------------------------------------------------


def test_event_time_window_separation_and_firing() -> None:
    h = TriggerTestHarness(EventTimeTrigger.create())
    for window in (W02, W02, W02, W24, W24):
        assert h.process_element(1, window) is CONTINUE
    assert (h.num_state_entries(), h.num_processing_time_timers(), h.num_event_time_timers()) == (0, 0, 2)
    assert (h.num_event_time_timers(W02), h.num_event_time_timers(W24)) == (1, 1)
    assert h.advance_watermark_for(2, W02) is FIRE
    assert (h.num_event_time_timers(), h.num_event_time_timers(W02)) == (1, 0)
    assert h.advance_watermark_for(4, W24) is FIRE
    assert h.num_event_time_timers() == 0


def test_event_time_late_element_triggers_immediately() -> None:
    h = TriggerTestHarness(EventTimeTrigger.create())
    h.advance_watermark(2)
    assert h.process_element(1, W02) is FIRE
    assert (h.num_state_entries(), h.num_processing_time_timers(), h.num_event_time_timers()) == (0, 0, 0)


def test_event_time_clear() -> None:
    h = TriggerTestHarness(EventTimeTrigger.create())
    h.process_element(1, W02)
    h.process_element(1, W24)
    h.clear_trigger_state(W24)
    assert (h.num_event_time_timers(), h.num_event_time_timers(W02), h.num_event_time_timers(W24)) == (1, 1, 0)
    h.clear_trigger_state(W02)
    assert h.num_event_time_timers() == 0


def test_event_time_merging_windows() -> None:
    h = TriggerTestHarness(EventTimeTrigger.create())
    assert EventTimeTrigger.create().can_merge()
    h.process_element(1, W02)
    h.process_element(1, W24)
    h.merge_windows(W04, [W02, W24])
    assert (h.num_event_time_timers(), h.num_event_time_timers(W04)) == (1, 1)
    assert h.advance_watermark_for(4, W04) is FIRE
    assert (h.num_state_entries(), h.num_event_time_timers()) == (0, 0)


def test_event_time_merging_late_windows() -> None:
    h = TriggerTestHarness(EventTimeTrigger.create())
    h.process_element(1, W02)
    h.process_element(1, W24)
    h.advance_watermark(10)
    assert h.num_event_time_timers() == 0
    h.merge_windows(W04, [W02, W24])  # a late merged window gets no timer: on_element fires it
    assert h.num_event_time_timers() == 0


# --- ProcessingTimeTriggerTest ---------------------------------------------------------------------


def test_processing_time_window_separation_and_firing() -> None:
    h = TriggerTestHarness(ProcessingTimeTrigger.create())
    for window in (W02, W02, W24):
        assert h.process_element(1, window) is CONTINUE
    assert (h.num_processing_time_timers(), h.num_event_time_timers()) == (2, 0)
    assert h.advance_processing_time_for(2, W02) is FIRE
    assert h.advance_processing_time_for(4, W24) is FIRE
    assert h.num_processing_time_timers() == 0


def test_processing_time_merging_windows_and_late_merge() -> None:
    h = TriggerTestHarness(ProcessingTimeTrigger.create())
    h.process_element(1, W02)
    h.process_element(1, W24)
    h.merge_windows(W04, [W02, W24])
    assert (h.num_processing_time_timers(), h.num_processing_time_timers(W04)) == (1, 1)
    h.advance_processing_time(10)
    h.merge_windows(TimeWindow(0, 6), [W04])
    assert h.num_processing_time_timers() == 0


# --- PurgingTriggerTest ----------------------------------------------------------------------------


class ScriptedTrigger(Trigger[Any, TimeWindow]):
    """Stands in for Flink's mocked trigger: returns ``result`` and registers ``timers`` on elements."""

    def __init__(self) -> None:
        self.result = CONTINUE
        self.event_timers: list[int] = []
        self.processing_timers: list[int] = []
        self.calls: list[str] = []

    def on_element(self, element: Any, timestamp: int, window: TimeWindow, ctx: Any) -> TriggerResult:
        for t in self.event_timers:
            ctx.register_event_time_timer(t)
        for t in self.processing_timers:
            ctx.register_processing_time_timer(t)
        return self.result

    def on_event_time(self, time: int, window: TimeWindow, ctx: Any) -> TriggerResult:
        return self.result

    def on_processing_time(self, time: int, window: TimeWindow, ctx: Any) -> TriggerResult:
        return self.result

    def can_merge(self) -> bool:
        return True

    def on_merge(self, window: TimeWindow, ctx: Any) -> None:
        self.calls.append(f"on_merge {window}")

    def clear(self, window: TimeWindow, ctx: Any) -> None:
        self.calls.append(f"clear {window}")


def test_purging_all_methods_implemented() -> None:
    for name in ("on_element", "on_event_time", "on_processing_time", "can_merge", "on_merge", "clear"):
        assert name in vars(PurgingTrigger), name


def test_purging_forwarding() -> None:
    nested = ScriptedTrigger()
    h = TriggerTestHarness(PurgingTrigger.of(nested))
    for nested_result, expected in [(CONTINUE, CONTINUE), (FIRE, FIRE_AND_PURGE), (FIRE_AND_PURGE,) * 2, (PURGE,) * 2]:
        nested.result = nested_result
        assert h.process_element(1, W02) is expected

    nested.result, nested.event_timers = CONTINUE, [1, 2, 3, 4]
    h.process_element(1, W02)
    assert h.num_event_time_timers(W02) == 4
    for time, (nested_result, expected) in enumerate(
        [(CONTINUE, CONTINUE), (FIRE, FIRE_AND_PURGE), (FIRE_AND_PURGE,) * 2, (PURGE,) * 2], start=1
    ):
        nested.result = nested_result
        assert h.advance_watermark_for(time, W02) is expected

    nested.result, nested.event_timers, nested.processing_timers = CONTINUE, [], [1, 2, 3, 4]
    h.process_element(1, W02)
    assert (h.num_processing_time_timers(W02), h.num_event_time_timers(W02)) == (4, 0)
    for time, (nested_result, expected) in enumerate(
        [(CONTINUE, CONTINUE), (FIRE, FIRE_AND_PURGE), (FIRE_AND_PURGE,) * 2, (PURGE,) * 2], start=1
    ):
        nested.result = nested_result
        assert h.advance_processing_time_for(time, W02) is expected

    h.merge_windows(W02, [TimeWindow(0, 1)])
    h.clear_trigger_state(W02)
    assert nested.calls == [f"on_merge {W02}", f"clear {TimeWindow(0, 1)}", f"clear {W02}"]
    assert PurgingTrigger.of(nested).can_merge() and PurgingTrigger.of(CountTrigger.of(1)).get_nested_trigger()
    assert repr(PurgingTrigger.of(CountTrigger.of(2))) == "PurgingTrigger(CountTrigger(2))"
    with pytest.raises(InvalidProgramError, match="expected a Trigger"):
        PurgingTrigger.of("count")  # type: ignore[arg-type]


# --- ContinuousEventTimeTriggerTest ----------------------------------------------------------------


def test_continuous_trigger_handles_all_on_timer_calls() -> None:
    h = TriggerTestHarness(ContinuousEventTimeTrigger.of(5))
    h.advance_watermark(10)  # the elements now fall into late windows: no trigger state is created
    assert h.process_element(1, W02) is FIRE
    assert h.invoke_on_event_time(20, W02) is CONTINUE  # a GC timer without state must not fail


def test_continuous_window_separation_and_firing() -> None:
    h = TriggerTestHarness(ContinuousEventTimeTrigger.of(HOUR))
    for window in (W02, W02, W02, W24, W24):
        assert h.process_element(1, window) is CONTINUE
    assert (h.num_state_entries(), h.num_processing_time_timers(), h.num_event_time_timers()) == (2, 0, 4)
    assert (h.num_event_time_timers(W02), h.num_event_time_timers(W24)) == (2, 2)

    assert (W02, FIRE) in h.advance_watermark(2)
    assert (h.num_state_entries(), h.num_event_time_timers()) == (2, 3)
    assert (h.num_event_time_timers(W02), h.num_event_time_timers(W24)) == (1, 2)

    assert (W24, FIRE) in h.advance_watermark(4)
    assert (h.num_state_entries(), h.num_event_time_timers()) == (2, 2)


def test_continuous_late_element_triggers_immediately() -> None:
    h = TriggerTestHarness(ContinuousEventTimeTrigger.of(HOUR))
    h.advance_watermark(2)
    assert h.process_element(1, W02) is FIRE
    assert (h.num_state_entries(), h.num_processing_time_timers(), h.num_event_time_timers()) == (0, 0, 0)


def test_continuous_clear() -> None:
    h = TriggerTestHarness(ContinuousEventTimeTrigger.of(HOUR))
    h.process_element(1, W02)
    h.process_element(1, W24)
    h.clear_trigger_state(W24)
    assert (h.num_state_entries(), h.num_event_time_timers()) == (1, 3)
    assert (h.num_event_time_timers(W02), h.num_event_time_timers(W24)) == (2, 1)
    h.clear_trigger_state(W02)
    assert (h.num_state_entries(), h.num_event_time_timers()) == (0, 2)  # doesn't clean up end-of-window timers


def test_continuous_merging_windows() -> None:
    h = TriggerTestHarness(ContinuousEventTimeTrigger.of(HOUR))
    assert ContinuousEventTimeTrigger.of(HOUR).can_merge()
    h.process_element(1, W02)
    h.process_element(1, W24)
    h.merge_windows(W04, [W02, W24])
    assert (h.num_state_entries(), h.num_event_time_timers()) == (1, 5)  # on merging, timers are not cleaned up
    assert (h.num_event_time_timers(W02), h.num_event_time_timers(W24), h.num_event_time_timers(W04)) == (2, 2, 1)
    assert (W04, FIRE) in h.advance_watermark(4)
    assert (h.num_state_entries(), h.num_event_time_timers()) == (1, 1)


def test_continuous_fires_at_interval_and_never_past_window_end() -> None:
    h = TriggerTestHarness(ContinuousEventTimeTrigger.of(10))
    window = TimeWindow(0, 25)
    assert h.process_element(1, window, timestamp=3) is CONTINUE
    assert sorted(t for t, _ in h.event_time_timers) == [10, 24]
    assert h.advance_watermark(10) == [(window, FIRE)]
    assert h.advance_watermark(20) == [(window, FIRE)]
    assert sorted(t for t, _ in h.event_time_timers) == [24]  # min(20 + 10, max_timestamp) == 24
    assert h.advance_watermark(24) == [(window, FIRE)]
    with pytest.raises(InvalidProgramError, match="interval > 0"):
        ContinuousEventTimeTrigger.of(0)


def test_continuous_negative_timestamps_align_like_java() -> None:
    h = TriggerTestHarness(ContinuousEventTimeTrigger.of(10))
    h.process_element(1, TimeWindow(-100, 0), timestamp=-15)
    # Java: -15 - (-15 % 10) + 10 == -15 - (-5) + 10 == 0 -> capped at max_timestamp -1
    assert sorted(t for t, _ in h.event_time_timers) == [-1]


def test_continuous_processing_time_trigger() -> None:
    h = TriggerTestHarness(ContinuousProcessingTimeTrigger.of(10))
    window = TimeWindow(0, 35)
    h.processing_time = 3
    assert h.process_element(1, window) is CONTINUE
    assert h.advance_processing_time(10) == [(window, FIRE)]  # aligned: 3 - 3 % 10 + 10
    assert h.advance_processing_time(30) == [(window, FIRE)]  # the timer at 20; 30 is registered meanwhile
    assert h.advance_processing_time(40) == [(window, FIRE)]  # the timer at 30; the next is capped at 34
    assert sorted(t for t, _ in h.processing_time_timers) == [34]
    # At max_timestamp the trigger re-registers max_timestamp: Flink's window operator clears the window
    # (and deletes that timer) at the same time, its cleanup time.
    assert h.advance_processing_time(50) == [(window, FIRE)]
    assert sorted(t for t, _ in h.processing_time_timers) == [34]
    h.merge_windows(TimeWindow(0, 50), [window])
    assert h.num_processing_time_timers(TimeWindow(0, 50)) == 1
    h.clear_trigger_state(TimeWindow(0, 50))
    # the merged window's state moved away, so its clear() cannot find (and delete) its timer: as in Flink
    assert (h.num_state_entries(), h.num_processing_time_timers(), h.num_processing_time_timers(window)) == (0, 1, 1)
    assert h.trigger.on_processing_time(7, window, _ctx(h, window)) is CONTINUE  # no state: no failure


def _ctx(h: TriggerTestHarness, window: TimeWindow) -> Any:
    from windowing_harness import FakeTriggerContext

    return FakeTriggerContext(h, window)


def test_a_trigger_that_cannot_merge_refuses_on_merge_with_a_clear_error() -> None:
    from strom.api.windowing import GlobalWindow, Trigger, TriggerResult

    class FiresNever(Trigger[object, GlobalWindow]):
        def on_element(self, element: object, timestamp: int, window: GlobalWindow, ctx: Any) -> TriggerResult:
            return TriggerResult.CONTINUE

        def on_event_time(self, time: int, window: GlobalWindow, ctx: Any) -> TriggerResult:
            return TriggerResult.CONTINUE

        def on_processing_time(self, time: int, window: GlobalWindow, ctx: Any) -> TriggerResult:
            return TriggerResult.CONTINUE

        def clear(self, window: GlobalWindow, ctx: Any) -> None:
            """No state."""

    trigger = FiresNever()
    assert not trigger.can_merge()
    with pytest.raises(InvalidProgramError, match=r"can_merge\(\) is False; hint: merging assigners"):
        trigger.on_merge(GlobalWindow.get(), None)  # type: ignore[arg-type]
