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


class Recording(GlobalCommitter[str]):
    def commit(self, checkpoint_id: int, committables: list[str]) -> None:
        assert threading.current_thread() is not threading.main_thread()  # off the event loop
        if FAIL_NEXT:
            FAIL_NEXT.pop()
            raise OSError("the catalog is down")
        COMMITS.append((checkpoint_id, sorted(committables)))

    def discard(self, committables: list[str]) -> None:
        DISCARDED.extend(committables)


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
        c.close()
        await asyncio.sleep(0.05)
        assert DISCARDED == ["late"]
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
