"""``SourceCoordinator``: runs a source's :class:`~strom.api.source.SplitEnumerator` on the JobManager (Flink's
``SourceCoordinator`` and ``SourceCoordinatorContext``); see :mod:`strom.runtime.operators.coordination`.

Readers register when their operator opens (``add_reader``), ask for splits (``handle_split_request``) and send
custom events; the enumerator answers through the :class:`SourceCoordinatorContext`. Every assignment is recorded
in a :class:`SplitAssignmentTracker`, so that a subtask restarting from a checkpoint gets back, through
``add_splits_back``, exactly the splits assigned to it after that checkpoint. An exception from the enumerator
(or a ``call_async`` handler) is a global failure naming the source.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import traceback
from collections.abc import Callable
from typing import Any

import cloudpickle

from strom.api.source import ReaderInfo, Source, SourceEvent, SourceSplit, SplitEnumerator, SplitEnumeratorContext
from strom.exceptions import InvalidProgramError, UserFunctionError
from strom.runtime.operators.coordination import OperatorCoordinator, OperatorCoordinatorContext
from strom.runtime.source.events import (
    AddSplitEvent,
    NoMoreSplitsEvent,
    ReaderRegistrationEvent,
    RequestSplitEvent,
    SourceEventWrapper,
)
from strom.runtime.source.split_assignment_tracker import SplitAssignmentTracker

__all__ = ["NOT_RESTORED", "SourceCoordinator", "SourceCoordinatorContext"]

log = logging.getLogger(__name__)

#: ``restored_state`` of a coordinator that starts fresh (``None`` is a restored state: an old checkpoint's)
NOT_RESTORED: Any = object()


class SourceCoordinatorContext(SplitEnumeratorContext):
    def __init__(self, coordinator: SourceCoordinator) -> None:
        self._coordinator = coordinator
        self._readers: dict[int, ReaderInfo] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._closed = False

    # -- SplitEnumeratorContext ----------------------------------------------------------------------------------
    def current_parallelism(self) -> int:
        return self._coordinator.context.current_parallelism()

    def registered_readers(self) -> dict[int, ReaderInfo]:
        return dict(self._readers)

    def assign_split(self, split: SourceSplit, subtask_id: int) -> None:
        self.assign_splits({subtask_id: [split]})

    def assign_splits(self, assignment: dict[int, list[SourceSplit]]) -> None:
        for subtask_id, splits in assignment.items():
            if subtask_id not in self._readers:
                raise InvalidProgramError(
                    f"expected splits to be assigned to a registered reader of source "
                    f"'{self._coordinator.context.operator_name}' (registered: {sorted(self._readers)}); got "
                    f"subtask {subtask_id}; hint: assign in add_reader / handle_split_request, to registered_readers()"
                )
            if not splits:
                continue
            self._coordinator.tracker.record_assignment(subtask_id, list(splits))
            self._coordinator.context.send_event(subtask_id, AddSplitEvent(tuple(splits)))

    def signal_no_more_splits(self, subtask_id: int) -> None:
        self._coordinator.context.send_event(subtask_id, NoMoreSplitsEvent())

    def send_event_to_source_reader(self, subtask_id: int, event: SourceEvent) -> None:
        self._coordinator.context.send_event(subtask_id, SourceEventWrapper(event))

    def call_async(
        self,
        callable_: Callable[[], Any],
        handler: Callable[[Any, BaseException | None], None],
        initial_delay_ms: int = 0,
        period_ms: int = 0,
    ) -> None:
        if self._closed:
            return
        task = asyncio.get_running_loop().create_task(self._run_async(callable_, handler, initial_delay_ms, period_ms))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _run_async(
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
            except Exception as exc:
                error = exc
            if self._closed:
                return
            if not self._coordinator.run_guarded(functools.partial(handler, result, error), "a call_async handler"):
                return
            if period_ms <= 0:
                return
            await asyncio.sleep(period_ms / 1000.0)

    def run_in_coordinator_thread(self, runnable: Callable[[], None]) -> None:
        if not self._closed:
            asyncio.get_running_loop().call_soon(lambda: self._coordinator.run_guarded(runnable, "a runnable"))

    # -- the coordinator's side ----------------------------------------------------------------------------------
    def register_reader(self, subtask_id: int, location: str) -> None:
        self._readers[subtask_id] = ReaderInfo(subtask_id, location)

    def unregister_reader(self, subtask_id: int) -> None:
        self._readers.pop(subtask_id, None)

    def close(self) -> None:
        self._closed = True
        for task in list(self._tasks):
            task.cancel()


class SourceCoordinator(OperatorCoordinator):
    def __init__(self, context: OperatorCoordinatorContext, source: Source[Any], restored_state: Any = NOT_RESTORED):
        self.context = context
        self.source = source
        self.tracker = SplitAssignmentTracker()
        self.enumerator_context = SourceCoordinatorContext(self)
        self.enumerator: SplitEnumerator[Any, Any] | None = None
        self._restored_state = restored_state

    def run_guarded(self, fn: Callable[[], Any], what: str) -> bool:
        """Run enumerator code; an exception fails the job (naming the source) and returns ``False``."""
        try:
            fn()
        except Exception as exc:
            name = self.context.operator_name
            error = UserFunctionError(
                f"the split enumerator of source '{name}' failed in {what}: {type(exc).__name__}: {exc}",
                operator=name,
                user_traceback="".join(traceback.format_exception(exc)),
            )
            log.warning("source '%s': split enumerator failed in %s: %r", name, what, exc)
            self.context.fail_job(str(error), error)
            return False
        return True

    # -- lifecycle -----------------------------------------------------------------------------------------------
    def start(self) -> None:
        """Create (or restore) and start the enumerator; again at a restart when that failed before."""
        if self.enumerator is not None:
            return

        def create() -> None:
            ctx = self.enumerator_context
            if self._restored_state is NOT_RESTORED:
                enumerator = self.source.create_enumerator(ctx)
            else:
                enumerator = self.source.restore_enumerator(ctx, self._restored_state)
            enumerator.start()
            self.enumerator = enumerator
            self._restored_state = NOT_RESTORED

        self.run_guarded(create, "start")

    def close(self) -> None:
        self.enumerator_context.close()
        if self.enumerator is not None:
            enumerator, self.enumerator = self.enumerator, None
            try:
                enumerator.close()
            except Exception as exc:
                log.warning("source '%s': closing its split enumerator failed: %r", self.context.operator_name, exc)

    # -- events --------------------------------------------------------------------------------------------------
    def handle_event_from_operator(self, subtask: int, event: object) -> None:
        enumerator = self.enumerator
        if enumerator is None:
            return  # failed to start: the job is failing
        if isinstance(event, RequestSplitEvent):
            self.run_guarded(lambda: enumerator.handle_split_request(subtask, event.hostname), "handle_split_request")
        elif isinstance(event, ReaderRegistrationEvent):
            self.enumerator_context.register_reader(subtask, event.location)
            self.run_guarded(lambda: enumerator.add_reader(subtask), "add_reader")
        elif isinstance(event, SourceEventWrapper):
            self.run_guarded(lambda: enumerator.handle_source_event(subtask, event.event), "handle_source_event")
        else:
            raise TypeError(f"expected a source reader event; got {type(event).__name__}")

    # -- checkpoints and failover --------------------------------------------------------------------------------
    def checkpoint_coordinator(self, checkpoint_id: int) -> bytes | None:
        enumerator = self.enumerator
        if enumerator is None:
            raise InvalidProgramError(f"source '{self.context.operator_name}' has no running split enumerator")
        state = enumerator.snapshot_state(checkpoint_id)
        self.tracker.on_checkpoint(checkpoint_id)
        return bytes(cloudpickle.dumps(state))

    def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        self.tracker.on_checkpoint_complete(checkpoint_id)
        enumerator = self.enumerator
        if enumerator is not None:
            self.run_guarded(lambda: enumerator.notify_checkpoint_complete(checkpoint_id), "notify_checkpoint_complete")

    def subtask_reset(self, subtask: int, restored_checkpoint_id: int | None) -> None:
        self.enumerator_context.unregister_reader(subtask)
        splits = self.tracker.get_and_remove_uncheckpointed_assignment(subtask, restored_checkpoint_id)
        enumerator = self.enumerator
        if splits and enumerator is not None:
            self.run_guarded(lambda: enumerator.add_splits_back(splits, subtask), "add_splits_back")


def restored_enumerator_state(data: bytes | None) -> Any:
    """The enumerator state of a checkpoint's coordinator bytes (``None`` for a checkpoint without them)."""
    return None if data is None else cloudpickle.loads(data)
