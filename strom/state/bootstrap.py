"""Running a bootstrap function over records into state (Flink's ``BoundedStreamTask`` with the bootstrap operators
``KeyedStateBootstrapOperator``, ``StateBootstrapOperator`` and ``BroadcastStateBootstrapOperator``).

:class:`BootstrapRunner` is one bootstrapping subtask without threads or I/O: ``open()``, ``process(records)``
any number of times, ``snapshot()`` once at the end, ``close()``. Keyed state lives in a heap keyed state backend,
operator and broadcast state in an operator state backend; the snapshot is what a checkpoint of a running job
writes (key group → canonical bytes, the operator state blob), so the savepoint restores into any backend at any
parallelism. The client runs one for a table or a list (:mod:`strom.state.savepoint_writer`); a bootstrap job runs
one per subtask (:mod:`strom.state.savepoint_output`).
"""

from __future__ import annotations

import time
from typing import Any

from strom.api.checkpoint import CheckpointedFunction, FunctionInitializationContext, FunctionSnapshotContext
from strom.api.co_functions import BroadcastState
from strom.api.functions import TimerService, close_function, open_function
from strom.api.state import MapStateDescriptor
from strom.runtime.checkpoint.snapshot import OperatorSnapshot
from strom.runtime.operators.base import LONG_MIN, StreamingRuntimeContext, TaskInfo
from strom.runtime.state.heap_keyed_state_backend import HeapKeyedStateBackend
from strom.runtime.state.operator_state_backend import OperatorStateBackend
from strom.runtime.state.state_backend import key_type_of
from strom.state.functions import BroadcastStateBootstrapFunction, KeyedStateBootstrapFunction
from strom.state.keyed_state_input import USER_TIMERS
from strom.state.operator_transformation import StateBootstrapTransformation

__all__ = ["BootstrapRunner"]

_TIMER_TABLES = {"event": f"_timer_state/event_{USER_TIMERS}", "processing": f"_timer_state/processing_{USER_TIMERS}"}


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


class _BootstrapTimerService(TimerService):
    """Timers of the current key, written where a ``KeyedProcessOperator``'s ``user-timers`` restore from."""

    __slots__ = ("_backend",)

    def __init__(self, backend: HeapKeyedStateBackend) -> None:
        self._backend = backend

    def current_processing_time(self) -> int:
        return _now_ms()

    def current_watermark(self) -> int:
        return LONG_MIN

    def _set(self, domain: str, timestamp: int, present: bool) -> None:
        table = self._backend.get_namespaced_table(_TIMER_TABLES[domain])
        key = self._backend.current_key
        if present:
            table.setdefault(key, {})[(None, int(timestamp))] = True
            return
        entries = table.get(key)
        if entries is not None:
            entries.pop((None, int(timestamp)), None)
            if not entries:
                del table[key]

    def register_processing_time_timer(self, timestamp: int) -> None:
        self._set("processing", timestamp, True)

    def register_event_time_timer(self, timestamp: int) -> None:
        self._set("event", timestamp, True)

    def delete_processing_time_timer(self, timestamp: int) -> None:
        self._set("processing", timestamp, False)

    def delete_event_time_timer(self, timestamp: int) -> None:
        self._set("event", timestamp, False)


class _KeyedContext(KeyedStateBootstrapFunction.Context):
    __slots__ = ("_backend", "_timers")

    def __init__(self, backend: HeapKeyedStateBackend) -> None:
        self._backend = backend
        self._timers = _BootstrapTimerService(backend)

    def get_current_key(self) -> Any:
        return self._backend.current_key

    def timer_service(self) -> TimerService:
        return self._timers


class _OperatorContext(BroadcastStateBootstrapFunction.Context):
    """The context of both non-keyed bootstrap functions (``StateBootstrapFunction.Context`` needs only the time)."""

    __slots__ = ("_backend",)

    def __init__(self, backend: OperatorStateBackend) -> None:
        self._backend = backend

    def current_processing_time(self) -> int:
        return _now_ms()

    def get_broadcast_state(self, descriptor: MapStateDescriptor) -> BroadcastState[Any, Any]:
        return self._backend.get_broadcast_state(descriptor)


class BootstrapRunner:
    """One bootstrapping subtask of ``transformation`` for operator ``uid``."""

    def __init__(
        self,
        transformation: StateBootstrapTransformation,
        *,
        uid: str,
        max_parallelism: int,
        subtask_index: int = 0,
        parallelism: int = 1,
    ) -> None:
        self.function: Any = transformation.function
        self.key_selector = transformation.key_selector
        self.keyed_backend = (
            HeapKeyedStateBackend(max_parallelism=max_parallelism, key_type=key_type_of(self.key_selector))
            if self.key_selector is not None
            else None
        )
        self.operator_backend = OperatorStateBackend()
        info = TaskInfo(
            job_id="",
            job_name="state processor",
            task_name=f"bootstrap({uid})",
            subtask_index=subtask_index,
            parallelism=parallelism,
            max_parallelism=max_parallelism,
            attempt_number=0,
        )
        self.runtime_context = StreamingRuntimeContext(
            info, keyed_backend=self.keyed_backend, operator_name=f"bootstrap({uid})"
        )
        self._context: Any = (
            _KeyedContext(self.keyed_backend)
            if self.keyed_backend is not None
            else _OperatorContext(self.operator_backend)
        )

    def open(self, restored_checkpoint_id: int | None = None) -> None:
        """``initialize_state`` of a :class:`CheckpointedFunction` (restored: the bootstrap job restarted from
        one of its checkpoints, the backends hold its state), then ``open``."""
        fn = self.function
        if isinstance(fn, CheckpointedFunction):
            fn.initialize_state(
                FunctionInitializationContext(self.operator_backend, self.keyed_backend, restored_checkpoint_id)
            )
        open_function(fn, self.runtime_context)

    def process(self, records: list[Any]) -> None:
        """``process_element`` for each record (with its key current, for keyed state)."""
        process = self.function.process_element
        ctx = self._context
        backend = self.keyed_backend
        if backend is None:
            for value in records:
                process(value, ctx)
            return
        key_of = self.key_selector
        assert key_of is not None
        for value in records:
            backend.current_key = key_of(value)
            process(value, ctx)

    def snapshot_function_state(self, checkpoint_id: int) -> None:
        """``snapshot_state`` of a :class:`CheckpointedFunction`: its values into its operator state."""
        fn = self.function
        if isinstance(fn, CheckpointedFunction):
            fn.snapshot_state(FunctionSnapshotContext(checkpoint_id, _now_ms()))

    def snapshot(self) -> OperatorSnapshot:
        """The state built: what a checkpoint of this subtask writes."""
        self.snapshot_function_state(0)
        keyed = self.keyed_backend.snapshot() if self.keyed_backend is not None else {}
        return OperatorSnapshot(keyed=keyed, operator=self.operator_backend.snapshot())

    def close(self) -> None:
        close_function(self.function)
