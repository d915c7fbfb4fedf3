"""Reading the keyed state of one operator with a :class:`KeyedStateReaderFunction` (Flink's
``KeyedStateInputFormat`` and ``KeyedStateReaderOperator``).

:class:`KeyedStateReader` is the pure part: it holds a heap keyed state backend that the function's state objects
read from, and for each key group of the savepoint loads that group's canonical bytes into it, calls ``read_key``
once per key of the registered states and empties the backend again — one key group in memory at a time,
whichever backend wrote the savepoint. :class:`KeyedStateSource` runs it as a bounded source on strom's runtime:
its splits are the key-group ranges of the source's parallelism (Flink's ``KeyGroupRangeInputSplit``), each
split's position is the next key group to read, so a checkpointed reading job resumes where it stopped.

Timers are read from the ``user-timers`` service of a (co-)``KeyedProcessFunction``, as Flink's reader context
offers them; window state (non-void namespaces) is not read by ``read_key``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from strom.api.functions import close_function, open_function
from strom.api.source import Source, SourceReader, SourceReaderContext, SourceSplit
from strom.api.state import (
    AggregatingStateDescriptor,
    ListStateDescriptor,
    MapStateDescriptor,
    ReducingStateDescriptor,
    StateDescriptor,
    ValueStateDescriptor,
)
from strom.connectors.number_sequence import IndexRangeReader
from strom.exceptions import CheckpointError, InvalidProgramError
from strom.runtime.checkpoint.metadata import OperatorState
from strom.runtime.operators.base import StreamingRuntimeContext, TaskInfo
from strom.runtime.state.heap_keyed_state_backend import HeapKeyedStateBackend
from strom.runtime.state.key_groups import compute_key_group_range_for_operator_index
from strom.state.functions import KeyedStateReaderFunction
from strom.state.savepoint import ExistingSavepoint, KeyGroupState

__all__ = ["KeyedStateReader", "KeyedStateSource", "describe_state_kind", "state_kind"]

USER_TIMERS = "user-timers"
"""The timer service of ``KeyedProcessOperator`` / ``KeyedCoProcessOperator`` (strom.runtime.operators.keyed)."""
_EVENT_TIMERS = f"_timer_state/event_{USER_TIMERS}"
_PROCESSING_TIMERS = f"_timer_state/processing_{USER_TIMERS}"

_KINDS: tuple[tuple[type[StateDescriptor], str], ...] = (
    (ValueStateDescriptor, "value"),
    (ListStateDescriptor, "list"),
    (MapStateDescriptor, "map"),
    (ReducingStateDescriptor, "reducing"),
    (AggregatingStateDescriptor, "aggregating"),
)


def state_kind(descriptor: StateDescriptor) -> tuple[str, bool]:
    """``(kind, has TTL)`` of a descriptor, as the canonical format's ``meta`` records it."""
    for cls, kind in _KINDS:
        if isinstance(descriptor, cls):
            return kind, descriptor.ttl_config is not None
    raise InvalidProgramError(
        f"expected a Value/List/Map/Reducing/AggregatingStateDescriptor; got a {type(descriptor).__name__}; "
        "hint: describe keyed state with one of the descriptors of strom.api.state"
    )


def describe_state_kind(kind: str, has_ttl: bool) -> str:
    return f"{kind} state {'with' if has_ttl else 'without'} TTL"


class _ReaderRuntimeContext(StreamingRuntimeContext):
    """The runtime context of a reader function: keyed state of the current key, and which names it asked for."""

    def __init__(self, info: TaskInfo, backend: HeapKeyedStateBackend, operator_name: str) -> None:
        super().__init__(info, keyed_backend=backend, operator_name=operator_name)
        self.registered: dict[str, StateDescriptor] = {}

    def get_state(self, descriptor: StateDescriptor) -> Any:
        state_kind(descriptor)
        self.registered[descriptor.name] = descriptor
        return super().get_state(descriptor)


class _ReadContext(KeyedStateReaderFunction.Context):
    __slots__ = ("_backend",)

    def __init__(self, backend: HeapKeyedStateBackend) -> None:
        self._backend = backend

    def _timers(self, table: str) -> list[int]:
        entries = self._backend.get_namespaced_table(table).get(self._backend.current_key) or {}
        return sorted(time for namespace, time in entries if namespace is None)

    def registered_event_time_timers(self) -> list[int]:
        return self._timers(_EVENT_TIMERS)

    def registered_processing_time_timers(self) -> list[int]:
        return self._timers(_PROCESSING_TIMERS)


class KeyedStateReader:
    """One reading subtask: ``open()``, ``read(key_group_state)`` per key group, ``close()``."""

    def __init__(
        self,
        uid: str,
        function: KeyedStateReaderFunction[Any, Any],
        *,
        max_parallelism: int,
        subtask_index: int = 0,
        parallelism: int = 1,
    ) -> None:
        if not isinstance(function, KeyedStateReaderFunction):
            raise InvalidProgramError(
                f"expected a KeyedStateReaderFunction to read the keyed state of {uid!r}; got a "
                f"{type(function).__name__}; hint: subclass strom.state.KeyedStateReaderFunction and implement "
                "open(runtime_context) and read_key(key, ctx)"
            )
        self.uid = uid
        self.function = function
        self.backend = HeapKeyedStateBackend(max_parallelism=max_parallelism)
        info = TaskInfo(
            job_id="",
            job_name="state processor",
            task_name=f"read_keyed_state({uid})",
            subtask_index=subtask_index,
            parallelism=parallelism,
            max_parallelism=max_parallelism,
            attempt_number=0,
        )
        self.context = _ReaderRuntimeContext(info, self.backend, f"read_keyed_state({uid})")
        self._read_context = _ReadContext(self.backend)
        self.seen: set[str] = set()
        """The state names of the key groups read so far."""

    def open(self) -> None:
        open_function(self.function, self.context)
        if not self.context.registered:
            raise InvalidProgramError(
                f"expected the reader function {type(self.function).__name__} to register the states to read in "
                "open(runtime_context); got none; hint: self.count = runtime_context.get_state("
                "ValueStateDescriptor('count')) in open()"
            )

    def close(self) -> None:
        close_function(self.function)

    def read(self, group: KeyGroupState) -> list[Any]:
        """``read_key`` for every key of the registered states in ``group``; their outputs in key order."""
        registered = self.context.registered
        self._check_kinds(group)
        self.seen.update(group.meta)
        backend = self.backend
        loaded = [name for name in (*registered, _EVENT_TIMERS, _PROCESSING_TIMERS) if name in group.states]
        try:
            for name in loaded:  # only what the function can see: the other states of the group stay unread
                flat, namespaced = group.states[name]
                if flat:
                    backend.get_table(name).update(flat)
                if namespaced:
                    backend.get_namespaced_table(name).update(namespaced)
            keys = dict.fromkeys(k for name in registered if name in group.states for k in group.states[name][0])
            out: list[Any] = []
            read_key = self.function.read_key
            ctx = self._read_context
            for key in keys:
                backend.current_key = key
                produced = read_key(key, ctx)
                if produced is not None:
                    out.extend(produced)
            return out
        finally:
            for name in loaded:
                backend.get_table(name).clear()
                backend.get_namespaced_table(name).clear()

    def _check_kinds(self, group: KeyGroupState) -> None:
        for name, descriptor in self.context.registered.items():
            stored = group.meta.get(name)
            if stored is not None and stored != state_kind(descriptor):
                raise InvalidProgramError(
                    f"expected state {name!r} of operator {self.uid!r} to be read with a descriptor of its kind; got "
                    f"a {type(descriptor).__name__} {'with' if descriptor.ttl_config else 'without'} TTL for "
                    f"{describe_state_kind(*stored)}; hint: register it in open() with the descriptor (and "
                    "StateTtlConfig) the job used"
                )

    def check_all_found(self) -> None:
        """After reading every key group: each registered state must have been in the savepoint."""
        missing = sorted(set(self.context.registered) - self.seen)
        if missing and self.seen:
            found = ", ".join(repr(n) for n in sorted(n for n in self.seen if not n.startswith("_timer_state/")))
            raise CheckpointError(
                f"expected keyed state {', '.join(repr(n) for n in missing)} in operator {self.uid!r}; got the "
                f"states {found or 'none (only timers)'}; hint: use the state names of the job's descriptors"
            )


def read_all(savepoint: ExistingSavepoint, uid: str, function: KeyedStateReaderFunction[Any, Any]) -> list[Any]:
    """Every output of ``function`` over all key groups of operator ``uid``, in the client (no job)."""
    state = savepoint.operator_state(uid)
    _check_has_keyed_state(savepoint, state)
    reader = KeyedStateReader(uid, function, max_parallelism=state.max_parallelism)
    reader.open()
    try:
        out: list[Any] = []
        for group in savepoint.key_groups(state):
            out.extend(reader.read(group))
        reader.check_all_found()
        return out
    finally:
        reader.close()


def _check_has_keyed_state(savepoint: ExistingSavepoint, state: OperatorState) -> None:
    if not state.keyed and not state.incremental:
        raise CheckpointError(
            f"expected keyed state for operator {state.operator_id!r} in the savepoint {savepoint.path}; got only "
            f"{'operator (list / union / broadcast) state' if state.operator else 'no state'}; hint: read it with "
            "read_list_state / read_union_state / read_broadcast_state"
        )


class KeyedStateSource(Source[Any]):
    """A bounded source of the outputs of a reader function over the keyed state of one operator: split ``i`` of
    ``p`` is the key-group range subtask ``i`` of a job at parallelism ``p`` would own."""

    def __init__(self, savepoint: ExistingSavepoint, uid: str, function: KeyedStateReaderFunction[Any, Any]) -> None:
        self.savepoint = savepoint
        self.state = savepoint.operator_state(uid)
        _check_has_keyed_state(savepoint, self.state)
        self.uid = uid
        self.function = function

    def create_splits(self, parallelism: int) -> list[SourceSplit]:
        max_parallelism = self.state.max_parallelism
        splits = []
        for i in range(parallelism):
            r = compute_key_group_range_for_operator_index(max_parallelism, parallelism, i)
            splits.append(SourceSplit(split_id=f"key-groups-{i}", payload=(r.start, max(r.start, r.end + 1))))
        return splits

    def create_reader(self, context: SourceReaderContext) -> SourceReader[Any]:
        return _KeyedStateSourceReader(self, context)


class _KeyedStateSourceReader(IndexRangeReader[Any]):
    """Reads one key group per poll (its outputs are one batch)."""

    def __init__(self, source: KeyedStateSource, context: SourceReaderContext) -> None:
        super().__init__(context)
        self._source = source
        self._reader = KeyedStateReader(
            source.uid,
            source.function,
            max_parallelism=source.state.max_parallelism,
            subtask_index=context.subtask_index,
            parallelism=context.parallelism,
        )

    def start(self) -> None:
        self._reader.open()

    def available(self) -> int:
        return 1

    def produce(self, lo: int, end: int) -> list[Any]:
        source = self._source
        out: list[Any] = []
        groups: Iterable[KeyGroupState] = source.savepoint.key_groups(source.state, range(lo, end))
        for group in groups:
            out.extend(self._reader.read(group))
        return out

    def close(self) -> None:
        self._reader.close()
