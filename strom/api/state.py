"""Keyed and operator state: descriptors, state interfaces, time-to-live (Flink's ``api.common.state``).

A descriptor names a piece of state; the runtime hands back the matching state object, scoped to the
current key (keyed state) or to the subtask (operator state)::

    class Count(KeyedProcessFunction):
        def open(self, ctx):
            self.count = ctx.get_state(ValueStateDescriptor("count"))
        def process_element(self, value, ctx):
            n = (self.count.value() or 0) + 1
            self.count.update(n)
            yield ctx.get_current_key(), n

Every descriptor may expire its entries after a time-to-live (milliseconds)::

    ttl = StateTtlConfig.new_builder(60_000).set_update_type(UpdateType.OnReadAndWrite).build()
    descriptor = ListStateDescriptor("recent")
    descriptor.enable_time_to_live(ttl)

``None`` means "absent" in keyed state: ``ValueState.update(None)`` clears the value (as in Flink).
"""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Generic, TypeVar

from strom.api._time import to_millis
from strom.api.functions import Function, ReduceFunction, as_callable
from strom.api.time import Time

__all__ = [
    "AggregateFunction",
    "AggregatingState",
    "AggregatingStateDescriptor",
    "AppendingState",
    "ListState",
    "ListStateDescriptor",
    "MapState",
    "MapStateDescriptor",
    "ReducingState",
    "ReducingStateDescriptor",
    "State",
    "StateDescriptor",
    "StateTtlConfig",
    "StateVisibility",
    "UpdateType",
    "ValueState",
    "ValueStateDescriptor",
]

T = TypeVar("T")
IN = TypeVar("IN")
ACC = TypeVar("ACC")
OUT = TypeVar("OUT")
UK = TypeVar("UK")
UV = TypeVar("UV")


# --- time-to-live ---------------------------------------------------------------------------------


class UpdateType(enum.Enum):
    """When the last-access timestamp of an entry is refreshed (Flink's ``StateTtlConfig.UpdateType``)."""

    Disabled = "Disabled"  # TTL off: a config with it is not applied
    OnCreateAndWrite = "OnCreateAndWrite"
    OnReadAndWrite = "OnReadAndWrite"


class StateVisibility(enum.Enum):
    """Whether an expired entry that was not cleaned up yet may still be read (``StateTtlConfig.StateVisibility``)."""

    NeverReturnExpired = "NeverReturnExpired"
    ReturnExpiredIfNotCleanedUp = "ReturnExpiredIfNotCleanedUp"


class TtlTimeCharacteristic(enum.Enum):
    """The clock of state TTL (``StateTtlConfig.TtlTimeCharacteristic``): processing time, Flink's only one."""

    ProcessingTime = "ProcessingTime"


@dataclass(frozen=True, slots=True, kw_only=True)
class StateTtlConfig:
    """Time-to-live of state entries, in milliseconds of the backend's TTL clock (processing time).

    An entry expires ``ttl_ms`` after it was last written (and, with ``OnReadAndWrite``, last read).
    Expired entries are removed lazily when they are accessed, and never written into a snapshot.
    ``cleanup_in_full_snapshot`` is kept for Flink parity; the heap backend always drops expired
    entries from snapshots.

        >>> StateTtlConfig.new_builder(1000).set_update_type(UpdateType.OnReadAndWrite).build().ttl_ms
        1000
    """

    ttl_ms: int
    update_type: UpdateType = UpdateType.OnCreateAndWrite
    state_visibility: StateVisibility = StateVisibility.NeverReturnExpired
    cleanup_in_full_snapshot: bool = False
    #: the RocksDB backend deletes expired entries without reading them (Flink's compaction-filter cleanup, on by
    #: default since Flink 1.17; here a sweep on the task thread), reading the clock after this many entries;
    #: ``None``: off (``disable_cleanup_in_background()`` without ``cleanup_in_rocksdb_compact_filter``)
    rocksdb_compact_filter_query_time_after_num_entries: int | None = 1000

    def __post_init__(self) -> None:
        if isinstance(self.ttl_ms, bool) or not isinstance(self.ttl_ms, int) or self.ttl_ms <= 0:
            raise ValueError(
                f"state TTL must be a positive int of milliseconds; got {self.ttl_ms!r}; "
                "hint: StateTtlConfig.new_builder(60_000) is one minute"
            )
        if not isinstance(self.update_type, UpdateType):
            raise TypeError(f"update_type must be an UpdateType; got {self.update_type!r}")
        if not isinstance(self.state_visibility, StateVisibility):
            raise TypeError(f"state_visibility must be a StateVisibility; got {self.state_visibility!r}")
        n = self.rocksdb_compact_filter_query_time_after_num_entries
        if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n <= 0):
            raise ValueError(
                f"expected a positive int of entries for cleanup_in_rocksdb_compact_filter; got {n!r}; "
                "hint: Flink's default is 1000"
            )

    @staticmethod
    def new_builder(ttl: int | timedelta) -> StateTtlConfigBuilder:
        """``ttl`` in milliseconds or as a ``timedelta`` (``Time.seconds(1)``, ``Duration.of_minutes(5)``)."""
        return StateTtlConfigBuilder(ttl)

    def is_enabled(self) -> bool:
        return self.update_type is not UpdateType.Disabled

    def get_ttl(self) -> Time:
        """The time-to-live as PyFlink's :class:`~strom.api.time.Time` (a ``timedelta``)."""
        return Time.milliseconds(self.ttl_ms)

    def get_update_type(self) -> UpdateType:
        return self.update_type

    def get_state_visibility(self) -> StateVisibility:
        return self.state_visibility

    def get_ttl_time_characteristic(self) -> TtlTimeCharacteristic:
        return TtlTimeCharacteristic.ProcessingTime


# PyFlink's nested names: ``StateTtlConfig.UpdateType.OnReadAndWrite``, ``StateTtlConfig.StateVisibility``, ...
for _nested in (UpdateType, StateVisibility, TtlTimeCharacteristic):
    setattr(StateTtlConfig, _nested.__name__, _nested)


class StateTtlConfigBuilder:  # also StateTtlConfig.Builder
    """Flink's ``StateTtlConfig.Builder``; every setter returns the builder."""

    def __init__(self, ttl: int | timedelta) -> None:
        self._ttl_ms = _ttl_millis(ttl)
        self._update_type = UpdateType.OnCreateAndWrite
        self._visibility = StateVisibility.NeverReturnExpired
        self._cleanup_full_snapshot = False
        self._cleanup_in_background = True
        self._compact_filter_entries: int | None = None

    def set_ttl(self, ttl: int | timedelta) -> StateTtlConfigBuilder:
        self._ttl_ms = _ttl_millis(ttl)
        return self

    def set_ttl_time_characteristic(self, characteristic: TtlTimeCharacteristic) -> StateTtlConfigBuilder:
        """Processing time is the only TTL clock, in Flink as here."""
        if characteristic is not TtlTimeCharacteristic.ProcessingTime:
            raise TypeError(f"expected TtlTimeCharacteristic.ProcessingTime; got {characteristic!r}")
        return self

    def use_processing_time(self) -> StateTtlConfigBuilder:
        return self

    def disable_cleanup_in_background(self) -> StateTtlConfigBuilder:
        """No default background cleanup: the RocksDB backend's compaction-filter cleanup runs only when
        :meth:`cleanup_in_rocksdb_compact_filter` asks for it. (The heap backend cleans expired entries when they
        are accessed and leaves them out of snapshots either way.)"""
        self._cleanup_in_background = False
        return self

    def cleanup_incrementally(
        self, cleanup_size: int = 5, run_cleanup_for_every_record: bool = False
    ) -> StateTtlConfigBuilder:
        """Accepted: expired entries are dropped on access and from every snapshot already."""
        return self

    def cleanup_in_rocksdb_compact_filter(
        self, query_time_after_num_entries: int = 1000, periodic_compaction_time: timedelta | None = None
    ) -> StateTtlConfigBuilder:
        """The RocksDB backend deletes expired entries without reading them, reading the clock after every
        ``query_time_after_num_entries`` entries (Flink's compaction filter; here a sweep on the task thread, see
        docs/design.md). ``periodic_compaction_time`` is accepted: the sweep visits every entry anyway. The heap
        backend has no compaction."""
        if isinstance(query_time_after_num_entries, bool) or not isinstance(query_time_after_num_entries, int):
            raise TypeError(f"expected an int of entries; got {query_time_after_num_entries!r}")
        self._compact_filter_entries = query_time_after_num_entries
        return self

    def set_update_type(self, update_type: UpdateType) -> StateTtlConfigBuilder:
        self._update_type = update_type
        return self

    def update_ttl_on_create_and_write(self) -> StateTtlConfigBuilder:
        return self.set_update_type(UpdateType.OnCreateAndWrite)

    def update_ttl_on_read_and_write(self) -> StateTtlConfigBuilder:
        return self.set_update_type(UpdateType.OnReadAndWrite)

    def set_state_visibility(self, visibility: StateVisibility) -> StateTtlConfigBuilder:
        self._visibility = visibility
        return self

    def never_return_expired(self) -> StateTtlConfigBuilder:
        return self.set_state_visibility(StateVisibility.NeverReturnExpired)

    def return_expired_if_not_cleaned_up(self) -> StateTtlConfigBuilder:
        return self.set_state_visibility(StateVisibility.ReturnExpiredIfNotCleanedUp)

    def cleanup_full_snapshot(self) -> StateTtlConfigBuilder:
        self._cleanup_full_snapshot = True
        return self

    def build(self) -> StateTtlConfig:
        return StateTtlConfig(
            ttl_ms=self._ttl_ms,
            update_type=self._update_type,
            state_visibility=self._visibility,
            cleanup_in_full_snapshot=self._cleanup_full_snapshot,
            rocksdb_compact_filter_query_time_after_num_entries=(
                self._compact_filter_entries
                if self._compact_filter_entries is not None
                else (1000 if self._cleanup_in_background else None)
            ),
        )


def _ttl_millis(ttl: object) -> int:
    if isinstance(ttl, timedelta):
        return to_millis(ttl, "state TTL")
    return ttl  # type: ignore[return-value]  # checked by StateTtlConfig


# --- user functions -------------------------------------------------------------------------------


class AggregateFunction(Function, Generic[IN, ACC, OUT]):
    """Incremental aggregation through an accumulator (Flink's ``AggregateFunction``).

    >>> class Average(AggregateFunction):
    ...     def create_accumulator(self): return (0, 0)
    ...     def add(self, value, acc): return (acc[0] + value, acc[1] + 1)
    ...     def get_result(self, acc): return acc[0] / acc[1]
    ...     def merge(self, a, b): return (a[0] + b[0], a[1] + b[1])
    >>> Average().get_result(Average().add(4, Average().create_accumulator()))
    4.0
    """

    @abstractmethod
    def create_accumulator(self) -> ACC: ...

    @abstractmethod
    def add(self, value: IN, accumulator: ACC) -> ACC: ...

    @abstractmethod
    def get_result(self, accumulator: ACC) -> OUT: ...

    @abstractmethod
    def merge(self, a: ACC, b: ACC) -> ACC: ...


# --- descriptors ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StateDescriptor:
    """Names a piece of state; the name is unique per operator.

    ``ttl_config`` is set with :meth:`enable_time_to_live` (or given as a keyword); it does not take part
    in equality, so a descriptor stays usable as a dict key.
    """

    name: str
    ttl_config: StateTtlConfig | None = field(default=None, kw_only=True, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise TypeError(f"state name must be a non-empty str; got {self.name!r}")
        if self.ttl_config is not None and not isinstance(self.ttl_config, StateTtlConfig):
            raise TypeError(
                f"ttl_config of state '{self.name}' must be a StateTtlConfig; got a {type(self.ttl_config).__name__}; "
                "hint: StateTtlConfig.new_builder(ttl_ms).build()"
            )

    def enable_time_to_live(self, ttl_config: StateTtlConfig) -> None:
        """Expire entries of this state ``ttl_config.ttl_ms`` after their last write (Flink's method of this name).

        Call it before the descriptor is registered; a state registered earlier keeps its settings."""
        if not isinstance(ttl_config, StateTtlConfig):
            raise TypeError(
                f"enable_time_to_live expects a StateTtlConfig; got a {type(ttl_config).__name__}; "
                "hint: StateTtlConfig.new_builder(ttl_ms).build()"
            )
        object.__setattr__(self, "ttl_config", ttl_config if ttl_config.is_enabled() else None)

    def get_ttl_config(self) -> StateTtlConfig | None:
        return self.ttl_config

    def get_type_info(self) -> Any:
        """The declared type of the state's values (PyFlink's ``Types``), or ``None``: any Python object."""
        return None

    def _check_type(self, value: Any, what: str) -> None:
        from strom.api.typeinfo import TypeInformation

        if value is not None and not isinstance(value, TypeInformation):
            raise TypeError(
                f"expected the {what} of state '{self.name}' as a TypeInformation; got {value!r:.60}; "
                "hint: Types.LONG(), Types.STRING(), Types.TUPLE([...]), or leave it out"
            )

    @property
    def kind(self) -> str:
        """Short name of the state type (``value``, ``list``, ...) used in messages and snapshots."""
        return type(self).__name__.removesuffix("StateDescriptor").lower() or "state"


@dataclass(frozen=True, slots=True)
class ValueStateDescriptor(StateDescriptor):
    """A single value per key; ``value()`` is ``default_value`` (``None``) until the first ``update``.

    PyFlink's form ``ValueStateDescriptor("total", Types.FLOAT())`` declares the value type instead (values are
    stored converted to it); strom's ``ValueStateDescriptor("total", default_value=0)`` gives a default. The
    default is returned as is, not copied: prefer immutable defaults."""

    default_value: Any = None
    value_type_info: Any = field(default=None, kw_only=True, compare=False)

    def __post_init__(self) -> None:
        from strom.api.typeinfo import TypeInformation

        StateDescriptor.__post_init__(self)
        if isinstance(self.default_value, TypeInformation):  # PyFlink: the second argument is the type
            object.__setattr__(self, "value_type_info", self.default_value)
            object.__setattr__(self, "default_value", None)
        if isinstance(self.default_value, type):
            raise TypeError(
                f"ValueStateDescriptor '{self.name}' takes a default value or a TypeInformation; got the class "
                f"{self.default_value.__name__}; hint: ValueStateDescriptor({self.name!r}, Types.LONG()) as in "
                f"PyFlink, or ValueStateDescriptor({self.name!r}, default_value=0)"
            )
        self._check_type(self.value_type_info, "value type")

    def get_type_info(self) -> Any:
        return self.value_type_info


@dataclass(frozen=True, slots=True)
class ListStateDescriptor(StateDescriptor):
    """A list of elements per key (keyed state), or per subtask (operator state); ``elem_type_info`` (PyFlink's
    second argument) declares the element type."""

    elem_type_info: Any = None

    def __post_init__(self) -> None:
        StateDescriptor.__post_init__(self)
        self._check_type(self.elem_type_info, "element type")

    def get_type_info(self) -> Any:
        return self.elem_type_info


@dataclass(frozen=True, slots=True)
class MapStateDescriptor(StateDescriptor):
    """A map of user keys to user values per key; PyFlink's ``MapStateDescriptor(name, key_type_info,
    value_type_info)`` declares their types."""

    key_type_info: Any = None
    value_type_info: Any = None

    def __post_init__(self) -> None:
        StateDescriptor.__post_init__(self)
        self._check_type(self.key_type_info, "key type")
        self._check_type(self.value_type_info, "value type")


@dataclass(frozen=True, slots=True)
class ReducingStateDescriptor(StateDescriptor):
    """One value per key, combined with every ``add`` by ``reduce_function`` (a callable or ReduceFunction)."""

    reduce_function: Any = None
    type_info: Any = None

    def __post_init__(self) -> None:
        StateDescriptor.__post_init__(self)
        as_callable(self.reduce_function, ReduceFunction, "reduce", f"ReducingStateDescriptor '{self.name}'")
        self._check_type(self.type_info, "value type")

    def get_type_info(self) -> Any:
        return self.type_info

    def get_reduce_callable(self) -> Callable[[Any, Any], Any]:
        return as_callable(self.reduce_function, ReduceFunction, "reduce", f"ReducingStateDescriptor '{self.name}'")


@dataclass(frozen=True, slots=True)
class AggregatingStateDescriptor(StateDescriptor):
    """One accumulator per key, fed by every ``add`` through ``aggregate_function`` (an AggregateFunction)."""

    aggregate_function: Any = None
    state_type_info: Any = None  # PyFlink's name: the type of the accumulator (accepted, not converted)

    def __post_init__(self) -> None:
        StateDescriptor.__post_init__(self)
        self._check_type(self.state_type_info, "accumulator type")
        fn = self.aggregate_function
        if isinstance(fn, AggregateFunction):
            return
        if isinstance(fn, type) and issubclass(fn, AggregateFunction):
            hint = f"instantiate it: {fn.__name__}()"
            got = f"the class {fn.__name__}"
        else:
            hint = "subclass AggregateFunction with create_accumulator/add/get_result/merge"
            got = f"a {type(fn).__name__!r}"
        raise TypeError(
            f"AggregatingStateDescriptor '{self.name}' expects an AggregateFunction instance; got {got}; hint: {hint}"
        )


# --- state interfaces -----------------------------------------------------------------------------


class State(ABC):
    """Base of every state object: ``clear()`` removes the value of the current key (and namespace)."""

    __slots__ = ()

    @abstractmethod
    def clear(self) -> None: ...


class ValueState(State, Generic[T]):
    __slots__ = ()

    @abstractmethod
    def value(self) -> T | None: ...

    @abstractmethod
    def update(self, value: T | None) -> None:
        """Set the value; ``None`` clears it."""


class AppendingState(State, Generic[IN, OUT]):
    __slots__ = ()

    @abstractmethod
    def get(self) -> OUT: ...

    @abstractmethod
    def add(self, value: IN) -> None: ...


class ListState(AppendingState[T, list[T]]):
    """``get()`` returns a copy of the elements (an empty list when there are none)."""

    __slots__ = ()

    @abstractmethod
    def add_all(self, values: Iterable[T]) -> None: ...

    @abstractmethod
    def update(self, values: Iterable[T]) -> None:
        """Replace all elements; an empty iterable clears the state."""


class ReducingState(AppendingState[T, T | None]):
    """``get()`` is ``None`` until the first ``add``."""

    __slots__ = ()


class AggregatingState(AppendingState[IN, OUT | None]):
    """``get()`` is ``None`` until the first ``add``."""

    __slots__ = ()


class MapState(State, Generic[UK, UV]):
    """A map per key. ``keys()``, ``values()`` and ``items()`` return copies, safe to iterate while mutating."""

    __slots__ = ()

    @abstractmethod
    def get(self, key: UK) -> UV | None: ...

    @abstractmethod
    def put(self, key: UK, value: UV) -> None: ...

    @abstractmethod
    def put_all(self, entries: Mapping[UK, UV]) -> None: ...

    @abstractmethod
    def remove(self, key: UK) -> None: ...

    @abstractmethod
    def contains(self, key: UK) -> bool: ...

    @abstractmethod
    def keys(self) -> list[UK]: ...

    @abstractmethod
    def values(self) -> list[UV]: ...

    @abstractmethod
    def items(self) -> list[tuple[UK, UV]]: ...

    @abstractmethod
    def is_empty(self) -> bool: ...


StateTtlConfig.Builder = StateTtlConfigBuilder  # type: ignore[attr-defined]  # PyFlink's nested name
