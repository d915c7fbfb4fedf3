"""The SourceCoordinator and its SplitAssignmentTracker, driven on an event loop through a context of our own
that records what the JobMaster would send: assignments are tracked per checkpoint, a restarted subtask gets back
exactly what it was assigned after the restored checkpoint, the enumerator's state round-trips, and an enumerator
that raises fails the job naming the source."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from strom.api.source import Source, SourceReader, SourceReaderContext, SourceSplit, SplitEnumerator
from strom.runtime.source.coordinator import NOT_RESTORED, SourceCoordinator, restored_enumerator_state
from strom.runtime.source.events import AddSplitEvent, NoMoreSplitsEvent, ReaderRegistrationEvent, RequestSplitEvent
from strom.runtime.source.split_assignment_tracker import SplitAssignmentTracker


def split(i: int) -> SourceSplit:
    return SourceSplit(split_id=f"s{i}", payload=i)


def test_the_tracker_returns_what_was_assigned_after_the_restored_checkpoint() -> None:
    t = SplitAssignmentTracker()
    t.record_assignment(0, [split(1)])
    t.on_checkpoint(5)  # s1 is in checkpoint 5's reader state
    t.record_assignment(0, [split(2)])
    t.on_checkpoint(6)
    t.record_assignment(0, [split(3)])
    t.record_assignment(1, [split(4)])
    t.on_checkpoint_complete(5)
    assert t.get_and_remove_uncheckpointed_assignment(0, 5) == [split(2), split(3)]
    assert t.get_and_remove_uncheckpointed_assignment(0, 5) == []
    assert t.get_and_remove_uncheckpointed_assignment(1, None) == [split(4)]


def test_without_a_restored_checkpoint_everything_comes_back() -> None:
    t = SplitAssignmentTracker()
    t.record_assignment(0, [split(1)])
    t.on_checkpoint(1)
    t.record_assignment(0, [split(2)])
    assert t.get_and_remove_uncheckpointed_assignment(0, None) == [split(1), split(2)]


class Context:
    def __init__(self, parallelism: int = 2) -> None:
        self.sent: list[tuple[int, object]] = []
        self.failures: list[str] = []
        self.parallelism = parallelism

    @property
    def operator_id(self) -> str:
        return "src"

    @property
    def operator_name(self) -> str:
        return "pull source"

    def current_parallelism(self) -> int:
        return self.parallelism

    def send_event(self, subtask: int, event: object) -> bool:
        self.sent.append((subtask, event))
        return True

    def fail_job(self, text: str, error: BaseException | None) -> None:
        self.failures.append(text)


class PullEnumerator(SplitEnumerator[SourceSplit, list[SourceSplit]]):
    """Hands out one split per request, then "no more splits"."""

    def __init__(self, context: Any, pending: list[SourceSplit]) -> None:
        self.context = context
        self.pending = pending

    def add_reader(self, subtask_id: int) -> None:
        pass

    def handle_split_request(self, subtask_id: int, requester_hostname: str | None) -> None:
        if self.pending:
            self.context.assign_split(self.pending.pop(0), subtask_id)
        else:
            self.context.signal_no_more_splits(subtask_id)

    def add_splits_back(self, splits: list[SourceSplit], subtask_id: int) -> None:
        self.pending[:0] = splits

    def snapshot_state(self, checkpoint_id: int) -> list[SourceSplit]:
        if checkpoint_id == 99:
            raise ValueError("no snapshot today")
        return list(self.pending)


class PullSource(Source[int]):
    def create_enumerator(self, context: Any) -> PullEnumerator:
        return PullEnumerator(context, [split(i) for i in range(4)])

    def restore_enumerator(self, context: Any, checkpoint: Any) -> PullEnumerator:
        return PullEnumerator(context, list(checkpoint))

    def create_reader(self, context: SourceReaderContext) -> SourceReader[int]:
        raise NotImplementedError


def assigned(ctx: Context) -> list[tuple[int, list[str]]]:
    return [(s, [x.split_id for x in e.splits]) for s, e in ctx.sent if isinstance(e, AddSplitEvent)]


def test_splits_on_request_come_back_after_a_restart_and_the_state_round_trips() -> None:
    async def scenario() -> None:
        ctx = Context()
        c = SourceCoordinator(ctx, PullSource())
        c.start()
        for subtask in (0, 1):
            c.handle_event_from_operator(subtask, ReaderRegistrationEvent(subtask, "host"))
        c.handle_event_from_operator(0, RequestSplitEvent("host"))
        state = c.checkpoint_coordinator(1)  # s0 at subtask 0 belongs to checkpoint 1
        c.handle_event_from_operator(1, RequestSplitEvent("host"))  # s1 after it
        c.notify_checkpoint_complete(1)
        assert assigned(ctx) == [(0, ["s0"]), (1, ["s1"])]
        assert state is not None and [s.split_id for s in restored_enumerator_state(state)] == ["s1", "s2", "s3"]
        c.subtask_reset(0, 1)
        c.subtask_reset(1, 1)  # s1 goes back: the restored checkpoint does not hold it
        c.handle_event_from_operator(1, ReaderRegistrationEvent(1, "host"))
        c.handle_event_from_operator(1, RequestSplitEvent("host"))
        assert assigned(ctx)[-1] == (1, ["s1"])
        restored = SourceCoordinator(ctx, PullSource(), restored_enumerator_state(state))
        restored.start()
        restored.handle_event_from_operator(0, ReaderRegistrationEvent(0, "host"))
        for _ in range(4):
            restored.handle_event_from_operator(0, RequestSplitEvent("host"))
        assert [s for s, _ in assigned(ctx)[-3:]] == [0, 0, 0]
        assert [x for _, x in assigned(ctx)[-3:]] == [["s1"], ["s2"], ["s3"]]
        assert isinstance(ctx.sent[-1][1], NoMoreSplitsEvent)
        c.close()
        restored.close()
        assert not ctx.failures

    asyncio.run(asyncio.wait_for(scenario(), 30))


def test_an_assignment_to_an_unregistered_reader_or_a_failing_enumerator_fails_the_job() -> None:
    async def scenario() -> None:
        ctx = Context()
        c = SourceCoordinator(ctx, PullSource(), NOT_RESTORED)
        c.start()
        c.handle_event_from_operator(1, RequestSplitEvent("host"))  # never registered
        assert ctx.failures and "pull source" in ctx.failures[0] and "registered reader" in ctx.failures[0]
        with pytest.raises(ValueError, match="no snapshot today"):
            c.checkpoint_coordinator(99)
        c.close()

    asyncio.run(asyncio.wait_for(scenario(), 30))


def test_call_async_runs_in_a_thread_and_hands_the_result_to_the_loop() -> None:
    async def scenario() -> None:
        ctx = Context()
        c = SourceCoordinator(ctx, PullSource())
        c.start()
        loop_thread = asyncio.get_running_loop()
        seen: list[Any] = []
        done = asyncio.Event()

        def handler(result: Any, error: BaseException | None) -> None:
            assert asyncio.get_running_loop() is loop_thread
            seen.append((result, error))
            if len(seen) == 3:
                done.set()

        c.enumerator_context.call_async(lambda: "listed", handler, initial_delay_ms=1, period_ms=5)
        await asyncio.wait_for(done.wait(), 20)
        c.close()  # stops the periodic call
        n = len(seen)
        await asyncio.sleep(0.05)
        assert len(seen) == n and seen[0] == ("listed", None)

    asyncio.run(asyncio.wait_for(scenario(), 30))
