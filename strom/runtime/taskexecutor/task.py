"""``Task``: one subtask attempt in a TaskManager, run on its own thread (Flink's ``Task``).

``do_run`` walks the ExecutionState machine — CREATED → DEPLOYING (partitions and gates set up, chain
loaded) → INITIALIZING (operators opened) → RUNNING (mailbox loop) → FINISHED — and reports every
transition to the JobMaster. A failure reports FAILED with the error text (the user's traceback
included) *before* the task's partitions are released, so the JobMaster sees the root cause first.
"""

from __future__ import annotations

import ctypes
import functools
import logging
import threading
import traceback
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

import cloudpickle

from strom.exceptions import StromError, TaskCancelledError, UserFunctionError
from strom.runtime.checkpoint.key_groups_state_reader import KeyGroupsStateReader
from strom.runtime.checkpoint.snapshot import OperatorRestoreState
from strom.runtime.checkpoint.storage import read_state
from strom.runtime.deployment import OperatorRestoreDescriptor, TaskDeploymentDescriptor, TaskExecutionState
from strom.runtime.execution_state import ExecutionState, check_transition
from strom.runtime.metrics.operator_metrics import register_task_metrics
from strom.runtime.metrics.task_io_metric_group import TaskIOMetricGroup
from strom.runtime.network.connection_manager import NettyConnectionManager
from strom.runtime.network.input_channel import InputChannel, LocalInputChannel, RemoteInputChannel
from strom.runtime.network.input_gate import InputGate
from strom.runtime.network.partition_manager import ResultPartitionManager
from strom.runtime.network.record_writer import RecordWriter
from strom.runtime.network.result_partition import ResultPartition
from strom.runtime.network.sort_merge_result_partition import SortMergeResultPartition, shuffle_directory
from strom.runtime.operators.base import StreamOperator, TaskInfo
from strom.runtime.operators.coordination import TaskOperatorEventGateway
from strom.runtime.operators.sink import SinkWriterOperator
from strom.runtime.operators.two_input import TwoInputStreamOperator
from strom.runtime.state.incremental_state_handler import restore_incremental_keyed_state
from strom.runtime.state.task_local_state_store import LocalRecoveryConfig
from strom.runtime.taskexecutor.user_code_class_loader import load_user_code
from strom.runtime.tasks.mailbox import TaskMailbox
from strom.runtime.tasks.one_input_stream_task import OneInputStreamTask
from strom.runtime.tasks.operator_chain import OperatorChain
from strom.runtime.tasks.processing_time_service import ProcessingTimeService
from strom.runtime.tasks.source_stream_task import SourceStreamTask
from strom.runtime.tasks.stream_task import StreamTask
from strom.runtime.tasks.subtask_checkpoint_coordinator import (
    ChannelState,
    CheckpointResponder,
    SubtaskCheckpointCoordinator,
)
from strom.runtime.tasks.two_input_stream_task import TwoInputStreamTask

__all__ = ["Task", "describe_failure"]

log = logging.getLogger(__name__)


def _request_remote(cm: NettyConnectionManager, channel: RemoteInputChannel, *, address: tuple[str, int]) -> None:
    cm.request_subpartition(channel, address)


def describe_failure(exc: BaseException, *, internal_traceback: bool = False) -> str:
    """The text the user sees for a task failure, strom's message first.

    A user function's error: its message, then the user's own traceback. Any other :class:`StromError` (a
    timestamp assigner returning a ``str``, a record that cannot be pickled, damaged state): its message and the
    one-line causes it was raised from; strom's own frames (``task.py``, ``stream_task.py``, ...) follow only
    with ``internal_traceback`` (the TaskManager logs at DEBUG). Anything else is a bug in strom or an
    unexpected error: its full traceback.
    """
    if isinstance(exc, UserFunctionError):
        if not exc.user_traceback:  # an error of strom's own check (a record not of the declared type)
            return str(exc)
        return f"{exc}\n\nUser function traceback (most recent call last):\n{exc.user_traceback.rstrip()}"
    if not isinstance(exc, StromError):
        return "".join(traceback.format_exception(exc))
    lines = [_one_line(exc)]
    cause = exc.__cause__
    while cause is not None and len(lines) < 8:
        lines.append(f"caused by {_one_line(cause)}")
        cause = cause.__cause__
    text = "\n".join(lines)
    if internal_traceback:
        text += "\n\nInternal traceback (most recent call last):\n" + "".join(traceback.format_exception(exc))
    return text


def _one_line(exc: BaseException) -> str:
    return "".join(traceback.format_exception_only(exc)).rstrip()


class Task:
    def __init__(
        self,
        tdd: TaskDeploymentDescriptor,
        *,
        tm_id: str,
        partition_manager: ResultPartitionManager,
        connection_manager: NettyConnectionManager,
        report: Callable[[TaskExecutionState], Future[Any] | None],
        gateway: TaskOperatorEventGateway,
        pid: int,
        responder: CheckpointResponder | None = None,
        local_state_root: str = "",
        prepare: Callable[[], None] | None = None,
    ) -> None:
        self.tdd = tdd
        #: run on the task thread before the chain is loaded (the job's Python dependencies)
        self._prepare = prepare
        self.tm_id = tm_id
        self.attempt_id = tdd.execution_attempt_id
        self.partition_manager = partition_manager
        self.connection_manager = connection_manager
        self._report = report
        self.gateway = gateway
        self.responder = responder
        self.pid = pid
        self.state = ExecutionState.CREATED
        self._state_lock = threading.Lock()
        self.failure: BaseException | None = None
        #: stop-with-savepoint: the savepoint holds this task's state, it ends FINISHED without end of input
        self.stopped_after_savepoint = False
        self.mailbox = TaskMailbox()
        self.partitions: list[ResultPartition] = []
        self.gate: InputGate | None = None
        self.invokable: StreamTask | None = None
        self.metrics = TaskIOMetricGroup()
        self.thread = threading.Thread(
            target=self.run, name=f"{tdd.task_name} ({tdd.subtask_index + 1}/{tdd.parallelism})", daemon=True
        )
        self.termination = threading.Event()
        #: local recovery: this subtask's local copies of its checkpoints (None: ``state.backend.local-recovery`` off)
        self.local_state = LocalRecoveryConfig(
            enabled=tdd.checkpointing is not None and tdd.checkpointing.local_recovery, root=local_state_root
        ).store_for(tdd.job_id, tdd.vertex_id, tdd.subtask_index)

    @property
    def name(self) -> str:
        return self.thread.name

    def start_task_thread(self) -> None:
        self.thread.start()

    # -- state machine -----------------------------------------------------------------------------
    def transition_state(
        self, current: ExecutionState, target: ExecutionState, error: BaseException | None = None
    ) -> bool:
        with self._state_lock:
            if self.state is not current or not check_transition(current, target):
                return False
            self.state = target
        self._notify(target, error)
        return True

    def _notify(self, state: ExecutionState, error: BaseException | None) -> Future[Any] | None:
        debug = log.isEnabledFor(logging.DEBUG)
        text = describe_failure(error, internal_traceback=debug) if error is not None else ""
        wire_error: BaseException | None = error
        if error is not None:
            try:
                cloudpickle.dumps(error)
            except Exception:
                wire_error = None
        return self._report(
            TaskExecutionState(
                job_id=self.tdd.job_id,
                execution_attempt_id=self.attempt_id,
                state=state.value,
                error_text=text,
                error=wire_error,
                pid=self.pid,
            )
        )

    # -- the task thread ---------------------------------------------------------------------------
    def run(self) -> None:
        try:
            self.do_run()
        except TaskCancelledError as exc:  # an interrupt (task.cancellation.interval) that landed in the cleanup
            self._finish_with_error(exc)
        finally:
            self.termination.set()

    def do_run(self) -> None:
        if not self.transition_state(ExecutionState.CREATED, ExecutionState.DEPLOYING):
            return
        error: BaseException | None = None
        try:
            if self._prepare is not None:
                self._prepare()
            self.invokable = self._setup()
            if not self.transition_state(ExecutionState.DEPLOYING, ExecutionState.INITIALIZING):
                raise TaskCancelledError("cancelled while deploying")
            self._initialize_state(self.invokable)
            self.invokable.restore()
            if not self.transition_state(ExecutionState.INITIALIZING, ExecutionState.RUNNING):
                raise TaskCancelledError("cancelled while initializing")
            self.invokable.invoke()
        except BaseException as exc:
            error = exc
        close_error = self.invokable.cleanup() if self.invokable is not None else None
        if error is None and close_error is not None:
            error = close_error
        if error is not None and self.stopped_after_savepoint:
            # the savepoint holds the state: what ends the loop now (the stop itself, a close that failed) does
            # not fail the job the user stopped
            level = logging.DEBUG if isinstance(error, TaskCancelledError) else logging.INFO
            log.log(level, "task %s stopped after the savepoint: %s", self.name, _one_line(error))
            error = None
        if error is None:
            if self.transition_state(ExecutionState.RUNNING, ExecutionState.FINISHED):
                return
            error = TaskCancelledError("cancelled")
        self._finish_with_error(error)

    def _finish_with_error(self, error: BaseException) -> None:
        with self._state_lock:
            current = self.state
            canceled = current is ExecutionState.CANCELING or isinstance(error, TaskCancelledError)
            target = ExecutionState.CANCELED if canceled else ExecutionState.FAILED
            if current.is_terminal:
                return
            self.state = target
        if target is ExecutionState.FAILED:
            log.info("task %s failed: %s", self.name, error)
            log.debug("task %s failed", self.name, exc_info=error)
            self.failure = error
            ack = self._notify(target, error)
            if ack is not None:
                try:
                    ack.result(timeout=10)  # the JobMaster learns the root cause before consumers fail
                except Exception as exc:
                    log.warning("task %s: failure report not acknowledged: %s", self.name, exc)
        else:
            self._notify(target, None)
        self._release_resources("task " + target.value.lower())

    def _release_resources(self, cause: str) -> None:
        for p in self.partitions:
            self.partition_manager.release_partition(p.partition_id, cause)
        if self.gate is not None:
            self.gate.release()

    # -- set-up (task thread, DEPLOYING) -------------------------------------------------------------
    def _setup(self) -> StreamTask:
        tdd = self.tdd
        cfg = tdd.config
        info = TaskInfo(
            job_id=tdd.job_id,
            job_name=tdd.job_name,
            task_name=tdd.task_name,
            subtask_index=tdd.subtask_index,
            parallelism=tdd.parallelism,
            max_parallelism=tdd.max_parallelism,
            attempt_number=tdd.attempt_number,
            state_backend=str(cfg.get("state_backend", "hashmap")),
            state_backend_options=tuple(dict(cfg.get("state_backend_options", {})).items()),
            auto_watermark_interval_ms=int(cfg.get("auto_watermark_interval_ms", 200)),
            batch_size=int(cfg["batch_size"]),
            batch_bytes=int(cfg.get("batch_bytes", 1 << 20)),
            yielded_output_tags=bool(cfg.get("yielded_output_tags", False)),
            batch_execution=bool(cfg.get("batch_execution", False)),
            sorted_inputs=bool(cfg.get("batch_execution", False)) and bool(cfg.get("sorted_inputs", False)),
            sorted_inputs_memory=int(cfg.get("sorted_inputs_memory", 128 << 20)),
            tmp_dirs=str(cfg.get("tmp_dirs") or ""),
            job_parameters=dict(cfg.get("job_parameters", {})),
        )
        partitions: dict[str, tuple[ResultPartition, bytes, str]] = {}
        buffers_per_channel = int(cfg["buffers_per_channel"])
        floating = int(cfg["floating_buffers_per_gate"])
        for pd in tdd.produced_partitions:
            partition: ResultPartition
            if pd.partition_type.is_blocking:
                partition = SortMergeResultPartition(
                    pd.partition_id,
                    pd.num_subpartitions,
                    directory=shuffle_directory(str(cfg.get("tmp_dirs") or ""), self.tm_id, tdd.job_id),
                    sort_buffer_bytes=int(cfg.get("sort_buffer_bytes", 16 << 20)),
                    compress=bool(cfg.get("batch_shuffle_compression", True)),
                    codec=str(cfg.get("compression_codec", "LZ4")),
                    serializer=load_user_code(pd.serialized_serializer),
                    on_finished=self.partition_manager.partition_finished,
                )
            else:
                partition = ResultPartition(
                    pd.partition_id,
                    pd.num_subpartitions,
                    pool_size=pd.num_subpartitions * buffers_per_channel + floating,
                    max_buffers_per_subpartition=int(cfg["max_buffers_per_channel"]),
                    serializer=load_user_code(pd.serialized_serializer),
                    back_pressure=self.metrics.back_pressured,
                    on_all_consumed=self.partition_manager.on_consumed,
                )
            partitions[pd.result_id] = (partition, pd.serialized_partitioner, pd.consumer)
            self.partitions.append(partition)
            self.metrics.partitions.append(partition)
            self.partition_manager.register_result_partition(partition)
        buffer_timeout = int(cfg["buffer_timeout_ms"])
        batch_size = int(cfg["batch_size"])

        def make_writer(result_id: str, owner: StreamOperator) -> RecordWriter:
            partition, ser, consumer = partitions[result_id]
            writer = RecordWriter(
                partition,
                load_user_code(ser),
                max_records_per_buffer=batch_size,
                segment_size=int(cfg["segment_size"]),
                flush_always=buffer_timeout == 0,
                subtask_index=tdd.subtask_index,
                owner=owner,
                consumer=consumer,
            )
            self.metrics.writers.append(writer)
            return writer

        chain = OperatorChain(tdd.chain, info, make_writer, self.gateway, ProcessingTimeService(), mailbox=self.mailbox)
        head = chain.head
        self.metrics.head_operator = head
        register_task_metrics(self.metrics, tdd, self.tm_id, chain.operators)
        checkpoint_coordinator: SubtaskCheckpointCoordinator | None = None
        for op in chain.operators:
            if isinstance(op, SinkWriterOperator):
                # a two-phase-commit sink commits on checkpoints
                op.checkpointing_enabled = tdd.checkpointing is not None
                op.temporary_checkpoint_dir = tdd.temporary_dir
        if tdd.checkpointing is not None:
            assert self.responder is not None
            checkpoint_coordinator = SubtaskCheckpointCoordinator(
                chain,
                self.partitions,
                subtask_index=tdd.subtask_index,
                task_name=self.name,
                responder=self.responder,
                local_state=self.local_state,
            )
        common: dict[str, Any] = {
            "buffer_timeout_ms": buffer_timeout,
            "idle": self.metrics.idle,
            "partitions": self.partitions,
            "checkpoint_coordinator": checkpoint_coordinator,
        }
        if tdd.chain[0].is_source:
            return SourceStreamTask(chain, self.mailbox, **common)
        gate = InputGate(0, self.mailbox.signal_input_available, floating_buffers=floating)
        channels: list[InputChannel] = []
        channel_inputs: list[int] = []  # which input of a two-input head each channel feeds
        cm = self.connection_manager
        for gd in tdd.input_gates:
            serializer = load_user_code(gd.serialized_serializer)
            for cd in gd.channels:
                idx = len(channels)
                channel_inputs.append(max(gd.type_number - 1, 0))
                if cd.producer_tm_id == self.tm_id:
                    channels.append(
                        LocalInputChannel(gate, idx, cd.partition_id, cd.subpartition_index, self.partition_manager)
                    )
                else:
                    address = cd.producer_data_address
                    remote = RemoteInputChannel(
                        gate,
                        idx,
                        cd.partition_id,
                        cd.subpartition_index,
                        serializer=serializer,
                        request=functools.partial(_request_remote, cm, address=address),
                        recycle=cm.recycle,
                        cancel_request=cm.cancel_request,
                    )
                    remote.initial_credit = gate.credit.add_channel(idx, buffers_per_channel)
                    channels.append(remote)
        gate.set_channels(channels)
        self.gate = gate
        self.metrics.gate = gate
        gate.request_partitions()
        exactly_once = tdd.checkpointing.exactly_once if tdd.checkpointing is not None else True
        if isinstance(head, TwoInputStreamOperator):
            return TwoInputStreamTask(chain, self.mailbox, gate, channel_inputs, exactly_once=exactly_once, **common)
        return OneInputStreamTask(chain, self.mailbox, gate, exactly_once=exactly_once, **common)

    # -- state restore (task thread, INITIALIZING) ----------------------------------------------------
    def _initialize_state(self, invokable: StreamTask) -> None:
        """Read this subtask's share of the restored checkpoint and hand it to each operator.

        Every read verifies its checksum, and all of it is read before the first operator sees any: a damaged
        file raises :class:`CorruptStateError` before user code runs, and the JobMaster fails the job without
        a restart (a restart would read the same bytes)."""
        restore = self.tdd.restore
        states: list[OperatorRestoreState | None] = []
        for op in invokable.chain.operators:
            d = restore.get(op.operator_id) if restore is not None else None
            if d is None:
                states.append(None)
                continue
            read = functools.partial(
                read_state, operator_id=op.operator_id, checkpoint_id=d.checkpoint_id, local=self.local_state
            )
            keyed = KeyGroupsStateReader(d.keyed, _positional_what(read))
            keyed.verify()  # every key group checked now; read again one at a time by the backend's restore
            if d.incremental:  # incremental RocksDB checkpoints: downloaded and verified into the backend now
                keyed.add(
                    restore_incremental_keyed_state(
                        op,
                        d.incremental,
                        checkpoint_id=d.checkpoint_id,
                        reuse_shared=d.reuse_shared,
                        local=self.local_state,
                    )
                )
            states.append(
                OperatorRestoreState(
                    checkpoint_id=d.checkpoint_id,
                    keyed=keyed,
                    operator=tuple(
                        read(h, what=f"operator state of old subtask {j}") if h is not None else b""
                        for j, h in enumerate(d.operator)
                    ),
                    old_parallelism=d.old_parallelism,
                )
            )
        head_id = invokable.chain.head.operator_id
        head = restore.get(head_id) if restore is not None else None
        if head is not None and head.channel is not None:
            blob = read_state(
                head.channel,
                operator_id=head_id,
                checkpoint_id=head.checkpoint_id,
                what="in-flight data (channel state)",
                local=self.local_state,
            )
            invokable.recovered_channel_state = ChannelState.from_bytes(blob)
        elif head is not None and head.rescaled_channels:
            invokable.recovered_channel_state = self._rescaled_channel_state(head, head_id)
        self._log_local_recovery()
        for op, state in zip(invokable.chain.operators, states, strict=True):
            op.initialize_state(state)

    def _log_local_recovery(self) -> None:
        """Local recovery: how much of the restore came from the local copies and how much from the checkpoint."""
        if self.local_state is None:
            return
        s = self.local_state.statistics()
        if s.local_reads or s.remote_reads:
            log.info(
                "%s restored %d bytes locally (%d reads) and %d bytes remotely (%d reads; %d local copies did not "
                "match) from %s",
                self.name,
                s.local_bytes,
                s.local_reads,
                s.remote_bytes,
                s.remote_reads,
                s.mismatches,
                self.local_state.directory,
            )

    def _rescaled_channel_state(self, head: OperatorRestoreDescriptor, head_id: str) -> ChannelState:
        """Restored at another parallelism: this subtask's share of the old channels' in-flight data, as its input
        channel state (each old subtask's file read once, checksums verified)."""
        # the rescaling wiring is the job graph's (strom.graph): imported by the restores that need it only
        from strom.runtime.checkpoint.channel_state_rescaling import redistribute

        cache: dict[Any, ChannelState] = {}

        def read(handle: Any) -> tuple[dict[tuple[int, int], list[bytes]], dict[int, list[bytes]]]:
            state = cache.get(handle)
            if state is None:
                blob = read_state(
                    handle, operator_id=head_id, checkpoint_id=head.checkpoint_id, what="in-flight data (channel state)"
                )
                state = cache[handle] = ChannelState.from_bytes(blob)
            return state.output, state.input

        first: dict[int, int] = {}  # logical input -> its first channel in this subtask's gate
        offset = 0
        for gd in self.tdd.input_gates:
            first.setdefault(max(gd.type_number - 1, 0), offset)
            offset += len(gd.channels)
        inputs = redistribute(
            head.rescaled_channels,
            read,
            subtask_index=self.tdd.subtask_index,
            parallelism=self.tdd.parallelism,
            first_channel=first.__getitem__,
        )
        return ChannelState(input=inputs)

    # -- cancellation (any thread) -----------------------------------------------------------------
    def stop_execution(self) -> None:
        """Stop-with-savepoint without drain (Flink's ``StopMode.NO_DRAIN``): the savepoint just taken holds this
        task's state, so it ends now — no end of input, no final output; its operators are closed, not finished —
        and reports FINISHED. A task not RUNNING is cancelled instead."""
        with self._state_lock:
            running = self.state is ExecutionState.RUNNING
            if running:
                self.stopped_after_savepoint = True
        if not running:
            self.cancel_execution()
            return
        invokable = self.invokable
        if invokable is not None:
            invokable.cancel()
        self.mailbox.close()
        self._release_resources("task stopped after a savepoint")

    def interrupt(self) -> bool:
        """Interrupt the thread of this cancelled task (Flink's TaskInterrupter): ``TaskCancelledError`` at its next
        Python instruction. Only once it is CANCELING: ``False`` otherwise, or when its thread is gone."""
        with self._state_lock:
            if self.state is not ExecutionState.CANCELING:
                return False
        return _raise_in_thread(self.thread, TaskCancelledError)

    def cancel_execution(self) -> None:
        with self._state_lock:
            current = self.state
            if current.is_terminal or current is ExecutionState.CANCELING:
                return
            self.state = ExecutionState.CANCELING
        self._notify(ExecutionState.CANCELING, None)
        invokable = self.invokable
        if invokable is not None:
            invokable.cancel()
        self.mailbox.close()
        # unblock a writer stuck on a full subpartition and a reader waiting for input
        self._release_resources("task cancelled")
        if current is ExecutionState.CREATED:
            with self._state_lock:
                self.state = ExecutionState.CANCELED
            self._notify(ExecutionState.CANCELED, None)
            self.termination.set()


def _raise_in_thread(thread: threading.Thread, exc_type: type[BaseException]) -> bool:
    """Raise ``exc_type`` in ``thread`` at its next Python instruction (CPython's asynchronous exception, the
    nearest to Java's ``Thread.interrupt``); ``False`` if the thread is gone."""
    ident = thread.ident
    if ident is None or not thread.is_alive():
        return False
    return bool(ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident), ctypes.py_object(exc_type)) == 1)


def _positional_what(read: Callable[..., bytes]) -> Callable[[Any, str], bytes]:
    """``read(handle, what=...)`` as ``f(handle, what)``."""
    return lambda handle, what: read(handle, what=what)
