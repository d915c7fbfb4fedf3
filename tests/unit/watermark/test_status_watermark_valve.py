"""The StatusWatermarkValve as a pure state machine: Flink's StatusWatermarkValveTest, then random interleavings.

Each Flink test checks that every input yields exactly the expected outputs and nothing else; here each
``input_*`` call returns its outputs, so every call is asserted on in full.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strom.api.eventtime import LONG_MAX, LONG_MIN, Watermark
from strom.runtime.watermark import StatusWatermarkValve, ValveOutput, WatermarkStatus

pytestmark = pytest.mark.timeout(60)

ACTIVE, IDLE = WatermarkStatus.ACTIVE, WatermarkStatus.IDLE


def wm(valve: StatusWatermarkValve, timestamp: int, channel: int) -> list[ValveOutput]:
    out = valve.input_watermark(Watermark(timestamp), channel)
    valve.validate()
    return out


def status(valve: StatusWatermarkValve, watermark_status: WatermarkStatus, channel: int) -> list[ValveOutput]:
    out = valve.input_watermark_status(watermark_status, channel)
    valve.validate()
    return out


# ---------------------------------------------------------------------------------------------------------------
#  Ports of Flink's StatusWatermarkValveTest
# ---------------------------------------------------------------------------------------------------------------


def test_single_input_increasing_watermarks() -> None:
    valve = StatusWatermarkValve(1)
    assert wm(valve, 0, 0) == [Watermark(0)]
    assert wm(valve, 25, 0) == [Watermark(25)]


def test_single_input_decreasing_watermarks_yields_no_output() -> None:
    valve = StatusWatermarkValve(1)
    assert wm(valve, 25, 0) == [Watermark(25)]
    assert wm(valve, 18, 0) == []
    assert wm(valve, 42, 0) == [Watermark(42)]


def test_single_input_watermark_status_toggling() -> None:
    valve = StatusWatermarkValve(1)
    assert status(valve, ACTIVE, 0) == []  # channels start ACTIVE
    assert status(valve, IDLE, 0) == [IDLE]
    assert status(valve, IDLE, 0) == []
    assert status(valve, ACTIVE, 0) == [ACTIVE]


def test_single_input_watermarks_intact_during_idleness() -> None:
    valve = StatusWatermarkValve(1)
    assert wm(valve, 25, 0) == [Watermark(25)]
    assert status(valve, IDLE, 0) == [IDLE]
    assert wm(valve, 50, 0) == []
    assert valve.get_input_channel_status(0).watermark == 25
    assert status(valve, ACTIVE, 0) == [ACTIVE]
    assert wm(valve, 50, 0) == [Watermark(50)]


def test_multiple_input_yields_watermark_only_when_all_channels_receives_watermarks() -> None:
    valve = StatusWatermarkValve(3)
    assert wm(valve, 0, 0) == []
    assert wm(valve, 0, 1) == []
    assert wm(valve, 0, 2) == [Watermark(0)]  # now all channels have watermarks


def test_multiple_input_increasing_watermarks() -> None:
    valve = StatusWatermarkValve(3)
    assert wm(valve, 0, 0) + wm(valve, 0, 1) + wm(valve, 0, 2) == [Watermark(0)]
    assert wm(valve, 12, 0) + wm(valve, 8, 2) + wm(valve, 10, 2) == []
    assert wm(valve, 15, 1) == [Watermark(10)]  # lowest is now channel 2 @ 10
    assert wm(valve, 17, 2) == [Watermark(12)]  # lowest is now channel 0 @ 12
    assert wm(valve, 20, 0) == [Watermark(15)]  # lowest is now channel 1 @ 15


def test_multiple_input_decreasing_watermarks_yields_no_output() -> None:
    valve = StatusWatermarkValve(3)
    assert wm(valve, 25, 0) + wm(valve, 10, 1) + wm(valve, 17, 2) == [Watermark(10)]
    assert wm(valve, 12, 0) + wm(valve, 8, 1) + wm(valve, 15, 2) == []


def test_multiple_input_watermark_status_toggling() -> None:
    valve = StatusWatermarkValve(2)
    assert status(valve, ACTIVE, 0) + status(valve, ACTIVE, 1) == []  # all channels start active
    assert status(valve, IDLE, 1) == []
    assert status(valve, IDLE, 0) == [IDLE]  # now all channels are IDLE
    assert status(valve, IDLE, 0) + status(valve, IDLE, 1) == []
    assert status(valve, ACTIVE, 1) == [ACTIVE]  # one active channel makes the valve active
    assert status(valve, ACTIVE, 0) == []  # already ACTIVE


def test_multiple_input_watermark_advancing_with_partially_idle_channels() -> None:
    valve = StatusWatermarkValve(3)
    assert wm(valve, 15, 0) + wm(valve, 10, 1) == []
    assert status(valve, IDLE, 2) == [Watermark(10)]  # min of the remaining ACTIVE channels
    assert wm(valve, 18, 1) == [Watermark(15)]
    assert wm(valve, 20, 0) == [Watermark(18)]


def test_multiple_input_watermark_advancing_as_channels_individually_become_idle() -> None:
    valve = StatusWatermarkValve(3)
    assert wm(valve, 25, 0) + wm(valve, 10, 1) + wm(valve, 17, 2) == [Watermark(10)]
    assert status(valve, IDLE, 1) == [Watermark(17)]  # channels 0 and 2 are active
    assert status(valve, IDLE, 2) == [Watermark(25)]  # only channel 0 is active


def test_multiple_input_flush_max_watermark_and_watermark_status_once_all_inputs_become_idle() -> None:
    valve = StatusWatermarkValve(3)
    assert wm(valve, 10, 0) + wm(valve, 5, 1) + wm(valve, 3, 2) == [Watermark(3)]
    assert status(valve, IDLE, 0) + status(valve, IDLE, 1) == []
    assert status(valve, IDLE, 2) == [Watermark(10), IDLE]


def test_multiple_input_watermark_realignment_after_resume_active() -> None:
    valve = StatusWatermarkValve(3)
    assert wm(valve, 10, 0) + wm(valve, 7, 1) + wm(valve, 3, 2) == [Watermark(3)]
    assert status(valve, IDLE, 2) == [Watermark(7)]
    # active again, but behind the output watermark 7: not aligned
    assert status(valve, ACTIVE, 2) == []
    assert not valve.get_input_channel_status(2).is_watermark_aligned
    # watermarks are still accepted while re-aligning, but yield nothing
    assert wm(valve, 5, 2) == []
    assert valve.get_input_channel_status(2).watermark == 5
    # caught up with the output watermark: aligned again
    assert wm(valve, 9, 2) == []
    assert valve.get_input_channel_status(2).is_watermark_aligned
    # and now taken into account
    assert wm(valve, 12, 1) == [Watermark(9)]


def test_no_output_when_all_active_channels_are_unaligned() -> None:
    valve = StatusWatermarkValve(3)
    assert wm(valve, 10, 0) + wm(valve, 7, 1) == []
    assert status(valve, IDLE, 2) == [Watermark(7)]
    assert status(valve, ACTIVE, 2) == []  # channel 2 is active but unaligned (behind 7)
    # channel 2 is the only active channel, and unaligned: no output (older valves emitted Long.MAX_VALUE here)
    assert status(valve, IDLE, 0) + status(valve, IDLE, 1) == []


def test_unaligned_active_channel_becomes_idle() -> None:
    valve = StatusWatermarkValve(2)
    assert wm(valve, 7, 0) + wm(valve, 10, 1) == [Watermark(7)]
    assert status(valve, IDLE, 0) == [Watermark(10)]
    # active again, but still unaligned: 9 < 10
    assert status(valve, ACTIVE, 0) + wm(valve, 9, 0) == []
    assert status(valve, IDLE, 0) == []


# ---------------------------------------------------------------------------------------------------------------
#  Flink semantics worth pinning beyond the ported tests
# ---------------------------------------------------------------------------------------------------------------


def test_output_can_pass_an_active_channel_that_is_still_catching_up() -> None:
    valve = StatusWatermarkValve(3)
    assert wm(valve, 10, 0) + wm(valve, 7, 1) + wm(valve, 3, 2) == [Watermark(3)]
    assert status(valve, IDLE, 2) == [Watermark(7)]
    assert status(valve, ACTIVE, 2) == []  # active at 3, behind the output 7
    # the output advances to 10 although active channel 2 is still at 3
    assert wm(valve, 12, 1) == [Watermark(10)]


def test_flush_on_all_idle_only_when_the_last_channel_held_the_output_watermark() -> None:
    valve = StatusWatermarkValve(3)
    assert wm(valve, 5, 0) + wm(valve, 5, 1) + wm(valve, 5, 2) == [Watermark(5)]
    assert status(valve, IDLE, 2) == []
    assert wm(valve, 20, 0) + wm(valve, 8, 1) == [Watermark(8)]
    assert status(valve, ACTIVE, 2) == []  # at 5, behind the output 8: unaligned
    assert status(valve, IDLE, 0) + status(valve, IDLE, 1) == []
    # the last channel to go idle (at 5) did not hold the output (8): no flush of channel 0's 20
    assert status(valve, IDLE, 2) == [IDLE]
    assert valve.last_output_watermark == 8


def test_watermarks_are_ignored_while_the_valve_is_idle() -> None:
    valve = StatusWatermarkValve(2)
    assert status(valve, IDLE, 0) + status(valve, IDLE, 1) == [IDLE]
    assert wm(valve, 100, 0) == []
    assert valve.get_input_channel_status(0).watermark == LONG_MIN


def test_watermark_status_constants() -> None:
    assert ACTIVE.is_active() and not ACTIVE.is_idle()
    assert IDLE.is_idle() and not IDLE.is_active()
    assert WatermarkStatus(-1) == IDLE
    assert repr(IDLE) == "WatermarkStatus(IDLE)"
    with pytest.raises(ValueError, match="ACTIVE"):
        WatermarkStatus(3)
    with pytest.raises(ValueError, match="at least one input channel"):
        StatusWatermarkValve(0)


# ---------------------------------------------------------------------------------------------------------------
#  Properties under random interleavings
# ---------------------------------------------------------------------------------------------------------------

Op = tuple[str, int, int]  # ("wm", channel, step) | ("idle", channel, 0) | ("active", channel, 0) | ("max", ...)

ops_strategy = st.lists(
    st.one_of(
        st.tuples(st.just("wm"), st.integers(0, 3), st.integers(0, 10)),
        st.tuples(st.sampled_from(["idle", "active"]), st.integers(0, 3), st.just(0)),
        st.tuples(st.just("max"), st.integers(0, 3), st.just(0)),
    ),
    max_size=60,
)


def _run(num_channels: int, ops: list[Op]) -> StatusWatermarkValve:
    """Feed ``ops`` (per-channel monotonic watermarks) and check the properties after each step."""
    valve = StatusWatermarkValve(num_channels)
    next_watermark = [0] * num_channels
    emitted: list[int] = []
    statuses: list[WatermarkStatus] = []
    for kind, raw_channel, step in ops:
        channel = raw_channel % num_channels
        previous_output = valve.last_output_watermark
        if kind in ("wm", "max"):
            next_watermark[channel] = LONG_MAX if kind == "max" else min(LONG_MAX, next_watermark[channel] + step)
            out = valve.input_watermark(Watermark(next_watermark[channel]), channel)
        else:
            out = valve.input_watermark_status(ACTIVE if kind == "active" else IDLE, channel)
        valve.validate()
        channels = [valve.get_input_channel_status(c) for c in range(num_channels)]
        active = [c.watermark for c in channels if c.watermark_status.is_active()]
        caught_up = [w for w in active if w >= previous_output]
        for item in out:
            if isinstance(item, Watermark):
                # output watermarks strictly increase
                assert not emitted or item.timestamp > emitted[-1], (emitted, item)
                emitted.append(item.timestamp)
                if active:
                    # the min over the active channels that have caught up with the output (Flink's aligned ones)
                    assert item.timestamp == min(caught_up), (item, channels)
                else:
                    # all idle: the flush of the max over all channels
                    assert item.timestamp == max(c.watermark for c in channels), (item, channels)
            else:
                statuses.append(item)
        assert valve.last_output_watermark == (emitted[-1] if emitted else LONG_MIN)
        # the valve is IDLE exactly when every channel is; its status outputs alternate, starting with IDLE
        assert valve.last_output_watermark_status.is_idle() == (not active)
        assert statuses == [IDLE, ACTIVE] * (len(statuses) // 2) + [IDLE] * (len(statuses) % 2)
        if caught_up:
            assert valve.last_output_watermark <= min(caught_up)
    return valve


@settings(max_examples=300, deadline=None)
@given(num_channels=st.integers(1, 4), ops=ops_strategy)
def test_valve_properties_under_random_interleavings(num_channels: int, ops: list[Op]) -> None:
    _run(num_channels, ops)


@settings(max_examples=200, deadline=None)
@given(num_channels=st.integers(1, 4), ops=ops_strategy)
def test_valve_outputs_max_watermark_once_every_channel_reached_it(num_channels: int, ops: list[Op]) -> None:
    valve = _run(num_channels, ops)
    if all(valve.get_input_channel_status(c).watermark == LONG_MAX for c in range(num_channels)):
        assert valve.last_output_watermark == LONG_MAX
    # end of input: every channel turns active (if idle) and sends MAX_WATERMARK
    tail: list[Op] = [op for c in range(num_channels) for op in (("active", c, 0), ("max", c, 0))]
    valve = _run(num_channels, ops + tail)
    assert valve.last_output_watermark == Watermark.MAX_WATERMARK.timestamp
    assert valve.last_output_watermark_status == ACTIVE
