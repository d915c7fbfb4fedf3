"""In-memory keyed state (Flink's ``HeapKeyedStateBackend``, the ``hashmap`` backend).

Layout, per state name:

* the **void namespace** (``VOID_NAMESPACE``, ``None``: all state outside windows) lives in a flat table
  ``dict[key, stored]`` — the fast path, and what :meth:`HeapKeyedStateBackend.get_table` hands to
  operators such as ``StreamGroupedReduce`` that use the dict directly;
* every **other namespace** (a window) lives in a second table ``dict[key, dict[namespace, stored]]``.

Both are indexed by key first, so a snapshot groups everything by the key's key group. ``stored`` is the
user value (value / reducing state), the accumulator (aggregating state), a ``list`` (list state) or a
``dict`` (map state); with a time-to-live each value, element or map entry is a
:class:`~strom.runtime.state.ttl.TtlValue`. ``None`` is never stored: it means "absent".

The keyed operator sets ``current_key`` (and windows ``current_namespace``) before each user call; both
are plain attributes so the hot path pays one attribute store.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, BinaryIO, ClassVar

from strom.api.state import (
    AggregatingState,
    AggregatingStateDescriptor,
    ListState,
    ListStateDescriptor,
    MapState,
    MapStateDescriptor,
    ReducingState,
    ReducingStateDescriptor,
    StateDescriptor,
    ValueState,
)
from strom.api.typeinfo import TypeInformation
from strom.exceptions import CheckpointError, InvalidProgramError
from strom.runtime.state.heap_snapshot_strategy import HeapSnapshotStrategy
from strom.runtime.state.int_key_groups import int_key_group_assigner, int_key_groups_of
from strom.runtime.state.internal_kv_state import AggregatingStateLogic, InternalKvState, ReducingStateLogic
from strom.runtime.state.key_group_partitioner import KeyGroupPartitioner
from strom.runtime.state.key_groups import KeyGroupRange, check_placement, key_group_assigner
from strom.runtime.state.state_registration import check_new_state, merge_restored_kind, registered_state
from strom.runtime.state.state_serialization import dump_state, dump_state_into
from strom.runtime.state.ttl import TtlPolicy, TtlValue, wall_clock_ms
from strom.runtime.state.typed_state import typed_view

__all__ = [
    "VOID_NAMESPACE",
    "HeapAggregatingState",
    "HeapKeyedStateBackend",
    "HeapListState",
    "HeapMapState",
    "HeapReducingState",
    "HeapValueState",
]

VOID_NAMESPACE: Any = None
#: 2: keys are placed in key groups by Flink's hash (:mod:`~strom.runtime.state.key_hash`); 1: by strom 0.1's
_FORMAT_VERSION = 2
_STROM_0_1_KEY_GROUPS = 1
_MISSING: Any = object()


class HeapKeyedStateBackend:
    """Keyed state of one operator of one subtask.

        >>> backend = HeapKeyedStateBackend(max_parallelism=128)
        >>> count = backend.get_state(ValueStateDescriptor("count"))
        >>> backend.current_key = "a"
        >>> count.update(1)
        >>> backend.get_table("count")
        {'a': 1}

    ``ttl_time_provider`` returns the current time in ms for state TTL (default: the wall clock);
    ``snapshot_strategy`` decides how snapshots are taken asynchronously (default: forked where possible).
    """

    def __init__(
        self,
        *,
        max_parallelism: int,
        ttl_time_provider: Callable[[], int] | None = None,
        snapshot_strategy: HeapSnapshotStrategy | None = None,
        key_type: TypeInformation | None = None,
    ) -> None:
        self.max_parallelism = max_parallelism
        #: how :meth:`async_snapshot` takes its point-in-time copy (a fork where the platform has one)
        self.snapshot_strategy = snapshot_strategy or HeapSnapshotStrategy()
        #: key -> key group, as the KeyGroupStreamPartitioner routes keys of ``key_type`` (``None``: untyped)
        self.key_group_of = key_group_assigner(max_parallelism, key_type)
        #: the same, computed directly for int keys: a snapshot places every key again
        direct = int_key_group_assigner(max_parallelism, key_type, self.key_group_of)
        self._partitioner = KeyGroupPartitioner(direct, lambda keys: int_key_groups_of(keys, max_parallelism, key_type))
        self.ttl_time_provider: Callable[[], int] = ttl_time_provider or wall_clock_ms
        self.current_key: Any = None
        self.current_namespace: Any = VOID_NAMESPACE
        self._tables: dict[str, dict[Any, Any]] = {}
        self._ns_tables: dict[str, dict[Any, dict[Any, Any]]] = {}
        self._states: dict[str, tuple[StateDescriptor, Any]] = {}
        self._kinds: dict[str, tuple[str, bool]] = {}  # name -> (kind, has TTL), registered or restored
        self._ttl: dict[str, TtlPolicy] = {}

    # -- current key and namespace -------------------------------------------------------------------
    def set_current_key(self, key: Any) -> None:
        self.current_key = key

    def get_current_key(self) -> Any:
        return self.current_key

    def set_current_namespace(self, namespace: Any) -> None:
        """Scope state to ``namespace`` (a window) until set back to ``VOID_NAMESPACE``."""
        self.current_namespace = namespace

    def get_current_namespace(self) -> Any:
        return self.current_namespace

    # -- tables --------------------------------------------------------------------------------------
    def get_table(self, name: str) -> dict[Any, Any]:
        """The void-namespace table of state ``name``: ``dict[key, value]``, shared with its state object."""
        table = self._tables.get(name)
        if table is None:
            table = self._tables[name] = {}
        return table

    def get_namespaced_table(self, name: str) -> dict[Any, dict[Any, Any]]:
        """The table of state ``name`` outside the void namespace: ``dict[key, dict[namespace, value]]``."""
        table = self._ns_tables.get(name)
        if table is None:
            table = self._ns_tables[name] = {}
        return table

    # -- registration --------------------------------------------------------------------------------
    def get_state(self, descriptor: StateDescriptor) -> Any:
        """The state object of ``descriptor`` (created on first use; the same object afterwards)."""
        known = registered_state(self._states, descriptor)
        if known is not None:
            return known
        kind, has_ttl = check_new_state(self._kinds, descriptor)
        ttl = TtlPolicy(descriptor.ttl_config, self.ttl_time_provider) if descriptor.ttl_config else None
        state: Any = typed_view(_STATE_CLASSES[kind](self, descriptor, ttl), descriptor)
        if ttl is not None:
            self._ttl[descriptor.name] = ttl
        self._kinds[descriptor.name] = (kind, has_ttl)
        self._states[descriptor.name] = (descriptor, state)
        return state

    def get_list_state(self, descriptor: ListStateDescriptor) -> ListState[Any]:
        return self._typed(descriptor, ListStateDescriptor, ListState)  # type: ignore[no-any-return]

    def get_map_state(self, descriptor: MapStateDescriptor) -> MapState[Any, Any]:
        return self._typed(descriptor, MapStateDescriptor, MapState)  # type: ignore[no-any-return]

    def get_reducing_state(self, descriptor: ReducingStateDescriptor) -> ReducingState[Any]:
        return self._typed(descriptor, ReducingStateDescriptor, ReducingState)  # type: ignore[no-any-return]

    def get_aggregating_state(self, descriptor: AggregatingStateDescriptor) -> AggregatingState[Any, Any]:
        return self._typed(descriptor, AggregatingStateDescriptor, AggregatingState)  # type: ignore[no-any-return]

    def _typed(self, descriptor: StateDescriptor, expected: type, _state: type) -> Any:
        if not isinstance(descriptor, expected):
            raise InvalidProgramError(
                f"expected a {expected.__name__}; got a {type(descriptor).__name__}; "
                f"hint: use get_state(...) for any kind of descriptor"
            )
        return self.get_state(descriptor)

    def num_keys(self) -> int:
        keys = {k for t in self._tables.values() for k in t}
        keys.update(k for t in self._ns_tables.values() for k in t)
        return len(keys)

    # -- snapshot and restore ------------------------------------------------------------------------
    def snapshot(self) -> dict[int, bytes]:
        """key group -> pickled state of all its keys (every state, every namespace); non-empty groups only.

        Expired TTL entries are left out. The bytes are a copy: later updates do not change them. The same as
        ``async_snapshot()()``."""
        return self.async_snapshot()()

    def async_snapshot(self) -> Callable[[], dict[int, bytes]]:
        """The synchronous part of a snapshot (a fork, see :mod:`~strom.runtime.state.heap_snapshot_strategy`):
        returns the supplier of :meth:`snapshot`'s bytes as the state is now, for the asynchronous part."""
        now = self.ttl_time_provider() if self._ttl else 0
        entries = self._entries()
        if not entries:
            return dict
        return self.snapshot_strategy.async_snapshot(
            lambda: self.write_key_groups(now), entries=entries, dump=lambda file: self.dump_key_groups(now, file)
        )

    def _entries(self) -> int:
        return sum(map(len, self._tables.values())) + sum(map(len, self._ns_tables.values()))

    def write_key_groups(self, now: int) -> Iterator[tuple[int, bytes]]:
        """The canonical bytes of each non-empty key group, in key-group order; TTL entries expired at ``now``
        left out. Reads the tables as they are: run it where they cannot change (a forked child, the task thread)."""
        for kg, payload, states in self._key_group_payloads(now):
            yield kg, dump_state(payload, states, "keyed state")

    def dump_key_groups(self, now: int, file: BinaryIO) -> Iterator[tuple[int, int]]:
        """:meth:`write_key_groups`'s bytes written one key group after the other into ``file``: (key group, length)."""
        for kg, payload, states in self._key_group_payloads(now):
            yield kg, dump_state_into(file, payload, states, "keyed state")

    def _key_group_payloads(self, now: int) -> Iterator[tuple[int, dict[str, Any], dict[str, Any]]]:
        """Each non-empty key group's payload (the canonical form) and its states, in key-group order."""
        names = sorted(self._tables.keys() | self._ns_tables.keys())
        total = self._entries()
        partitioner = self._partitioner
        assign = partitioner.start(total, shared_keys=len(names) > 1)
        groups: dict[int, dict[str, tuple[dict[Any, Any], dict[Any, dict[Any, Any]]]]] = {}
        for name in names:
            flat, namespaced = self._live_tables(name, now)
            for i, table in enumerate((flat, namespaced)):
                for kg, part in partitioner.partition(table, total=total, assign=assign).items():
                    states = groups.get(kg)
                    if states is None:
                        states = groups[kg] = {}
                    entry = states.get(name)
                    if entry is None:
                        entry = states[name] = ({}, {})
                    if entry[i]:
                        entry[i].update(part)
                    else:  # the part is this snapshot's own dict: no copy
                        states[name] = (part, entry[1]) if i == 0 else (entry[0], part)
        for kg in sorted(groups):
            states = groups[kg]
            meta = {name: self._kinds[name] for name in states if name in self._kinds}
            yield kg, {"version": _FORMAT_VERSION, "meta": meta, "states": states}, states

    def _live_tables(self, name: str, now: int) -> tuple[dict[Any, Any], dict[Any, dict[Any, Any]]]:
        """The flat and the namespaced table of ``name``, without the TTL entries expired at ``now`` and without keys
        left with no namespace (the canonical form has none: a key's last namespace removed removes the key)."""
        flat = self._tables.get(name, {})
        namespaced = self._ns_tables.get(name, {})
        policy = self._ttl.get(name)
        if policy is None:
            if not all(namespaced.values()):  # one pass in C; a copy only when a key is left empty
                namespaced = {key: per_ns for key, per_ns in namespaced.items() if per_ns}
            return flat, namespaced
        kind = self._kinds.get(name, ("table", False))[0]
        live = {key: s for key, stored in flat.items() if (s := policy.purge(kind, stored, now)) is not None}
        live_ns = {}
        for key, per_ns in namespaced.items():
            kept = {ns: p for ns, s in per_ns.items() if (p := policy.purge(kind, s, now)) is not None}
            if kept:
                live_ns[key] = kept
        return live, live_ns

    def restore(self, blobs: Mapping[int, bytes], key_group_range: KeyGroupRange | None = None) -> None:
        """Merge the key groups of a snapshot in; states registered before or after see the data.

        ``key_group_range``: the key groups this subtask owns (``None``: all). Keyed state of strom 0.1 placed keys
        by another hash; it restores where every key it holds is still this subtask's (at parallelism 1, always).
        A RocksDB checkpoint's key groups (RocksDB's own bytes) are turned into the canonical form first."""
        from strom.runtime.state.rocksdb.rocksdb_native_key_groups import load_key_group

        for kg, blob in blobs.items():
            payload = load_key_group(blob, f"keyed state of key group {kg}")
            version = payload.get("version") if isinstance(payload, dict) else None
            if version not in (_FORMAT_VERSION, _STROM_0_1_KEY_GROUPS):
                raise CheckpointError(
                    f"expected keyed state of format version {_FORMAT_VERSION} for key group {kg}; got "
                    f"{type(payload).__name__} {version if version is not None else ''}; "
                    "hint: the checkpoint was written by an incompatible strom version"
                )
            if version == _STROM_0_1_KEY_GROUPS and key_group_range is not None:
                check_placement(kg, payload["states"], key_group_range, self.key_group_of)
            for name, restored in payload["meta"].items():
                self._merge_kind(name, tuple(restored))
            for name, (flat, namespaced) in payload["states"].items():
                if flat:
                    self.get_table(name).update(flat)
                if namespaced:
                    table = self.get_namespaced_table(name)
                    for key, per_ns in namespaced.items():
                        existing = table.get(key)
                        if existing is None:
                            table[key] = per_ns
                        else:
                            existing.update(per_ns)

    def _merge_kind(self, name: str, restored: tuple[Any, ...]) -> None:
        merge_restored_kind(self._kinds, name, restored)


# --- state objects --------------------------------------------------------------------------------


class _HeapState(InternalKvState):
    """Access to the stored value of the current (key, namespace) of one state."""

    __slots__ = ("_backend", "_ns_table", "_table", "_ttl", "name")
    kind: ClassVar[str] = "value"

    def __init__(self, backend: HeapKeyedStateBackend, descriptor: StateDescriptor, ttl: TtlPolicy | None) -> None:
        self._backend = backend
        self._table = backend.get_table(descriptor.name)
        self._ns_table = backend.get_namespaced_table(descriptor.name)
        self._ttl = ttl
        self.name = descriptor.name

    def _get(self) -> Any:
        b = self._backend
        ns = b.current_namespace
        if ns is None:
            return self._table.get(b.current_key)
        per_ns = self._ns_table.get(b.current_key)
        return None if per_ns is None else per_ns.get(ns)

    def _put(self, stored: Any) -> None:
        b = self._backend
        ns = b.current_namespace
        if ns is None:
            self._table[b.current_key] = stored
            return
        per_ns = self._ns_table.get(b.current_key)
        if per_ns is None:
            per_ns = self._ns_table[b.current_key] = {}
        per_ns[ns] = stored

    def _remove(self) -> None:
        b = self._backend
        ns = b.current_namespace
        if ns is None:
            self._table.pop(b.current_key, None)
            return
        per_ns = self._ns_table.get(b.current_key)
        if per_ns is not None:
            per_ns.pop(ns, None)
            if not per_ns:
                del self._ns_table[b.current_key]


class HeapValueState(_HeapState, ValueState[Any]):
    __slots__ = ("_default",)

    def __init__(self, backend: HeapKeyedStateBackend, descriptor: StateDescriptor, ttl: TtlPolicy | None) -> None:
        super().__init__(backend, descriptor, ttl)
        self._default = getattr(descriptor, "default_value", None)

    def value(self) -> Any:
        b = self._backend
        stored = self._table.get(b.current_key) if b.current_namespace is None else self._get()
        if stored is None:
            return self._default
        if self._ttl is None:
            return stored
        value = self._read_ttl(stored)
        return self._default if value is None else value

    def update(self, value: Any) -> None:
        if value is None:
            self._remove()
            return
        ttl = self._ttl
        stored = value if ttl is None else ttl.wrap(value)
        b = self._backend
        if b.current_namespace is None:
            self._table[b.current_key] = stored
        else:
            self._put(stored)


class HeapListState(_HeapState, ListState[Any]):
    __slots__ = ()
    kind = "list"

    def get(self) -> list[Any]:
        stored = self._get()
        if not stored:
            return []
        return list(stored) if self._ttl is None else self._read_ttl_list(stored)

    def add(self, value: Any) -> None:
        self.add_all((value,))

    def add_all(self, values: Iterable[Any]) -> None:
        items = list(values)
        if not items:
            return
        if self._ttl is not None:
            now = self._ttl.clock()
            items = [TtlValue(v, now) for v in items]
        stored = self._get()
        if stored is None:
            self._put(items)
        else:
            stored.extend(items)

    def update(self, values: Iterable[Any]) -> None:
        self._remove()
        self.add_all(values)

    def _combine(self, a: Any, b: Any) -> Any:
        return a + b


class HeapMapState(_HeapState, MapState[Any, Any]):
    __slots__ = ()
    kind = "map"

    def _lookup(self, key: Any) -> Any:
        """The visible user value of ``key``, or ``_MISSING``."""
        entries = self._get()
        if entries is None:
            return _MISSING
        stored = entries.get(key, _MISSING)
        ttl = self._ttl
        if ttl is None or stored is _MISSING:
            return stored
        now = ttl.clock()
        if ttl.expired(stored, now):
            del entries[key]
            if not entries:
                self._remove()
            return stored.value if ttl.return_expired else _MISSING
        if ttl.update_on_read:
            entries[key] = TtlValue(stored.value, now)
        return stored.value

    def get(self, key: Any) -> Any:
        value = self._lookup(key)
        return None if value is _MISSING else value

    def contains(self, key: Any) -> bool:
        return self._lookup(key) is not _MISSING

    def put(self, key: Any, value: Any) -> None:
        self.put_all({key: value})

    def put_all(self, entries: Mapping[Any, Any]) -> None:
        if not entries:
            return
        ttl = self._ttl
        if ttl is not None:
            now = ttl.clock()
            entries = {k: TtlValue(v, now) for k, v in entries.items()}
        stored = self._get()
        if stored is None:
            self._put(dict(entries))
        else:
            stored.update(entries)

    def remove(self, key: Any) -> None:
        entries = self._get()
        if entries is not None:
            entries.pop(key, None)
            if not entries:
                self._remove()

    def items(self) -> list[tuple[Any, Any]]:
        entries = self._get()
        if not entries:
            return []
        ttl = self._ttl
        if ttl is None:
            return list(entries.items())
        now = ttl.clock()
        out: list[tuple[Any, Any]] = []
        for key, tv in list(entries.items()):
            if ttl.expired(tv, now):
                del entries[key]
                if ttl.return_expired:
                    out.append((key, tv.value))
                continue
            if ttl.update_on_read:
                entries[key] = TtlValue(tv.value, now)
            out.append((key, tv.value))
        if not entries:
            self._remove()
        return out

    def keys(self) -> list[Any]:
        return [k for k, _ in self.items()]

    def values(self) -> list[Any]:
        return [v for _, v in self.items()]

    def is_empty(self) -> bool:
        return not self.items()


class HeapReducingState(ReducingStateLogic, _HeapState, ReducingState[Any]):
    __slots__ = ("_reduce",)
    kind = "reducing"

    def __init__(self, backend: HeapKeyedStateBackend, descriptor: StateDescriptor, ttl: TtlPolicy | None) -> None:
        super().__init__(backend, descriptor, ttl)
        assert isinstance(descriptor, ReducingStateDescriptor)
        self._reduce = descriptor.get_reduce_callable()


class HeapAggregatingState(AggregatingStateLogic, _HeapState, AggregatingState[Any, Any]):
    __slots__ = ("_fn",)
    kind = "aggregating"

    def __init__(self, backend: HeapKeyedStateBackend, descriptor: StateDescriptor, ttl: TtlPolicy | None) -> None:
        super().__init__(backend, descriptor, ttl)
        assert isinstance(descriptor, AggregatingStateDescriptor)
        self._fn = descriptor.aggregate_function


_STATE_CLASSES: dict[str, type[_HeapState]] = {
    cls.kind: cls for cls in (HeapValueState, HeapListState, HeapMapState, HeapReducingState, HeapAggregatingState)
}
