"""The SourceCoordinator drives a source's SplitEnumerator on the JobMaster through its context: readers register
and pull splits, assignments go to the registered attempt, checkpoints snapshot the enumerator, a restarted
subtask gives back what its reader lost, and anything the enumerator raises fails the job naming the source.
A small in-process fake of our own OperatorCoordinatorContext records what the coordinator sends."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import cloudpickle
import pytest
from pull_source import PullSource

from strom.api.source import Source, SourceReader, SourceReaderContext, SourceSplit, SplitEnumeratorContext
from strom.exceptions import InvalidProgramError, UserFunctionError
from strom.runtime.source.coordinator import SourceCoordinator
from strom.runtime.source.event import (
    AddSplitEvent,
    NoMoreSplitsEvent,
    ReaderRegistrationEvent,
    RequestSplitEvent,
)

pytestmark = pytest.mark.timeout(30)


class RecordingContext:
    """Our OperatorCoordinatorContext, recording events and failures."""

    def __init__(self, parallelism: int) -> None:
        self.parallelism = parallelism
        self.sent: list[tuple[int, str, object]] = []
        self.failures: list[BaseException] = []

    @property
    def operator_id(self) -> str:
        return "src"

    @property
    def operator_name(self) -> str:
        return "numbers"

    def current_parallelism(self) -> int:
        return self.parallelism

    def send_event(self, subtask: int, attempt_id: str, event: object) -> None:
        self.sent.append((subtask, attempt_id, event))

    def fail_job(self, cause: BaseException) -> None:
        self.failures.append(cause)

    def splits_to(self, subtask: int) -> list[str]:
        return [s.split_id for i, _, e in self.sent if i == subtask and isinstance(e, AddSplitEvent) for s in e.splits]


def _register(c: SourceCoordinator, subtask: int, attempt: str) -> None:
    asyncio.run(
        c.handle_event_from_operator(subtask, attempt, ReaderRegistrationEvent(subtask_id=subtask, location="h"))
    )


def _request(c: SourceCoordinator, subtask: int, attempt: str) -> None:
    asyncio.run(c.handle_event_from_operator(subtask, attempt, RequestSplitEvent(hostname="h")))


def test_readers_pull_splits_one_at_a_time_from_their_registered_attempt() -> None:
    ctx = RecordingContext(2)
    c = SourceCoordinator(PullSource(3, 10), ctx)
    c.start()
    _register(c, 0, "a0")
    _register(c, 1, "a1")
    assert ctx.sent == []  # the pull enumerator waits for requests
    _request(c, 1, "a1")
    _request(c, 0, "a0")
    _request(c, 1, "a1")
    _request(c, 0, "a0")
    assert ctx.splits_to(1) == ["pull-0", "pull-2"] and ctx.splits_to(0) == ["pull-1"]
    assert {a for i, a, _ in ctx.sent if i == 1} == {"a1"}  # sent to the attempt that registered
    assert isinstance(ctx.sent[-1][2], NoMoreSplitsEvent) and ctx.sent[-1][0] == 0
    assert ctx.failures == []


def test_a_restarted_subtask_gives_back_the_splits_assigned_since_the_restored_checkpoint() -> None:
    ctx = RecordingContext(1)
    c = SourceCoordinator(PullSource(4, 10), ctx)
    c.start()
    _register(c, 0, "a0")
    _request(c, 0, "a0")  # pull-0, before checkpoint 1: in the reader's snapshot of 1
    state_1 = c.checkpoint_coordinator(1)
    _request(c, 0, "a0")  # pull-1, after it
    c.execution_attempt_failed(0, "a0", "killed")
    assert c.context.registered_readers() == {}
    c.subtask_reset(0, 1)
    _register(c, 0, "b0")
    for _ in range(4):
        _request(c, 0, "b0")
    assert ctx.splits_to(0) == ["pull-0", "pull-1", "pull-1", "pull-2", "pull-3"]
    assert cloudpickle.loads(state_1) == [
        SourceSplit(split_id=f"pull-{k}", payload=(10 * k, 10 * k + 10)) for k in (1, 2, 3)
    ]


def test_a_completed_checkpoint_reaches_the_enumerator_and_a_restart_after_it_loses_nothing_before() -> None:
    ctx = RecordingContext(1)
    c = SourceCoordinator(PullSource(3, 10), ctx)
    c.start()
    _register(c, 0, "a0")
    _request(c, 0, "a0")
    c.checkpoint_coordinator(1)
    c.notify_checkpoint_complete(1)
    c.subtask_reset(0, 1)
    assert c.context.tracker.assignments_by_checkpoint == {} and c.context.tracker.uncheckpointed == {}


def test_a_create_splits_source_gets_its_splits_at_registration_then_no_more_and_rescales_its_rest() -> None:
    from strom.connectors import NumberSequenceSource

    ctx = RecordingContext(2)
    source = NumberSequenceSource(0, 99)  # create_splits(2): two splits, one per subtask
    c = SourceCoordinator(source, ctx)
    c.start()
    state = c.checkpoint_coordinator(1)  # before any reader registered: both splits unassigned
    _register(c, 1, "a1")
    assert ctx.splits_to(1) == ["seq-1"] and isinstance(ctx.sent[-1][2], NoMoreSplitsEvent)
    # restored at parallelism 1: the one reader gets both unassigned splits
    ctx1 = RecordingContext(1)
    c1 = SourceCoordinator(source, ctx1)
    c1.reset_to_checkpoint(1, state)
    c1.start()
    _register(c1, 0, "b0")
    assert ctx1.splits_to(0) == ["seq-0", "seq-1"]
    # a failed subtask's static splits go to its next attempt
    c.subtask_reset(1, None)
    _register(c, 1, "a1-2")
    assert ctx.splits_to(1) == ["seq-1", "seq-1"]


class _Boom(Source[int]):
    def create_splits(self, parallelism: int) -> list[SourceSplit]:
        raise OSError("bucket unreachable")

    def create_reader(self, context: SourceReaderContext) -> SourceReader[int]:
        raise NotImplementedError


def test_an_enumerator_that_raises_fails_the_job_naming_the_source() -> None:
    ctx = RecordingContext(1)
    c = SourceCoordinator(_Boom(), ctx)
    c.start()
    assert len(ctx.failures) == 1
    err = ctx.failures[0]
    assert isinstance(err, UserFunctionError)
    assert "source 'numbers'" in str(err) and "bucket unreachable" in str(err) and "create_enumerator" in str(err)
    assert c.failed


def test_assigning_to_a_reader_that_is_not_registered_is_refused() -> None:
    ctx = RecordingContext(2)
    c = SourceCoordinator(PullSource(1, 1), ctx)
    c.start()
    with pytest.raises(InvalidProgramError, match="registered reader"):
        c.context.assign_split(SourceSplit(split_id="x"), 1)


DISCOVERY_THREADS: list[list[str]] = []


class _Discovering(PullSource):
    """Discovers one new split per period in a worker thread (as a monitored directory would)."""

    def create_enumerator(self, context: SplitEnumeratorContext) -> Any:
        enumerator = super().create_enumerator(context)
        threads: list[str] = []

        def discover() -> int:
            threads.append(threading.current_thread().name)
            return len(threads)

        def found(n: int, error: BaseException | None) -> None:
            enumerator.remaining.append(SourceSplit(split_id=f"new-{n}", payload=(0, 1)))
            if n == 3:
                raise RuntimeError("listing failed")

        context.call_async(discover, found, period_ms=1)
        DISCOVERY_THREADS.append(threads)
        return enumerator


def test_call_async_runs_off_the_loop_periodically_and_a_failing_handler_fails_the_job() -> None:
    ctx = RecordingContext(1)

    async def run() -> SourceCoordinator:
        c = SourceCoordinator(_Discovering(0, 1), ctx)
        c.start()
        for _ in range(500):
            if ctx.failures:
                break
            await asyncio.sleep(0.01)
        c.close()
        await c.context.wait_closed()
        return c

    c = asyncio.run(run())
    threads = DISCOVERY_THREADS[-1]
    assert len(threads) == 3 and threading.main_thread().name not in threads
    assert len(ctx.failures) == 1 and "call_async" in str(ctx.failures[0]) and "listing failed" in str(ctx.failures[0])
    assert not c.context._tasks  # nothing left running after close
