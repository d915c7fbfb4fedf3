"""What every keyed state object does the same way in every backend (Flink's ``InternalKvState`` /
``InternalMergingState`` and the TTL wrappers): TTL on read, merging namespaces, and the reducing and aggregating
state's logic — over three storage primitives a backend provides for the current (key, namespace): ``_get`` (the
stored form, ``None`` if absent), ``_put`` and ``_remove``.

The heap backend's ``_HeapState`` and the RocksDB backend's ``AbstractRocksDBState`` are these primitives; their
value, list and map states keep their own fast paths (a dict access, a column-family entry per element)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from typing import Any, ClassVar

from strom.exceptions import InvalidProgramError
from strom.runtime.state.ttl import TtlPolicy, TtlValue

__all__ = ["AggregatingStateLogic", "InternalKvState", "ReducingStateLogic"]


class InternalKvState(ABC):
    """The state of one name for the backend's current (key, namespace)."""

    __slots__ = ()
    kind: ClassVar[str] = "value"
    name: str
    _backend: Any
    _ttl: TtlPolicy | None

    @abstractmethod
    def _get(self) -> Any:
        """The stored form of the current (key, namespace); ``None`` if absent."""

    @abstractmethod
    def _put(self, stored: Any) -> None: ...

    @abstractmethod
    def _remove(self) -> None: ...

    def _read_ttl(self, tv: TtlValue) -> Any:
        """The user value of ``tv`` under the TTL rules (``None`` if expired and invisible)."""
        ttl = self._ttl
        assert ttl is not None
        now = ttl.clock()
        if ttl.expired(tv, now):
            self._remove()
            return tv.value if ttl.return_expired else None
        if ttl.update_on_read:
            self._put(TtlValue(tv.value, now))
        return tv.value

    def _read_ttl_list(self, stored: list[TtlValue]) -> list[Any]:
        """The user values of a list state's elements under the TTL rules; expired ones are dropped from storage."""
        ttl = self._ttl
        assert ttl is not None
        now = ttl.clock()
        fresh = [tv for tv in stored if not ttl.expired(tv, now)]
        result = [tv.value for tv in (stored if ttl.return_expired else fresh)]
        if ttl.update_on_read:
            fresh = [TtlValue(tv.value, now) for tv in fresh]
        if ttl.update_on_read or len(fresh) != len(stored):
            if fresh:
                self._put(fresh)
            else:
                self._remove()
        return result

    def clear(self) -> None:
        self._remove()

    # -- merging namespaces (merging windows) ------------------------------------------------------------------
    def _combine(self, a: Any, b: Any) -> Any:
        """Overridden by list, reducing and aggregating state, the only kinds ``merge_namespaces`` admits."""
        raise AssertionError(f"{self.kind} state has no combine; merge_namespaces refuses it before")

    def merge_namespaces(self, target: Any, sources: Iterable[Any]) -> None:
        """Move the state of each ``sources`` namespace of the current key into ``target`` (Flink's
        ``InternalMergingState.mergeNamespaces``); list, reducing and aggregating state only."""
        kind = self.kind
        if kind not in ("list", "reducing", "aggregating"):
            raise InvalidProgramError(
                f"expected list, reducing or aggregating state to merge namespaces; got {kind} state "
                f"'{self.name}'; hint: merging windows need state that can be combined"
            )
        backend = self._backend
        saved = backend.current_namespace
        ttl = self._ttl
        merged: Any = None
        try:
            for ns in [target, *sources]:
                backend.current_namespace = ns
                stored = self._get()
                if stored is None:
                    continue
                self._remove()
                if ttl is not None:
                    stored = ttl.purge(kind, stored, ttl.clock())
                    if stored is None:
                        continue
                    if kind != "list":
                        stored = stored.value
                merged = stored if merged is None else self._combine(merged, stored)
            if merged is not None:
                backend.current_namespace = target
                self._put(merged if ttl is None or kind == "list" else ttl.wrap(merged))
        finally:
            backend.current_namespace = saved


class ReducingStateLogic(InternalKvState):
    """``ReducingState``: the reduced value, one stored form per (key, namespace)."""

    __slots__ = ()
    kind: ClassVar[str] = "reducing"
    _reduce: Callable[[Any, Any], Any]

    def get(self) -> Any:
        stored = self._get()
        if stored is None or self._ttl is None:
            return stored
        return self._read_ttl(stored)

    def add(self, value: Any) -> None:
        if value is None:
            return
        stored = self._get()
        ttl = self._ttl
        if ttl is None:
            new = value if stored is None else self._reduce(stored, value)
        else:
            now = ttl.clock()
            current = None if stored is None or ttl.expired(stored, now) else stored.value
            new = value if current is None else self._reduce(current, value)
            new = None if new is None else TtlValue(new, now)
        if new is None:
            self._remove()
        else:
            self._put(new)

    def _combine(self, a: Any, b: Any) -> Any:
        return self._reduce(a, b)


class AggregatingStateLogic(InternalKvState):
    """``AggregatingState``: the accumulator, one stored form per (key, namespace)."""

    __slots__ = ()
    kind: ClassVar[str] = "aggregating"
    _fn: Any  # the AggregateFunction

    def get(self) -> Any:
        stored = self._get()
        accumulator = stored if stored is None or self._ttl is None else self._read_ttl(stored)
        return None if accumulator is None else self._fn.get_result(accumulator)

    def add(self, value: Any) -> None:
        stored = self._get()
        ttl = self._ttl
        fn = self._fn
        if ttl is None:
            self._put(fn.add(value, fn.create_accumulator() if stored is None else stored))
            return
        now = ttl.clock()
        current = None if stored is None or ttl.expired(stored, now) else stored.value
        self._put(TtlValue(fn.add(value, fn.create_accumulator() if current is None else current), now))

    def _combine(self, a: Any, b: Any) -> Any:
        return self._fn.merge(a, b)
