"""``SourceCoordinator``: runs a source's :class:`SplitEnumerator` on the JobMaster (Flink's class of that
name), as the source operator's :class:`OperatorCoordinator`.

Readers register when their operator opens (``add_reader``), ask for splits (``handle_split_request``) and send
custom events; the enumerator answers through :class:`SourceCoordinatorContext`. Checkpoints snapshot the
enumerator (pickled) and file the assignments made since the last one in the :class:`SplitAssignmentTracker`;
completed checkpoints reach the enumerator. A restored job creates the enumerator with
``Source.restore_enumerator`` (state ``None`` for a checkpoint taken before coordinators had state); a restarted
subtask gives the splits it lost back to the live enumerator (``add_splits_back``) before its new reader registers.

Anything the enumerator raises is a global failure of the job naming the source.

With watermark alignment (``WatermarkStrategy.with_watermark_alignment``, FLIP-182) every reader reports its
watermark once per update interval; the coordinator files its source's lowest in the job's coordinator store under
the watermark group and answers the reader with the highest watermark the group allows it
(:mod:`strom.runtime.source.watermark_alignment`) — Flink announces it to all readers on a timer, strom answers each
report, which reaches every reader once per interval just the same.
"""

from __future__ import annotations

import logging
from typing import Any

import cloudpickle

from strom.api.eventtime import WatermarkAlignmentParams
from strom.api.source import Source, SplitEnumerator
from strom.exceptions import UserFunctionError
from strom.runtime.operators.coordination import (
    OperatorCoordinator,
    OperatorCoordinatorContext,
    OperatorCoordinatorProvider,
)
from strom.runtime.operators.user_traceback import format_user_traceback
from strom.runtime.source.coordinator_context import SourceCoordinatorContext
from strom.runtime.source.event import (
    ReaderRegistrationEvent,
    ReportedWatermarkEvent,
    RequestSplitEvent,
    SourceEventWrapper,
    WatermarkAlignmentEvent,
)
from strom.runtime.source.watermark_alignment import WatermarkAggregator, max_allowed_watermark

__all__ = ["SourceCoordinator", "SourceCoordinatorProvider"]

log = logging.getLogger(__name__)

_NOT_RESTORED = object()


class SourceCoordinatorProvider(OperatorCoordinatorProvider):
    def __init__(
        self, operator_id: str, source: Source[Any], alignment: WatermarkAlignmentParams | None = None
    ) -> None:
        self.operator_id = operator_id
        self.source = source
        self.alignment = alignment

    def create(self, context: OperatorCoordinatorContext) -> OperatorCoordinator:
        return SourceCoordinator(self.source, context, self.alignment)


class SourceCoordinator(OperatorCoordinator):
    def __init__(
        self,
        source: Source[Any],
        context: OperatorCoordinatorContext,
        alignment: WatermarkAlignmentParams | None = None,
    ) -> None:
        self.source = source
        self.alignment = alignment
        self.watermarks = WatermarkAggregator()
        self.operator_context = context
        self.context = SourceCoordinatorContext(context, on_error=self._fail)
        self.enumerator: SplitEnumerator[Any, Any] | None = None
        self._restored: Any = _NOT_RESTORED
        self._failed = False

    # -- lifecycle -------------------------------------------------------------------------------------
    def reset_to_checkpoint(self, checkpoint_id: int, state: bytes | None) -> None:
        self._restored = None if state is None else cloudpickle.loads(state)

    def start(self) -> None:
        restored, self._restored = self._restored, _NOT_RESTORED
        if restored is _NOT_RESTORED:
            self.enumerator = self._call("create_enumerator", self.source.create_enumerator, self.context)
        else:
            self.enumerator = self._call("restore_enumerator", self.source.restore_enumerator, self.context, restored)
        if self.enumerator is not None:
            self._call("start", self.enumerator.start)

    @property
    def failed(self) -> bool:
        return self._failed

    def reset_after_failure(self) -> None:
        """The enumerator raised and the job restarts: drop it; ``reset_to_checkpoint`` (or nothing, for a fresh
        enumerator) and ``start`` follow."""
        self.close()
        self.context = SourceCoordinatorContext(self.operator_context, on_error=self._fail)
        self.watermarks = WatermarkAggregator()
        self._restored = _NOT_RESTORED
        self._failed = False

    def close(self) -> None:
        self.context.close()
        enumerator, self.enumerator = self.enumerator, None
        if enumerator is not None:
            try:
                enumerator.close()
            except Exception:
                log.exception("closing the split enumerator of source '%s' failed", self.operator_context.operator_name)

    # -- events ----------------------------------------------------------------------------------------
    async def handle_event_from_operator(self, subtask: int, attempt_id: str, event: object) -> None:
        enumerator = self.enumerator
        if enumerator is None:
            return  # failed to start: the job fails over
        if isinstance(event, ReaderRegistrationEvent):
            self.context.register_reader(subtask, attempt_id, event.location)
            self._call("add_reader", enumerator.add_reader, subtask)
        elif isinstance(event, RequestSplitEvent):
            self._call("handle_split_request", enumerator.handle_split_request, subtask, event.hostname)
        elif isinstance(event, SourceEventWrapper):
            self._call("handle_source_event", enumerator.handle_source_event, subtask, event.event)
        elif isinstance(event, ReportedWatermarkEvent):
            self._align(subtask, attempt_id, event.watermark)
        else:
            raise TypeError(f"expected a source operator event; got {type(event).__name__}")

    def _align(self, subtask: int, attempt_id: str, watermark: int) -> None:
        params = self.alignment
        if params is None:
            return  # a reader of an unaligned source does not report
        lowest = self.watermarks.report(subtask, watermark)
        context = self.operator_context
        allowed = max_allowed_watermark(
            context.coordinator_store,
            params.watermark_group,
            context.operator_id,
            lowest,
            params.max_allowed_watermark_drift_ms,
        )
        context.send_event(subtask, attempt_id, WatermarkAlignmentEvent(max_watermark=allowed))

    # -- checkpoints -----------------------------------------------------------------------------------
    def checkpoint_coordinator(self, checkpoint_id: int) -> bytes | None:
        enumerator = self.enumerator
        if enumerator is None:
            raise RuntimeError(f"source '{self.operator_context.operator_name}' has no split enumerator")
        self.context.tracker.on_checkpoint(checkpoint_id)
        try:
            state = enumerator.snapshot_state(checkpoint_id)
            return bytes(cloudpickle.dumps(state, protocol=5))
        except Exception as exc:
            raise self._wrap(exc, "snapshot_state") from exc

    def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        self.context.tracker.on_checkpoint_complete(checkpoint_id)
        if self.enumerator is not None:
            self._call("notify_checkpoint_complete", self.enumerator.notify_checkpoint_complete, checkpoint_id)

    # -- failover --------------------------------------------------------------------------------------
    def execution_attempt_failed(self, subtask: int, attempt_id: str | None, reason: str) -> None:
        self.context.unregister_reader(subtask)

    def subtask_reset(self, subtask: int, checkpoint_id: int | None) -> None:
        self.context.unregister_reader(subtask)
        self.watermarks.forget(subtask)
        splits = self.context.tracker.get_and_remove_uncheckpointed_assignment(subtask, checkpoint_id)
        if splits and self.enumerator is not None:
            self._call("add_splits_back", self.enumerator.add_splits_back, splits, subtask)

    # -- errors ----------------------------------------------------------------------------------------
    def _call(self, what: str, fn: Any, *args: Any) -> Any:
        if self._failed:
            return None
        try:
            return fn(*args)
        except Exception as exc:
            self._fail(exc, what)
            return None

    def _fail(self, exc: BaseException, what: str) -> None:
        self._failed = True
        self.operator_context.fail_job(self._wrap(exc, what))

    def _wrap(self, exc: BaseException, what: str) -> BaseException:
        if isinstance(exc, UserFunctionError):
            return exc
        name = self.operator_context.operator_name
        return UserFunctionError(
            f"{type(exc).__name__}: {exc} — raised by {what} of the split enumerator of source '{name}' "
            "(on the JobManager)",
            operator=name,
            parallelism=self.operator_context.current_parallelism(),
            user_traceback=format_user_traceback(exc, internal=logging.getLogger("strom").isEnabledFor(logging.DEBUG)),
        )
