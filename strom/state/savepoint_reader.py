"""``SavepointReader``: the state of a savepoint as streams or tables (Flink's
``org.apache.flink.state.api.SavepointReader``).

    reader = SavepointReader.read(env, "file:///savepoints/savepoint-1a2b3c-…")
    counts = reader.read_keyed_state("counts", CountReader())          # a bounded DataStream, read by a job
    table = reader.read_keyed_state_table("counts", CountReader())     # a pyarrow.Table, read here (no job)
    offsets = reader.read_list_state_table("source", "offsets")

Keyed state is read by a :class:`~strom.state.functions.KeyedStateReaderFunction`; as a stream it runs as the
source of a job on strom's runtime, its subtasks splitting the key groups as a job of that parallelism would
(:class:`~strom.state.keyed_state_input.KeyedStateSource`). Operator state — list, union list and broadcast state —
is read by name. Every state file is checked against the checksum ``_metadata`` records, as a restore checks it.
Savepoints of every state backend read alike: they share the canonical format.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from strom.api.environment import StreamExecutionEnvironment
from strom.exceptions import CheckpointError, InvalidProgramError
from strom.runtime.checkpoint.metadata import OperatorState
from strom.runtime.state.operator_state_backend import OperatorStateMode
from strom.state.functions import KeyedStateReaderFunction
from strom.state.keyed_state_input import KeyedStateSource, read_all
from strom.state.operator_identifier import OperatorIdentifier, operator_id_of
from strom.state.savepoint import ExistingSavepoint, OperatorStates
from strom.state.tables import records_to_table

if TYPE_CHECKING:
    import pyarrow as pa

    from strom.api.datastream import DataStream
    from strom.api.typeinfo import TypeInformation

__all__ = ["SavepointReader"]

_READERS = {
    OperatorStateMode.SPLIT_DISTRIBUTE.value: "read_list_state",
    OperatorStateMode.UNION.value: "read_union_state",
}


class SavepointReader:
    """Reads the state of one savepoint or retained checkpoint (:meth:`read`)."""

    def __init__(self, env: StreamExecutionEnvironment, savepoint: ExistingSavepoint) -> None:
        self.env = env
        self.savepoint = savepoint

    @staticmethod
    def read(
        env: StreamExecutionEnvironment | str | os.PathLike[str],
        path: str | os.PathLike[str] | None = None,
        state_backend: object = None,
    ) -> SavepointReader:
        """The savepoint at ``path`` (its directory or its ``_metadata``; any fsspec URL): ``read(env, path)`` as
        Flink's, or ``read(path)`` in a notebook — the streams then belong to the default environment.
        ``state_backend`` is accepted as in Flink and not needed: every backend's savepoint has the same canonical
        format."""
        if path is None and isinstance(env, str | os.PathLike):
            return SavepointReader(
                StreamExecutionEnvironment.get_execution_environment(), ExistingSavepoint.load(os.fspath(env))
            )
        if path is None or not isinstance(env, StreamExecutionEnvironment):
            raise InvalidProgramError(
                f"expected SavepointReader.read(env, path) or read(path); got read({type(env).__name__}, "
                f"{type(path).__name__}); hint: pass the savepoint's directory as a str or pathlib.Path"
            )
        return SavepointReader(env, ExistingSavepoint.load(os.fspath(path)))

    def uids(self) -> list[str]:
        """The operators (by uid) that have state in the savepoint."""
        return self.savepoint.uids()

    # -- keyed state -------------------------------------------------------------------------------------------
    def read_keyed_state(
        self,
        uid: str | OperatorIdentifier,
        function: KeyedStateReaderFunction[Any, Any],
        output_type: TypeInformation | None = None,
    ) -> DataStream[Any]:
        """What ``function`` returns for each key of operator ``uid``'s keyed state, as a bounded stream: the
        source of a job (run it with ``env.execute()`` or ``execute_and_collect()``)."""
        operator_id = operator_id_of(uid)
        source = KeyedStateSource(self.savepoint, operator_id, function)
        return self.env.from_source(source, source_name=f"read_keyed_state({operator_id})", type_info=output_type)

    def read_keyed_state_table(
        self, uid: str | OperatorIdentifier, function: KeyedStateReaderFunction[Any, Any]
    ) -> pa.Table:
        """The same as :meth:`read_keyed_state`, read here without a job (for notebooks): the outputs as the rows of
        a ``pyarrow.Table`` (dicts by their keys, tuples as ``f0``, ``f1``, ..., other values as ``value``);
        ``.to_pandas()`` makes it a pandas frame."""
        operator_id = operator_id_of(uid)
        records = read_all(self.savepoint, operator_id, function)
        return records_to_table(records, what=f"read_keyed_state_table({operator_id!r})")

    # -- operator state ----------------------------------------------------------------------------------------
    def read_list_state(
        self, uid: str | OperatorIdentifier, name: str, type_info: TypeInformation | None = None
    ) -> DataStream[Any]:
        """The elements of the list state ``name`` of every subtask, in subtask order (what a restore at parallelism
        1 gets back), as a bounded stream."""
        return self.env.from_collection(self.list_state(uid, name), type_info)

    def read_union_state(
        self, uid: str | OperatorIdentifier, name: str, type_info: TypeInformation | None = None
    ) -> DataStream[Any]:
        """The elements of the union list state ``name``: the union of every subtask's, as each subtask restores it."""
        return self.env.from_collection(self.union_state(uid, name), type_info)

    def read_broadcast_state(
        self, uid: str | OperatorIdentifier, name: str, type_info: TypeInformation | None = None
    ) -> DataStream[Any]:
        """The ``(key, value)`` entries of the broadcast state ``name`` (every subtask holds the same copy)."""
        return self.env.from_collection(list(self.broadcast_state(uid, name).items()), type_info)

    def read_list_state_table(self, uid: str | OperatorIdentifier, name: str) -> pa.Table:
        return records_to_table(self.list_state(uid, name), what=f"list state {name!r}")

    def read_union_state_table(self, uid: str | OperatorIdentifier, name: str) -> pa.Table:
        return records_to_table(self.union_state(uid, name), what=f"union list state {name!r}")

    def read_broadcast_state_table(self, uid: str | OperatorIdentifier, name: str) -> pa.Table:
        """The broadcast state as a table of the columns ``key`` and ``value``."""
        entries = [{"key": k, "value": v} for k, v in self.broadcast_state(uid, name).items()]
        return records_to_table(entries, what=f"broadcast state {name!r}")

    # -- plain values ------------------------------------------------------------------------------------------
    def list_state(self, uid: str | OperatorIdentifier, name: str) -> list[Any]:
        """The list state ``name`` as a Python list (see :meth:`read_list_state`)."""
        return self._list(uid, name, OperatorStateMode.SPLIT_DISTRIBUTE)

    def union_state(self, uid: str | OperatorIdentifier, name: str) -> list[Any]:
        """The union list state ``name`` as a Python list (see :meth:`read_union_state`)."""
        return self._list(uid, name, OperatorStateMode.UNION)

    def broadcast_state(self, uid: str | OperatorIdentifier, name: str) -> dict[Any, Any]:
        """The broadcast state ``name`` as a dict (subtask 0's copy; every subtask holds the same)."""
        state, states = self._operator_states(uid)
        copies = states.broadcast.get(name)
        if copies is None:
            raise self._unknown(state, states, name, "broadcast state", "read_broadcast_state")
        return dict(next(c for c in copies if c is not None))

    def _list(self, uid: str | OperatorIdentifier, name: str, mode: OperatorStateMode) -> list[Any]:
        state, states = self._operator_states(uid)
        method = _READERS[mode.value]
        kind = "union list state" if mode is OperatorStateMode.UNION else "list state"
        entry = states.lists.get(name)
        if entry is None:
            raise self._unknown(state, states, name, kind, method)
        stored_mode, per_subtask = entry
        if stored_mode != mode.value:
            other = _READERS.get(stored_mode, "read_list_state")
            raise CheckpointError(
                f"expected {kind} {name!r} in operator {state.operator_id!r}; got state registered with "
                f"{'get_union_list_state' if stored_mode == OperatorStateMode.UNION.value else 'get_list_state'}(); "
                f"hint: read it with {other}(...)"
            )
        return [e for elements in per_subtask for e in elements]

    def _operator_states(self, uid: str | OperatorIdentifier) -> tuple[OperatorState, OperatorStates]:
        state = self.savepoint.operator_state(operator_id_of(uid))
        return state, self.savepoint.operator_states(state)

    def _unknown(self, state: OperatorState, states: OperatorStates, name: str, kind: str, method: str) -> Exception:
        names = states.names()
        if names:
            got = "the operator states " + ", ".join(f"{n!r} ({_reader_of(states, n)})" for n in names)
        else:
            got = "no operator state" + (" (only keyed state: read_keyed_state)" if state.keyed else "")
        return CheckpointError(
            f"expected {kind} {name!r} in operator {state.operator_id!r} of the savepoint {self.savepoint.path}; "
            f"got {got}; hint: {method}(uid, name) takes the name of the job's ListStateDescriptor / "
            "MapStateDescriptor"
        )


def _reader_of(states: OperatorStates, name: str) -> str:
    """The method that reads operator state ``name``."""
    if name in states.lists:
        return _READERS.get(states.lists[name][0], "read_list_state")
    return "read_broadcast_state"
