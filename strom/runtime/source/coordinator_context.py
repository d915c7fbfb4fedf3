"""``SourceCoordinatorContext``: the :class:`SplitEnumeratorContext` a source's enumerator sees on the JobMaster
(Flink's class of that name). Every method runs on the JobMaster's event loop.

``call_async`` runs the blocking callable in a worker thread and its handler back on the loop; each call is an
asyncio task held here and cancelled on ``close`` (none outlives the coordinator). An exception from a handler or
from a ``run_in_coordinator_thread`` runnable fails the job, naming the source.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from strom.api.source import ReaderInfo, SourceEvent, SourceSplit, SplitEnumeratorContext
from strom.exceptions import InvalidProgramError
from strom.runtime.source.event import AddSplitEvent, NoMoreSplitsEvent, SourceEventWrapper
from strom.runtime.source.split_assignment_tracker import SplitAssignmentTracker
from strom.runtime.task_group import AsyncTaskGroup

if TYPE_CHECKING:
    from strom.runtime.operators.coordination import OperatorCoordinatorContext

__all__ = ["SourceCoordinatorContext"]

log = logging.getLogger(__name__)


class SourceCoordinatorContext(SplitEnumeratorContext):
    def __init__(
        self,
        context: OperatorCoordinatorContext,
        *,
        on_error: Callable[[BaseException, str], None],
    ) -> None:
        self.context = context
        self.on_error = on_error  # (error, what raised it) -> fails the job
        self.tracker: SplitAssignmentTracker[SourceSplit] = SplitAssignmentTracker()
        #: subtask -> (reader info, attempt id of the registered reader)
        self.readers: dict[int, tuple[ReaderInfo, str]] = {}
        self._tasks = AsyncTaskGroup("split enumerator context")  # the call_async tasks
        self._handles: set[asyncio.Handle] = set()
        self._closed = False

    # -- SplitEnumeratorContext ----------------------------------------------------------------------
    def current_parallelism(self) -> int:
        return self.context.current_parallelism()

    def registered_readers(self) -> dict[int, ReaderInfo]:
        return {subtask: info for subtask, (info, _) in self.readers.items()}

    def assign_split(self, split: SourceSplit, subtask_id: int) -> None:
        self.assign_splits({subtask_id: [split]})

    def assign_splits(self, assignment: dict[int, list[SourceSplit]]) -> None:
        for subtask_id in assignment:
            self._attempt_of(subtask_id, "assign splits to")
        for subtask_id, splits in assignment.items():
            if not splits:
                continue
            self.tracker.record_split_assignment({subtask_id: list(splits)})
            self._send(subtask_id, AddSplitEvent(splits=tuple(splits)))

    def signal_no_more_splits(self, subtask_id: int) -> None:
        self._attempt_of(subtask_id, "signal no more splits to")
        self._send(subtask_id, NoMoreSplitsEvent())

    def send_event_to_source_reader(self, subtask_id: int, event: SourceEvent) -> None:
        self._attempt_of(subtask_id, "send an event to")
        self._send(subtask_id, SourceEventWrapper(event=event))

    def call_async(
        self,
        callable_: Callable[[], Any],
        handler: Callable[[Any, BaseException | None], None],
        initial_delay_ms: int = 0,
        period_ms: int = 0,
    ) -> None:
        if self._closed:
            return
        self._tasks.create_task(
            self._call_async(callable_, handler, initial_delay_ms, period_ms),
            name=f"{self.context.operator_name}: call_async",
        )

    def run_in_coordinator_thread(self, runnable: Callable[[], None]) -> None:
        if self._closed:
            return
        handle: asyncio.Handle

        def run() -> None:
            self._handles.discard(handle)
            try:
                runnable()
            except Exception as exc:
                self.on_error(exc, "a runnable of run_in_coordinator_thread")

        handle = asyncio.get_running_loop().call_soon(run)
        self._handles.add(handle)

    # -- the coordinator's side ----------------------------------------------------------------------
    def register_reader(self, subtask_id: int, attempt_id: str, location: str) -> None:
        self.readers[subtask_id] = (ReaderInfo(subtask_id, location), attempt_id)

    def unregister_reader(self, subtask_id: int) -> None:
        self.readers.pop(subtask_id, None)

    def close(self) -> None:
        self._closed = True
        self._tasks.close()
        self._tasks.cancel()
        for handle in list(self._handles):
            handle.cancel()
        self._handles.clear()

    async def wait_closed(self, timeout: float = 5.0) -> None:
        """After ``close``: until the cancelled ``call_async`` tasks ended (worker threads finish on their own)."""
        await self._tasks.stop(grace=timeout)

    # -- internals -----------------------------------------------------------------------------------
    def _attempt_of(self, subtask_id: int, what: str) -> str:
        reader = self.readers.get(subtask_id)
        if reader is None:
            raise InvalidProgramError(
                f"expected a registered reader to {what} in source '{self.context.operator_name}'; got subtask "
                f"{subtask_id}, which has none (registered: {sorted(self.readers)}); hint: assign splits in "
                "add_reader/handle_split_request, or to a subtask of context.registered_readers()"
            )
        return reader[1]

    def _send(self, subtask_id: int, event: object) -> None:
        self.context.send_event(subtask_id, self.readers[subtask_id][1], event)

    async def _call_async(
        self,
        callable_: Callable[[], Any],
        handler: Callable[[Any, BaseException | None], None],
        initial_delay_ms: int,
        period_ms: int,
    ) -> None:
        if initial_delay_ms > 0:
            await asyncio.sleep(initial_delay_ms / 1000.0)
        while not self._closed:
            result: Any = None
            error: BaseException | None = None
            try:
                result = await asyncio.to_thread(callable_)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                error = exc
            if self._closed:
                return
            try:
                handler(result, error)
            except Exception as exc:
                self.on_error(exc, "a handler of call_async")
                return
            if period_ms <= 0:
                return
            await asyncio.sleep(period_ms / 1000.0)
