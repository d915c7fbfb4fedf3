"""The SourceOperator inside a job: it registers its reader with the enumerator after adding the restored splits
and before ``start()``, takes the enumerator's events between polls, and ends only when the reader is done *and*
the enumerator said no more splits will come. A small fake of our own TaskOperatorEventGateway records what the
operator sends."""

from __future__ import annotations

from typing import Any

import pytest
from pull_source import PullSource, split_of

from strom.api.output_tag import OutputTag
from strom.runtime.operators.base import StreamingRuntimeContext, TaskInfo
from strom.runtime.operators.coordination import OperatorEventGateway
from strom.runtime.operators.source import InputStatus, SourceOperator
from strom.runtime.source.event import AddSplitEvent, NoMoreSplitsEvent, ReaderRegistrationEvent, RequestSplitEvent

pytestmark = pytest.mark.timeout(30)


class RecordingGateway:
    def __init__(self) -> None:
        self.sent: list[tuple[str, object, bool]] = []

    def send_operator_event_to_coordinator(self, operator_id: str, event: object, *, wait: bool) -> None:
        self.sent.append((operator_id, event, wait))


class Out:
    def __init__(self) -> None:
        self.records: list[Any] = []
        self.side: list[tuple[str, list[Any]]] = []
        self.watermarks: list[int] = []

    def emit(self, batch: list[Any]) -> None:
        self.records.extend(batch)

    def emit_side(self, tag_id: str, batch: list[Any]) -> None:
        self.side.append((tag_id, batch))

    def emit_watermark(self, timestamp: int) -> None:
        self.watermarks.append(timestamp)

    def emit_watermark_status(self, idle: bool) -> None:
        pass


def _operator(source: Any) -> tuple[SourceOperator, RecordingGateway, Out]:
    op = SourceOperator(source)
    op.operator_id = "pull"
    info = TaskInfo(
        job_id="j", job_name="j", task_name="t", subtask_index=1, parallelism=2, max_parallelism=128, attempt_number=0
    )
    out = Out()
    op.setup(StreamingRuntimeContext(info, operator_name="pull"), out)
    gateway = RecordingGateway()
    op.gateway = OperatorEventGateway(gateway, "pull")
    return op, gateway, out


def test_the_reader_registers_then_pulls_and_the_input_ends_only_after_no_more_splits() -> None:
    op, gateway, out = _operator(PullSource(2, 3))
    op.initialize_state(None)
    op.splits = [split_of(1, 3)]  # as restored from a checkpoint
    op.open()
    events = [e for _, e, _ in gateway.sent]
    assert events == [ReaderRegistrationEvent(subtask_id=1, location=events[0].location)]  # has a split: no request
    assert all(op_id == "pull" and not wait for op_id, _, wait in gateway.sent)  # the task thread never blocks
    assert op.emit_next() is InputStatus.MORE_AVAILABLE and out.records == [3, 4, 5]
    assert isinstance(gateway.sent[-1][1], RequestSplitEvent)  # finished its split: asks for the next
    assert op.emit_next() is InputStatus.NOTHING_AVAILABLE  # waiting for the answer
    op.handle_operator_event(AddSplitEvent(splits=(split_of(0, 3),)))
    assert op.emit_next() is InputStatus.MORE_AVAILABLE and out.records == [3, 4, 5, 0, 1, 2]
    assert op.emit_next() is InputStatus.NOTHING_AVAILABLE
    op.handle_operator_event(NoMoreSplitsEvent())
    assert op.emit_next() is InputStatus.END_OF_INPUT
    op.close()


def test_a_reader_that_returns_none_before_no_more_splits_is_polled_again() -> None:
    from strom.connectors import NumberSequenceSource

    source = NumberSequenceSource(0, 9)
    op, _, out = _operator(source)
    op.initialize_state(None)
    op.open()
    assert op.emit_next() is InputStatus.NOTHING_AVAILABLE  # no splits yet: its reader says None
    op.handle_operator_event(AddSplitEvent(splits=tuple(source.create_splits(1))))
    assert op.emit_next() is InputStatus.MORE_AVAILABLE
    assert op.emit_next() is InputStatus.NOTHING_AVAILABLE  # exhausted, but more may come
    op.handle_operator_event(NoMoreSplitsEvent())
    assert op.emit_next() is InputStatus.END_OF_INPUT
    assert out.records == list(range(10))


def test_rejected_input_of_the_reader_goes_to_the_side_output() -> None:
    op, _, out = _operator(PullSource(1, 1))
    op.initialize_state(None)
    op.open()
    assert op._reader_context is not None
    op._reader_context.emit_side_output(OutputTag("bad"), ["line 3: not a number"])
    assert out.side == [("bad", ["line 3: not a number"])]
