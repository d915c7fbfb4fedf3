"""``StreamOperator``: the unit a task chains and drives, one batch of records at a time.

An operator gets ``setup(context, output)`` once in its task, then ``initialize_state(restore)`` (its state
from the checkpoint the job restores, or nothing), ``open()``, any number of ``process_batch(batch)`` calls,
``finish()`` at end of input and ``close()`` last. It hands its results to ``output.emit(batch)`` — the next
operator of the chain or the task's record writer — and records for a side output to
``output.emit_side(tag_id, batch)``. Event time arrives in order with the batches: ``process_watermark`` (the
default advances the operator's event-time timers, then forwards the watermark) and
``process_watermark_status`` (forwarded). Between batches, on the task thread, it may be asked to
``snapshot_state`` for a checkpoint and told ``notify_checkpoint_complete`` / ``notify_checkpoint_aborted``
(Flink's ``StreamOperatorStateHandler`` and ``CheckpointListener`` hooks). An operator with a coordinator on the
JobMaster (``coordinator_provider()``, see :mod:`strom.runtime.operators.coordination`) gets a ``gateway`` to it
and its events in ``handle_operator_event``, on the task thread too.

User code that raises is wrapped exactly once, here at the operator boundary, in
:class:`~strom.exceptions.UserFunctionError` naming the operator, subtask, attempt and the input
record; errors that already are a ``UserFunctionError`` (from a chained operator) pass unchanged.
"""

from __future__ import annotations

import enum
import logging
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from strom.api.functions import RuntimeContext
from strom.exceptions import InvalidProgramError, UserFunctionError
from strom.runtime.operators.batch_budget import BatchBudget
from strom.runtime.operators.user_traceback import format_user_traceback
from strom.runtime.streamrecord import short_repr
from strom.runtime.tasks.processing_time_service import ProcessingTimeService

if TYPE_CHECKING:
    from strom.api.state import StateDescriptor
    from strom.api.typeinfo import TypeInformation
    from strom.metrics.metricbase import MetricGroup
    from strom.runtime.checkpoint.snapshot import OperatorRestoreState, OperatorSnapshot
    from strom.runtime.network.events import CheckpointOptions
    from strom.runtime.operators.collector import TimestampedCollector
    from strom.runtime.operators.timer_service import InternalTimerService, InternalTimeServiceManager, Triggerable
    from strom.runtime.state.operator_state_backend import OperatorStateBackend
    from strom.runtime.state.state_backend import KeyedStateBackend
    from strom.runtime.tasks.mailbox import MailboxExecutor

LONG_MIN = -(1 << 63)

__all__ = [
    "ChainingStrategy",
    "Output",
    "StreamOperator",
    "StreamingRuntimeContext",
    "TaskInfo",
]


class ChainingStrategy(enum.Enum):
    ALWAYS = "ALWAYS"  # may chain to its predecessor and successors
    HEAD = "HEAD"  # starts a chain, successors may chain to it
    NEVER = "NEVER"  # never chained


class Output(Protocol):
    def emit(self, batch: list[Any]) -> None:
        """Hand a non-empty batch downstream."""

    def emit_side(self, tag_id: str, batch: list[Any]) -> None:
        """Hand a non-empty batch to the side output ``tag_id`` (dropped when nothing consumes it)."""

    def emit_watermark(self, timestamp: int) -> None:
        """Event time reached ``timestamp``: forwarded to every output, side outputs included."""

    def emit_watermark_status(self, idle: bool) -> None:
        """The stream turned idle / active."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskInfo:
    job_id: str
    job_name: str
    task_name: str
    subtask_index: int
    parallelism: int
    max_parallelism: int
    attempt_number: int
    state_backend: str = "hashmap"  # state.backend.type
    #: state.backend.rocksdb.* and managed memory (key, value) pairs, for the RocksDB backend
    state_backend_options: tuple[tuple[str, Any], ...] = ()
    auto_watermark_interval_ms: int = 200  # pipeline.auto-watermark-interval
    batch_size: int = 1024  # execution.batch-size
    batch_bytes: int = 1 << 20  # execution.batch-bytes
    yielded_output_tags: bool = False  # the client made an OutputTag: process functions may yield (tag, value)
    batch_execution: bool = False  # execution.runtime-mode: BATCH (timers fire key by key at the end of input)
    #: BATCH with execution.sorted-inputs.enabled: a keyed one-input head gets its input key by key
    sorted_inputs: bool = False
    sorted_inputs_memory: int = 128 << 20  # execution.sorted-inputs.memory
    tmp_dirs: str = ""  # io.tmp.dirs: where a sorted input spills
    job_parameters: Mapping[str, str] = field(default_factory=dict)  # pipeline.global-job-parameters


class StreamingRuntimeContext(RuntimeContext):
    """The :class:`RuntimeContext` each operator of a task hands to its user functions."""

    def __init__(
        self,
        info: TaskInfo,
        *,
        keyed_backend: KeyedStateBackend | None = None,
        operator_name: str = "",
    ) -> None:
        self.info = info
        self.keyed_backend = keyed_backend
        self.operator_name = operator_name
        #: the task's processing-time service (set by the OperatorChain)
        self.processing_time_service: ProcessingTimeService = ProcessingTimeService()
        #: the task's mailbox, for work other threads hand to the task thread (set by the OperatorChain of a
        #: task; ``None`` for an operator driven outside one)
        self.mailbox_executor: MailboxExecutor | None = None
        #: the operator's metric group in its task (set by the Task before the operators open)
        self.metric_group: MetricGroup | None = None

    def get_task_name(self) -> str:
        return self.info.task_name

    def get_task_name_with_subtasks(self) -> str:
        i = self.info
        return f"{i.task_name} ({i.subtask_index + 1}/{i.parallelism})#{i.attempt_number}"

    def get_index_of_this_subtask(self) -> int:
        return self.info.subtask_index

    def get_number_of_parallel_subtasks(self) -> int:
        return self.info.parallelism

    def get_max_number_of_parallel_subtasks(self) -> int:
        return self.info.max_parallelism

    def get_attempt_number(self) -> int:
        return self.info.attempt_number

    def get_job_id(self) -> str:
        return self.info.job_id

    def get_job_parameter(self, key: str, default_value: str) -> str:
        return self.info.job_parameters.get(key, default_value)

    def get_metrics_group(self) -> MetricGroup:
        if self.metric_group is None:  # an operator driven outside a task: its metrics go nowhere
            from strom.runtime.metrics.metric_group import GenericMetricGroup, MetricRegistry

            self.metric_group = GenericMetricGroup(
                MetricRegistry(), scope=(self.operator_name,), logical_scope=("operator",), variables={}
            )
        return self.metric_group

    def get_state(self, descriptor: StateDescriptor) -> Any:
        if self.keyed_backend is None:
            raise InvalidProgramError(
                f"keyed state '{descriptor.name}' needs a keyed stream; operator '{self.operator_name}' is "
                "not keyed; hint: call key_by(...) before this operator"
            )
        return self.keyed_backend.get_state(descriptor)


class StreamOperator(ABC):
    """Base of all operators. Subclasses implement :meth:`process_batch`."""

    chaining_strategy: ChainingStrategy = ChainingStrategy.ALWAYS
    #: set by operators whose user functions emit through a collector (process functions, windows, joins)
    _collector: TimestampedCollector | None = None
    #: the declared type of the operator's output (``output_type=``): its records are converted to it
    output_type: TypeInformation | None = None

    def __init__(self) -> None:
        self.name = type(self).__name__
        self.output: Output = _UnsetOutput()
        self.runtime_context: StreamingRuntimeContext | None = None
        self.operator_id = ""
        self._records_in = 0  # input position of the first record of the current batch
        self.keyed_backend: KeyedStateBackend | None = None  # set in setup() by keyed operators
        self._operator_state_backend: OperatorStateBackend | None = None
        self.restored_checkpoint_id: int | None = None
        self.current_watermark = LONG_MIN
        self.time_service_manager: InternalTimeServiceManager | None = None
        #: input records per ``process_batch`` so that the output stays within ``execution.batch-bytes``
        self.output_budget = BatchBudget(1 << 20)

    # -- lifecycle ---------------------------------------------------------------------------------
    def setup(self, runtime_context: StreamingRuntimeContext, output: Output) -> None:
        self.runtime_context = runtime_context
        if self.output_type is not None and not self.output_type.is_pickled():
            from strom.runtime.operators.typed_output import TypedOutput

            output = TypedOutput(output, self.output_type, self)
        self.output = output
        self.output_budget = BatchBudget(runtime_context.info.batch_bytes)
        sweep = getattr(self.keyed_backend, "ttl_compact_filters", None)
        if sweep is not None:  # RocksDB's TTL cleanup without reads runs on this task's thread
            sweep.attach(runtime_context.processing_time_service)
        if self._collector is not None:
            self._collector.route_tags = runtime_context.info.yielded_output_tags

    def open(self) -> None:
        """Called before the first batch."""

    @abstractmethod
    def process_batch(self, batch: list[Any]) -> None: ...

    # -- event time ------------------------------------------------------------------------------------
    def process_watermark(self, timestamp: int) -> None:
        """Event time reached ``timestamp``: fire the event-time timers due, then forward the watermark."""
        self.current_watermark = timestamp
        manager = self.time_service_manager
        if manager is not None:
            manager.advance_watermark(timestamp)
        self.output.emit_watermark(timestamp)

    def output_watermark(self) -> int:
        """The last watermark this operator emitted (Flink's ``currentOutputWatermark``): the one it received,
        unless it generates watermarks itself."""
        return self.current_watermark

    def process_watermark_status(self, idle: bool) -> None:
        self.output.emit_watermark_status(idle)

    def get_internal_timer_service(self, name: str, triggerable: Triggerable) -> InternalTimerService:
        """The timer service ``name`` of this keyed operator (created, or restored, on first use)."""
        from strom.runtime.operators.timer_service import InternalTimeServiceManager

        ctx = self.runtime_context
        if self.keyed_backend is None or ctx is None:
            raise InvalidProgramError(
                f"timers need a keyed stream; operator '{self.name}' is not keyed; "
                "hint: call key_by(...) before this operator"
            )
        if self.time_service_manager is None:
            self.time_service_manager = InternalTimeServiceManager(
                self.keyed_backend,  # type: ignore[arg-type]
                ctx.processing_time_service,
            )
        service = self.time_service_manager.get_internal_timer_service(name, triggerable)
        service.batch_order = ctx.info.batch_execution
        return service

    def finish(self) -> None:
        """End of input: emit whatever is buffered."""

    def close(self) -> None:
        """Release resources; called after ``finish`` or on cancellation/failure."""

    # -- state and checkpoints (task thread) ----------------------------------------------------------
    @property
    def operator_state_backend(self) -> OperatorStateBackend:
        """This operator's non-keyed state (list / union list state), created on first use."""
        if self._operator_state_backend is None:
            from strom.runtime.state.operator_state_backend import OperatorStateBackend

            self._operator_state_backend = OperatorStateBackend()
        return self._operator_state_backend

    def initialize_state(self, restore: OperatorRestoreState | None) -> None:
        """Before ``open()``: take back the state of the checkpoint the job restores (``None``: fresh start).

        The default restores the keyed backend (the key groups this subtask owns now) and the operator state
        backend (redistributed from every old subtask). Subclasses that register state call this first."""
        if restore is None:
            return
        self.restored_checkpoint_id = restore.checkpoint_id
        if restore.keyed and self.keyed_backend is not None:
            from strom.runtime.state.key_groups import compute_key_group_range_for_operator_index

            info = self.runtime_context.info if self.runtime_context is not None else None
            owned = (
                compute_key_group_range_for_operator_index(info.max_parallelism, info.parallelism, info.subtask_index)
                if info is not None
                else None
            )
            self.keyed_backend.restore(restore.keyed, owned)
        if any(restore.operator):
            info = self.runtime_context.info if self.runtime_context is not None else None
            self.operator_state_backend.restore(
                [b for b in restore.operator],
                subtask_index=info.subtask_index if info else 0,
                parallelism=info.parallelism if info else 1,
            )

    def prepare_snapshot_pre_barrier(self, checkpoint_id: int, options: CheckpointOptions) -> None:
        """Right before :meth:`snapshot_state` of ``checkpoint_id`` (Flink's ``prepareSnapshotPreBarrier``, with
        the checkpoint's options, which Flink hands to ``snapshotState``: whether it is a savepoint)."""

    def snapshot_state(self, checkpoint_id: int, timestamp_ms: int) -> OperatorSnapshot | None:
        """The operator's state now; ``None`` when it has none. Runs between two batches, on the task thread.

        Operator state is bytes at once; keyed state is the backend's ``async_snapshot()`` supplier (a
        point-in-time copy the checkpoint's asynchronous part serializes), so what is written into the backend
        for the snapshot — timers, materialized window panes — may leave it again right after this returns."""
        from strom.runtime.checkpoint.snapshot import OperatorSnapshot

        manager = self.time_service_manager
        if manager is not None:
            manager.before_snapshot()
        try:
            keyed = self.keyed_backend.async_snapshot() if self.keyed_backend is not None else None
        finally:
            if manager is not None:
                manager.after_snapshot()
        snapshot = OperatorSnapshot(keyed_supplier=keyed)
        try:
            backend = self._operator_state_backend
            operator = backend.snapshot() if backend is not None else None
        except BaseException:
            snapshot.cancel()
            raise
        if keyed is None and operator is None:
            return None
        return OperatorSnapshot(operator=operator, keyed_supplier=keyed)

    def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        """Checkpoint ``checkpoint_id`` is complete on the JobMaster: side effects may be committed."""

    def notify_checkpoint_aborted(self, checkpoint_id: int) -> None:
        """Checkpoint ``checkpoint_id`` was aborted: what was prepared for it will not be committed."""

    # -- operator events (task thread) -----------------------------------------------------------------
    def handle_operator_event(self, event: object) -> None:
        """An event from this operator's coordinator on the JobMaster (operators with a
        ``coordinator_provider()``), run as mail between two units of input."""
        raise TypeError(f"operator '{self.name}' has no coordinator; got an operator event {type(event).__name__}")

    # -- errors ------------------------------------------------------------------------------------
    def user_error(
        self, exc: BaseException, batch: list[Any] | None, record: Any = None, *, role: str = "", where: str = ""
    ) -> BaseException:
        """Wrap ``exc`` raised by user code for ``record`` of ``batch`` (already-wrapped errors pass).

        ``role`` names the user code when it is not the operator's own function (a key selector); ``where`` says
        which record when it is not one of ``batch`` (an output record).
        """
        if isinstance(exc, UserFunctionError | KeyboardInterrupt | SystemExit):
            return exc
        ctx = self.runtime_context
        info = ctx.info if ctx is not None else None
        if batch is not None:
            idx = next((i for i, v in enumerate(batch) if v is record), -1)
            pos = self._records_in + idx if idx >= 0 else self._records_in
            where = f" on input record #{pos} ({short_repr(record)})" if idx >= 0 else f" near input #{pos}"
        subtask = f"subtask {info.subtask_index + 1}/{info.parallelism}" if info else "subtask ?"
        attempt = info.attempt_number if info else 0
        tb = format_user_traceback(exc, internal=logging.getLogger("strom").isEnabledFor(logging.DEBUG))
        who = role or f"the user function of operator '{self.name}'"
        msg = f"{type(exc).__name__}: {exc} — raised by {who} ({subtask}, attempt {attempt}){where}"
        return UserFunctionError(
            msg,
            operator=self.name,
            subtask_index=info.subtask_index if info else 0,
            parallelism=info.parallelism if info else 1,
            attempt=attempt,
            user_traceback=tb,
        )


class _UnsetOutput:
    def emit(self, batch: list[Any]) -> None:
        raise RuntimeError("operator used before setup()")

    def emit_side(self, tag_id: str, batch: list[Any]) -> None:
        raise RuntimeError("operator used before setup()")

    def emit_watermark(self, timestamp: int) -> None:
        raise RuntimeError("operator used before setup()")

    def emit_watermark_status(self, idle: bool) -> None:
        raise RuntimeError("operator used before setup()")
