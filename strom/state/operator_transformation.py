"""How state for one operator is built from data (Flink's ``OperatorTransformation``,
``OneInputOperatorTransformation``, ``KeyedOperatorTransformation`` and ``StateBootstrapTransformation``).

    transformation = (
        OperatorTransformation.bootstrap_with(data)   # a bounded DataStream, a pyarrow.Table, a pandas frame, a list
        .key_by(lambda row: row["key"])
        .transform(CountBootstrapper())                # a KeyedStateBootstrapFunction
    )
    SavepointWriter.new_savepoint(env, 128).with_operator("counts", transformation).write(path)

Without ``key_by``, ``transform`` takes a :class:`StateBootstrapFunction` (list / union list state) or a
:class:`BroadcastStateBootstrapFunction`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from strom.api.datastream import DataStream, typed_key_selector
from strom.api.typeinfo import TypeInformation
from strom.exceptions import InvalidProgramError
from strom.state.functions import (
    BroadcastStateBootstrapFunction,
    KeyedStateBootstrapFunction,
    StateBootstrapFunction,
)
from strom.state.tables import records_of

__all__ = [
    "KeyedOperatorTransformation",
    "OneInputOperatorTransformation",
    "OperatorTransformation",
    "StateBootstrapTransformation",
]

BootstrapFunction = (
    KeyedStateBootstrapFunction[Any, Any] | StateBootstrapFunction[Any] | BroadcastStateBootstrapFunction[Any]
)


@dataclass(frozen=True, slots=True)
class StateBootstrapTransformation:
    """The state of one operator, to be built: ``data`` (a :class:`DataStream`, run as a job, or the records
    themselves, run in the client) through ``function``, keyed by ``key_selector`` when it is keyed state."""

    data: DataStream[Any] | list[Any]
    function: BootstrapFunction
    key_selector: Callable[[Any], Any] | None = None
    max_parallelism: int | None = None

    @property
    def is_stream(self) -> bool:
        return isinstance(self.data, DataStream)

    def with_max_parallelism(self, max_parallelism: int) -> StateBootstrapTransformation:
        return StateBootstrapTransformation(self.data, self.function, self.key_selector, max_parallelism)


class OperatorTransformation:
    """The entry point: :meth:`bootstrap_with` the data the state is built from."""

    @staticmethod
    def bootstrap_with(data: Any) -> OneInputOperatorTransformation:
        """``data``: a bounded :class:`DataStream` (its job writes the state), or — written at once, without a job —
        a ``pyarrow.Table`` / ``RecordBatch`` or pandas ``DataFrame`` (rows as dicts of column → value), or any
        iterable of records."""
        if isinstance(data, DataStream):
            return OneInputOperatorTransformation(data)
        return OneInputOperatorTransformation(records_of(data))


class OneInputOperatorTransformation:
    """Data to bootstrap from, not yet keyed."""

    def __init__(self, data: DataStream[Any] | list[Any]) -> None:
        self._data = data
        self._max_parallelism: int | None = None

    def set_max_parallelism(self, max_parallelism: int) -> OneInputOperatorTransformation:
        """The max parallelism (number of key groups) of this operator's state; default: the savepoint's."""
        if isinstance(max_parallelism, bool) or not isinstance(max_parallelism, int) or max_parallelism < 1:
            raise InvalidProgramError(
                f"expected a max parallelism ≥ 1; got {max_parallelism!r}; hint: the job restoring the state must "
                "use the same max parallelism (env.set_max_parallelism)"
            )
        self._max_parallelism = max_parallelism
        return self

    def key_by(self, key_selector: Any, key_type: TypeInformation | None = None) -> KeyedOperatorTransformation:
        """Key the data as the job keys its stream: the same key selector and ``key_type`` give the same keys, in
        the same key groups (a declared key type places keys as Flink hashes that type)."""
        selector = typed_key_selector(key_selector, key_type)
        return KeyedOperatorTransformation(self._data, selector, self._max_parallelism)

    def transform(
        self, function: StateBootstrapFunction[Any] | BroadcastStateBootstrapFunction[Any]
    ) -> StateBootstrapTransformation:
        """Operator state: list / union list state (:class:`StateBootstrapFunction`) or broadcast state
        (:class:`BroadcastStateBootstrapFunction`)."""
        if not isinstance(function, StateBootstrapFunction | BroadcastStateBootstrapFunction):
            hint = (
                "key the data first: bootstrap_with(data).key_by(selector).transform(function)"
                if isinstance(function, KeyedStateBootstrapFunction)
                else "subclass strom.state.StateBootstrapFunction or BroadcastStateBootstrapFunction"
            )
            raise InvalidProgramError(
                f"expected a StateBootstrapFunction or BroadcastStateBootstrapFunction; got a "
                f"{type(function).__name__}; hint: {hint}"
            )
        return StateBootstrapTransformation(self._data, function, None, self._max_parallelism)


class KeyedOperatorTransformation:
    """Keyed data to bootstrap keyed state from."""

    def __init__(
        self, data: DataStream[Any] | list[Any], key_selector: Callable[[Any], Any], max_parallelism: int | None
    ) -> None:
        self._data = data
        self._key_selector = key_selector
        self._max_parallelism = max_parallelism

    def transform(self, function: KeyedStateBootstrapFunction[Any, Any]) -> StateBootstrapTransformation:
        if not isinstance(function, KeyedStateBootstrapFunction):
            raise InvalidProgramError(
                f"expected a KeyedStateBootstrapFunction after key_by(...); got a {type(function).__name__}; hint: "
                "subclass strom.state.KeyedStateBootstrapFunction and write state in process_element(value, ctx)"
            )
        return StateBootstrapTransformation(self._data, function, self._key_selector, self._max_parallelism)
