"""The global committer's coordinator: what it commits, when, and what it keeps across failures."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from strom.api.sink import GlobalCommitter, GlobalCommittingSink, SinkWriterContext
from strom.runtime.operators.global_committer import CommittablesEvent, GlobalCommitterCoordinator

COMMITS: list[tuple[int, list[str]]] = []
DISCARDED: list[str] = []
FAIL_NEXT: list[bool] = []
#: (subtask, what it keeps) per clean_up
CLEANED: list[tuple[int, list[str]]] = []
CLOSED = threading.Event()


class Recording(GlobalCommitter[str]):
    def commit(self, checkpoint_id: int, committables: list[str]) -> None:
        assert threading.current_thread() is not threading.main_thread()  # off the event loop
        if FAIL_NEXT:
            FAIL_NEXT.pop()
            raise OSError("the catalog is down")
        COMMITS.append((checkpoint_id, sorted(committables)))

    def discard(self, committables: list[str]) -> None:
        DISCARDED.extend(committables)

    def clean_up(self, subtask: int, keep: list[str]) -> None:
        CLEANED.append((subtask, sorted(keep)))

    def close(self) -> None:
        CLOSED.set()


class RecordingSink(GlobalCommittingSink[str, str]):
    def create_writer(self, context: SinkWriterContext) -> Any:
        raise NotImplementedError

    def create_global_committer(self) -> GlobalCommitter[str]:
        return Recording()


class Context:
    operator_id = "op"
    operator_name = "Sink: Writer"

    def __init__(self, parallelism: int) -> None:
        self.parallelism = parallelism
        self.failures: list[BaseException] = []

    def current_parallelism(self) -> int:
        return self.parallelism

    def send_event(self, subtask: int, attempt_id: str, event: object) -> None:
        raise AssertionError("the global committer sends nothing to subtasks")

    def fail_job(self, cause: BaseException) -> None:
        self.failures.append(cause)


@pytest.fixture(autouse=True)
def _clear() -> None:
    COMMITS.clear()
    DISCARDED.clear()
    FAIL_NEXT.clear()
    CLEANED.clear()
    CLOSED.clear()


async def started(parallelism: int) -> tuple[GlobalCommitterCoordinator, Context]:
    ctx = Context(parallelism)
    c = GlobalCommitterCoordinator(RecordingSink(), ctx)
    c.start()
    for i in range(parallelism):
        await c.handle_event_from_operator(i, f"a{i}", CommittablesEvent(subtask_index=i, recovered=True))
    return c, ctx


async def send(c: GlobalCommitterCoordinator, subtask: int, *items: tuple[int, str], **flags: bool) -> None:
    await c.handle_event_from_operator(
        subtask, f"a{subtask}", CommittablesEvent(subtask_index=subtask, committables=list(items), **flags)
    )


def run(coro: Any) -> Any:
    return asyncio.run(coro)


async def closed(c: GlobalCommitterCoordinator) -> None:
    """Closes ``c`` and waits until its committer thread ran everything handed to it (the committer's close is
    last)."""
    c.close()
    assert await asyncio.to_thread(CLOSED.wait, 30), "the committer was not closed within 30 s"


def test_a_completed_checkpoint_commits_every_subtasks_committables_in_one_call() -> None:
    async def scenario() -> None:
        c, _ = await started(2)
        await send(c, 0, (1, "a"))
        await send(c, 1, (1, "b"))
        await send(c, 0, (2, "c"))  # the next checkpoint's: not yet
        c.notify_checkpoint_complete(1)
        await c.finish_pending_work()
        assert COMMITS == [(1, ["a", "b"])]
        c.notify_checkpoint_complete(2)
        await c.finish_pending_work()
        assert COMMITS == [(1, ["a", "b"]), (2, ["c"])]
        c.close()

    run(scenario())


def test_an_aborted_checkpoints_committables_go_with_the_next_completed_one() -> None:
    async def scenario() -> None:
        c, _ = await started(1)
        await send(c, 0, (1, "a"))
        c.notify_checkpoint_aborted(1)
        await send(c, 0, (2, "b"))
        c.notify_checkpoint_complete(2)
        await c.finish_pending_work()
        assert COMMITS == [(2, ["a", "b"])]
        c.close()

    run(scenario())


def test_after_a_restore_nothing_is_committed_until_every_subtask_said_what_it_recovered() -> None:
    async def scenario() -> None:
        c, _ = await started(2)
        await send(c, 0, (3, "late"))  # checkpoint 3 never completes
        await send(c, 1, (2, "sp"), savepoint=True)  # a savepoint's: kept for a later job, not discarded
        for i in range(2):
            c.subtask_reset(i, 1)
        await asyncio.sleep(0)
        await c.finish_pending_work()
        await closed(c)
        assert DISCARDED == ["late"]
        CLOSED.clear()
        # the restored subtasks bring checkpoint 1's committables back, one after the other
        c3 = GlobalCommitterCoordinator(RecordingSink(), Context(2))
        c3.reset_to_checkpoint(1, None)
        c3.start()
        await send(c3, 0, (1, "x"), recovered=True)
        assert COMMITS == []
        await send(c3, 1, (1, "y"), recovered=True)
        await c3.finish_pending_work()
        assert COMMITS == [(1, ["x", "y"])]
        c3.close()

    run(scenario())


def test_the_same_committable_twice_is_committed_once() -> None:
    async def scenario() -> None:
        c, _ = await started(1)
        await send(c, 0, (1, "a"))
        await send(c, 0, (1, "a"))
        c.notify_checkpoint_complete(1)
        await c.finish_pending_work()
        assert COMMITS == [(1, ["a"])]
        c.close()

    run(scenario())


def test_a_failed_commit_fails_the_job_and_its_committables_are_in_the_coordinators_state() -> None:
    async def scenario() -> None:
        c, ctx = await started(1)
        await send(c, 0, (1, "a"))
        FAIL_NEXT.append(True)
        c.notify_checkpoint_complete(1)
        with pytest.raises(OSError):
            await c.finish_pending_work()
        await asyncio.sleep(0)
        assert c.failed and ctx.failures and "failed to commit checkpoint 1" in str(ctx.failures[0])
        state = c.checkpoint_coordinator(2)
        # the JobMaster resets a failed coordinator to the checkpoint it restores, with that checkpoint's state
        c.reset_after_failure()
        c.reset_to_checkpoint(2, state)
        c.start()
        await send(c, 0, recovered=True)
        await c.finish_pending_work()
        assert COMMITS == [(1, ["a"])]
        c.close()

    run(scenario())


def test_without_checkpoints_the_end_of_input_commits_at_once_and_answers_when_committed() -> None:
    async def scenario() -> None:
        c, _ = await started(1)
        await send(c, 0, (0, "a"), commit_now=True)
        assert COMMITS == [(0, ["a"])]
        c.close()

    run(scenario())


def test_without_checkpoints_the_subtasks_ends_of_input_are_committed_together_once_all_came() -> None:
    async def scenario() -> None:
        c, _ = await started(2)
        await send(c, 0, (0, "a"), commit_now=True)
        assert COMMITS == [], "one subtask's output must not be visible before the others'"
        await send(c, 1, commit_now=True)  # a subtask that wrote nothing says so too
        assert COMMITS == [(0, ["a"])]
        await closed(c)

    run(scenario())


def test_without_checkpoints_a_restart_discards_what_ended_subtasks_left_uncommitted() -> None:
    async def scenario() -> None:
        c, _ = await started(2)
        await send(c, 0, (0, "a"), commit_now=True)
        for i in range(2):  # subtask 1 failed: everything restarts from the beginning
            c.subtask_reset(i, None)
        for i in range(2):
            await send(c, i, recovered=True)
        await send(c, 0, (0, "a2"), commit_now=True)
        await send(c, 1, (0, "b2"), commit_now=True)
        await closed(c)
        assert COMMITS == [(0, ["a2", "b2"])]
        assert DISCARDED == ["a"]

    run(scenario())


def test_a_checkpoint_taken_while_an_earlier_one_is_pending_holds_the_earlier_ones_committables() -> None:
    """Checkpoint 2 is triggered while checkpoint 1 is pending (max concurrent checkpoints 2, or a savepoint, which
    ignores the limit); 1 completes and the writer learns it before the barrier of 2, so the writer's state at 2
    no longer holds 1's committables. Then 1's commit fails and the job restores 2: they must still come."""

    async def scenario() -> None:
        c, ctx = await started(1)
        await send(c, 0, (1, "a"))
        state = c.checkpoint_coordinator(2)
        FAIL_NEXT.append(True)
        c.notify_checkpoint_complete(1)
        await send(c, 0, (2, "b"))
        c.notify_checkpoint_complete(2)  # before the commit of 1 failed
        await c.finish_pending_work()
        for _ in range(100):
            if ctx.failures:
                break
            await asyncio.sleep(0)
        assert ctx.failures, "the failed commit of checkpoint 1 should fail the job"
        c.reset_after_failure()  # the job restores checkpoint 2
        c.reset_to_checkpoint(2, state)
        c.start()
        await send(c, 0, (2, "b"), recovered=True)
        await c.finish_pending_work()
        await closed(c)
        assert "a" in {x for _, items in COMMITS for x in items}, "checkpoint 1's committables were lost"

    run(scenario())


def test_a_failed_commit_keeps_the_savepoints_files_and_discards_the_checkpoints_after_the_restored_one() -> None:
    async def scenario() -> None:
        c, _ = await started(1)
        await send(c, 0, (1, "a"))
        FAIL_NEXT.append(True)
        c.notify_checkpoint_complete(1)  # its commit fails ...
        state = c.checkpoint_coordinator(2)
        await send(c, 0, (2, "sp"), savepoint=True)  # ... while a savepoint is taken
        await send(c, 0, (3, "late"))  # and the next checkpoint is under way
        with pytest.raises(OSError):
            await c.finish_pending_work()
        c.reset_after_failure()  # the job restores checkpoint 1
        c.reset_to_checkpoint(1, state)
        c.start()
        await send(c, 0, (1, "a"), recovered=True)
        await c.finish_pending_work()
        c.subtask_reset(0, 1)  # later a TaskManager is lost
        await closed(c)
        assert COMMITS == [(1, ["a"])]
        assert DISCARDED == ["late"], "the staged data of a checkpoint nothing restores must be removed"
        assert CLEANED and "sp" in CLEANED[-1][1], "a savepoint's staged files must survive a failed commit"

    run(scenario())


def test_the_end_of_the_job_discards_the_checkpoint_in_progress_and_keeps_what_a_restore_needs() -> None:
    async def scenario() -> None:
        c, _ = await started(2)
        await send(c, 0, (1, "a"))
        c.notify_checkpoint_complete(1)
        await c.finish_pending_work()
        await send(c, 0, (2, "sp"), savepoint=True)  # a savepoint: a later job may restore it
        await send(c, 1, (3, "b"))  # checkpoint 3 in progress when the job is cancelled
        await closed(c)
        assert COMMITS == [(1, ["a"])]
        assert DISCARDED == ["b"]

    run(scenario())


def test_an_aborted_savepoints_staged_data_is_discarded_like_any_aborted_checkpoints() -> None:
    """Nothing restores a savepoint that never completed: its committables go with the next completed checkpoint,
    and a failover (or the end of the job) before that discards them."""

    async def scenario() -> None:
        c, _ = await started(1)
        await send(c, 0, (1, "sp"), savepoint=True)
        c.notify_checkpoint_aborted(1)
        c.subtask_reset(0, None)
        await send(c, 0, (2, "sp2"), savepoint=True)  # in progress when the job is cancelled: aborted first
        c.notify_checkpoint_aborted(2)
        await closed(c)
        assert DISCARDED == ["sp", "sp2"]
        assert CLEANED == [(0, [])]

    run(scenario())
