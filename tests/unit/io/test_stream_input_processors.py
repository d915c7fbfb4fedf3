"""StreamOneInputProcessor and StreamMultipleInputProcessor over a fake gate: data to the input's DataOutput,
watermarks and idleness through each input's valve, end of data once, end of input, recovery of channel state."""

from __future__ import annotations

import pickle

import pytest
from input_fakes import EOD, EOP, FakeInputGate, RecordingOutput, RecordingTask, barrier, checkpointed, idle, watermark

from strom.runtime.io.stream_multiple_input_processor import StreamMultipleInputProcessor
from strom.runtime.io.stream_one_input_processor import StreamOneInputProcessor
from strom.runtime.operators.source import InputStatus

pytestmark = pytest.mark.timeout(30)

MORE, NOTHING, END = InputStatus.MORE_AVAILABLE, InputStatus.NOTHING_AVAILABLE, InputStatus.END_OF_INPUT


def _one(gate: FakeInputGate, ended: list[int] | None = None) -> tuple[StreamOneInputProcessor, RecordingOutput]:
    out = RecordingOutput()
    ends = ended if ended is not None else []
    processor = StreamOneInputProcessor(checkpointed(gate, RecordingTask()), out.data_output(), lambda: ends.append(1))
    return processor, out


def _two(
    gate: FakeInputGate, channel_inputs: list[int], ended: list[int] | None = None
) -> tuple[StreamMultipleInputProcessor, RecordingOutput, RecordingOutput]:
    first, second = RecordingOutput(), RecordingOutput()
    ends = ended if ended is not None else []
    processor = StreamMultipleInputProcessor(
        checkpointed(gate, RecordingTask()),
        [first.data_output(), second.data_output()],
        channel_inputs,
        lambda: ends.append(1),
    )
    return processor, first, second


def _run(processor: StreamOneInputProcessor | StreamMultipleInputProcessor, units: int) -> list[InputStatus]:
    return [processor.process_input() for _ in range(units)]


def test_one_input_pushes_data_and_reports_nothing_available_then_the_end_of_input() -> None:
    gate = FakeInputGate([[[1, 2]], []])
    processor, out = _one(gate)
    assert _run(processor, 2) == [MORE, NOTHING]
    assert out.records == [1, 2]
    gate.push(0, EOP)
    gate.push(1, [3], EOP)
    assert _run(processor, 3) == [MORE, MORE, END]  # the last EndOfPartition is the end of input itself
    assert out.records == [1, 2, 3]
    assert processor.is_finished()
    assert processor.process_input() is END


def test_barriers_never_reach_the_processor_and_cost_no_unit_of_their_own() -> None:
    gate = FakeInputGate([[barrier(1), [1]]])
    processor, out = _one(gate)
    assert processor.process_input() is MORE
    assert out.records == [1]


def test_end_of_data_is_reported_once_after_every_channel_delivered_it() -> None:
    ended: list[int] = []
    gate = FakeInputGate([[[1], EOD, EOP], [[2], EOD, EOP]], picks=[0, 0, 0, 1])
    processor, out = _one(gate, ended)
    statuses = []
    while (status := processor.process_input()) is not END:
        statuses.append(status)
        if len(out.records) < 2:
            assert ended == []
    assert ended == [1]
    assert sorted(out.records) == [1, 2]


def test_one_input_merges_its_channels_watermarks_in_a_valve_and_forwards_idleness() -> None:
    gate = FakeInputGate([[watermark(5)], [watermark(3)]], picks=[0, 0])
    processor, out = _one(gate)
    _run(processor, 2)
    assert out.events == [("wm", 3)]
    gate.push(1, idle())  # the channel holding the minimum turns idle: the other's watermark goes through
    processor.process_input()
    assert out.events == [("wm", 3), ("wm", 5)]
    gate.push(0, idle())  # every channel idle: the input is idle
    processor.process_input()
    assert out.events[-1] == ("idle", True)
    gate.push(1, idle(False), watermark(9))
    _run(processor, 2)
    assert out.events[-2:] == [("idle", False), ("wm", 9)]


def test_two_inputs_route_each_channel_to_its_input_and_keep_a_valve_per_input() -> None:
    # channels 0 and 2 feed input 0; channel 1 feeds input 1
    gate = FakeInputGate([[[1], watermark(10)], [["a"], watermark(4)], [[2], watermark(20)]], picks=[0] * 6)
    processor, first, second = _two(gate, [0, 1, 0])
    assert _run(processor, 6) == [MORE] * 6
    assert first.records == [1, 2] and second.records == ["a"]
    # input 0's valve waits for both its channels: 10 is the min of 10 and 20; input 1 has only 4
    assert first.events == [("wm", 10)]
    assert second.events == [("wm", 4)]
    gate.push(1, idle())
    processor.process_input()
    assert second.events[-1] == ("idle", True) and first.events == [("wm", 10)]


def test_two_inputs_end_of_data_and_end_of_input_span_both_inputs() -> None:
    ended: list[int] = []
    gate = FakeInputGate([[EOD, EOP], [EOD, EOP]], picks=[0, 0, 0, 0])
    processor, _, _ = _two(gate, [0, 1], ended)
    assert _run(processor, 3) == [MORE, MORE, MORE]
    assert ended == [1]
    assert processor.process_input() is END


def test_recovered_channel_state_goes_to_the_input_of_its_channel_in_channel_order() -> None:
    gate = FakeInputGate([[], [], []])
    processor, first, second = _two(gate, [1, 0, 1])
    processor.recover({2: [pickle.dumps([3]), pickle.dumps([4])], 0: [pickle.dumps([1])], 1: [pickle.dumps(["x"])]})
    assert second.records == [1, 3, 4] and first.records == ["x"]
    one, out = _one(FakeInputGate([[], []]))
    one.recover({1: [pickle.dumps([2])], 0: [pickle.dumps([1])]})
    assert out.records == [1, 2]


def test_every_channel_must_feed_an_existing_input() -> None:
    with pytest.raises(ValueError, match=r"expected an input in 0\.\.1 for each of the 2 channels; got \[0, 2\]"):
        _two(FakeInputGate([[], []]), [0, 2])
    with pytest.raises(ValueError, match="for each of the 2 channels; got \\[0\\]"):
        _two(FakeInputGate([[], []]), [0])
