"""The tasks over their input processors, on fake gates and a fake chain (no processes, no sockets): end of data
and the final checkpoint (FLIP-147), a checkpoint triggered once every producer finished, recovery of unaligned
channel state, and two-input heads fed through ``process_batch1/2``."""

from __future__ import annotations

import pickle
from typing import Any

import pytest
from input_fakes import EOD, EOP, FakeInputGate, barrier, watermark

from strom.exceptions import TaskCancelledError
from strom.runtime.network.events import CheckpointBarrier
from strom.runtime.operators.two_input import TwoInputStreamOperator
from strom.runtime.tasks.mailbox import TaskMailbox
from strom.runtime.tasks.one_input_stream_task import OneInputStreamTask
from strom.runtime.tasks.processing_time_service import ProcessingTimeService
from strom.runtime.tasks.subtask_checkpoint_coordinator import ChannelState
from strom.runtime.tasks.two_input_stream_task import TwoInputStreamTask

pytestmark = pytest.mark.timeout(30)


class Head:
    def __init__(self, log: list[Any]) -> None:
        self.log = log

    def process_batch(self, batch: list[Any]) -> None:
        self.log.extend(batch)

    def process_watermark(self, timestamp: int) -> None:
        self.log.append(("wm", timestamp))

    def process_watermark_status(self, idle: bool) -> None:
        self.log.append(("idle", idle))


class TwoHead:
    def __init__(self, log: list[Any]) -> None:
        self.log = log

    def process_batch1(self, batch: list[Any]) -> None:
        self.log.extend((1, r) for r in batch)

    def process_batch2(self, batch: list[Any]) -> None:
        self.log.extend((2, r) for r in batch)

    def process_watermark1(self, timestamp: int) -> None:
        self.log.append(("wm1", timestamp))

    def process_watermark2(self, timestamp: int) -> None:
        self.log.append(("wm2", timestamp))

    def process_watermark_status1(self, idle: bool) -> None:
        self.log.append(("idle1", idle))

    def process_watermark_status2(self, idle: bool) -> None:
        self.log.append(("idle2", idle))


TwoInputStreamOperator.register(TwoHead)


class Chain:
    def __init__(self, head: object, log: list[Any]) -> None:
        self.head = head
        self.log = log
        self.processing_time_service = ProcessingTimeService()

    def flush(self) -> None:
        pass

    def open(self) -> None:
        self.log.append("open")

    def finish_operators(self) -> None:
        self.log.append("finish")

    def end_output(self) -> None:
        self.log.append("end_output")

    def close(self) -> None:
        return None


class Coordinator:
    """The part of SubtaskCheckpointCoordinator a task uses; a checkpoint completes when ``complete`` is mailed."""

    def __init__(self, log: list[Any], mailbox: TaskMailbox, *, complete: bool = True) -> None:
        self.log = log
        self.mailbox = mailbox
        self.complete = complete
        self.last_completed_id = -1
        self.channel_states: dict[int, dict[int, list[bytes]]] = {}

    def checkpoint_state(self, barrier: CheckpointBarrier, alignment_ms: float = 0.0) -> None:
        cid = barrier.checkpoint_id
        self.log.append(("checkpoint", cid))
        if self.complete:  # the JobMaster's notification arrives as mail
            self.mailbox.put(lambda: self.notify_checkpoint_complete(cid), f"checkpoint {cid} complete")

    def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        self.last_completed_id = max(self.last_completed_id, checkpoint_id)
        self.log.append(("complete", checkpoint_id))

    def complete_channel_state(self, checkpoint_id: int, inputs: dict[int, list[bytes]]) -> None:
        self.channel_states[checkpoint_id] = inputs

    def abort(self, checkpoint_id: int, reason: str, *, counts: bool = True) -> None:
        self.log.append(("abort", checkpoint_id))

    def close(self) -> None:
        pass


def _one_input(
    channels: list[list[Any]], *, checkpointing: bool = True, complete: bool = True
) -> tuple[OneInputStreamTask, FakeInputGate, list[Any]]:
    log: list[Any] = []
    mailbox = TaskMailbox()
    gate = FakeInputGate(channels)
    coordinator = Coordinator(log, mailbox, complete=complete) if checkpointing else None
    task = OneInputStreamTask(
        Chain(Head(log), log),
        mailbox,
        gate,
        buffer_timeout_ms=0,
        checkpoint_coordinator=coordinator,
    )
    return task, gate, log


def test_end_of_data_finishes_the_operators_and_the_task_waits_for_a_checkpoint_taken_after_it() -> None:
    task, _, log = _one_input([[[1], EOD, barrier(1), [2], EOP], [EOD, barrier(1), EOP]])
    task.invoke()
    # the records, then the end of data on every channel (operators finish once), then checkpoint 1 — taken
    # after the end of data, so it is the final one; the task ends its output once it completed
    assert log == [1, "finish", ("checkpoint", 1), 2, ("complete", 1), "end_output"]
    assert task.end_of_data


def test_a_checkpoint_before_the_end_of_data_is_not_the_final_one() -> None:
    task, _, log = _one_input([[[1], barrier(1), EOD, EOP]])
    # checkpoint 1 completes while input runs; a trigger of checkpoint 2 (every producer finished) is taken only
    # at the end of input, and the task ends once that one completed
    task.mailbox.put(lambda: task.on_triggered(barrier(2)), "trigger 2")
    task.invoke()
    assert log == [1, ("checkpoint", 1), "finish", ("complete", 1), ("checkpoint", 2), ("complete", 2), "end_output"]


def test_a_trigger_while_producers_finished_but_input_remains_waits_for_the_end_of_input() -> None:
    task, _, log = _one_input([[[1], [2], EOD, EOP]])
    task.on_triggered(barrier(7))  # every producer finished (the JobMaster triggers directly); records remain
    assert log == []
    task.invoke()
    assert log == [1, 2, "finish", ("checkpoint", 7), ("complete", 7), "end_output"]


def test_a_trigger_after_the_end_of_input_is_taken_at_once() -> None:
    task, _, log = _one_input([[EOD, EOP]], complete=False)
    task.mailbox_processor.run_mailbox_loop()
    task.on_triggered(barrier(3, unaligned=True))
    assert log == ["finish", ("checkpoint", 3)]
    assert task.subtask_checkpoint.channel_states == {3: {}}  # no input to record


def test_without_checkpointing_the_task_ends_after_its_input() -> None:
    task, _, log = _one_input([[[1], barrier(1), EOD, EOP]], checkpointing=False)
    task.invoke()
    assert log == [1, "finish", "end_output"]


def test_a_cancelled_task_stops_waiting_for_its_final_checkpoint() -> None:
    task, _, log = _one_input([[EOD, EOP]], complete=False)
    task.mailbox.put(task.cancel, "cancel")
    with pytest.raises(TaskCancelledError):
        task.invoke()
    assert "end_output" not in log


def test_recovered_channel_state_is_processed_before_new_input() -> None:
    task, _, log = _one_input([[[3], EOD, EOP], [EOD, EOP]], checkpointing=False)
    task.recovered_channel_state = ChannelState(input={1: [pickle.dumps([2])], 0: [pickle.dumps([1])]})
    task.invoke()
    assert log == [1, 2, 3, "finish", "end_output"]


def test_two_input_task_feeds_each_input_and_aligns_barriers_across_both() -> None:
    log: list[Any] = []
    mailbox = TaskMailbox()
    gate = FakeInputGate(
        [
            [[1], barrier(1), [2], watermark(5), EOD, barrier(2), EOP],
            [["a"], barrier(1), watermark(6), EOD, barrier(2), EOP],
        ]
    )
    task = TwoInputStreamTask(
        Chain(TwoHead(log), log),
        mailbox,
        gate,
        [0, 1],
        buffer_timeout_ms=0,
        checkpoint_coordinator=Coordinator(log, mailbox),
    )
    task.invoke()
    # channel 0's barrier blocks it until channel 1's arrives: "a" comes before 2, the checkpoint between them
    assert log[:4] == [(1, 1), (2, "a"), ("checkpoint", 1), (1, 2)]
    assert ("wm1", 5) in log and ("wm2", 6) in log  # one valve per input: each input's watermark goes through
    # end of data on both inputs, then checkpoint 2 (the final one), then the end of output
    assert log.index("finish") < log.index(("checkpoint", 2)) < log.index(("complete", 2)) < log.index("end_output")
    assert log[-1] == "end_output"
