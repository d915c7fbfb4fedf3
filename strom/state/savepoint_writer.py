"""``SavepointWriter``: a new savepoint, or a changed copy of an existing one (Flink's
``org.apache.flink.state.api.SavepointWriter``).

    writer = SavepointWriter.from_existing_savepoint(env, old_path)
    writer.remove_operator("old-window")
    writer.change_operator_identifier("counts", "counts-v2")
    writer.with_operator("rules", OperatorTransformation.bootstrap_with(table).key_by(...).transform(fn))
    writer.write(new_path)
    env.execute("bootstrap")   # only when an operator is bootstrapped from a DataStream

Operators bootstrapped from a table, a frame or a list, and the operators taken over from an existing savepoint,
are written by ``write`` itself, in the client. Operators bootstrapped from a :class:`DataStream` are written by a
job, as in Flink: ``write`` adds it to ``env`` (a bootstrap operator per uid, then one subtask writing
``_metadata``), and ``env.execute()`` runs it. Either way ``_metadata`` comes last, so a savepoint directory
with ``_metadata`` is complete; it restores with ``execution.savepoint.path`` into a job whose operators have
those uids, at any parallelism, into any state backend.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import fsspec.core

from strom.exceptions import CheckpointError, InvalidProgramError
from strom.runtime.checkpoint.metadata import OperatorState
from strom.runtime.checkpoint.storage import METADATA_FILE_NAME, CheckpointStorageLocation
from strom.state.bootstrap import BootstrapRunner
from strom.state.functions import BroadcastStateBootstrapFunction
from strom.state.operator_identifier import OperatorIdentifier, operator_id_of
from strom.state.operator_transformation import StateBootstrapTransformation
from strom.state.savepoint import ExistingSavepoint
from strom.state.savepoint_output import (
    BootstrapOperator,
    MergeOperatorStates,
    copy_operator_state,
    write_savepoint_metadata,
    write_subtask_state,
)

if TYPE_CHECKING:
    from strom.api.datastream import DataStream
    from strom.api.environment import StreamExecutionEnvironment

__all__ = ["SavepointWriter"]


def _normalize(path: str | os.PathLike[str]) -> str:
    path = os.fspath(path).strip()
    if "://" in path or "::" in path:
        return path.rstrip("/")
    return os.path.abspath(os.path.expanduser(path))


class SavepointWriter:
    """Builds a savepoint: :meth:`new_savepoint` or :meth:`from_existing_savepoint`, then ``with_operator`` /
    ``remove_operator`` / ``change_operator_identifier``, then :meth:`write`."""

    def __init__(
        self, env: StreamExecutionEnvironment, max_parallelism: int, existing: ExistingSavepoint | None = None
    ) -> None:
        self.env = env
        self.max_parallelism = max_parallelism
        self.existing = existing
        #: operator id in the new savepoint → its id in the existing one (the operators taken over)
        self._kept: dict[str, str] = {uid: uid for uid in existing.uids()} if existing is not None else {}
        self._bootstraps: dict[str, StateBootstrapTransformation] = {}

    # -- starting points -------------------------------------------------------------------------------------
    @staticmethod
    def new_savepoint(
        env: StreamExecutionEnvironment, max_parallelism: int = 128, *, state_backend: object = None
    ) -> SavepointWriter:
        """An empty savepoint whose keyed state has ``max_parallelism`` key groups — the max parallelism of the job
        that will restore it. ``state_backend`` is accepted as in Flink and not needed: the canonical format
        restores into every backend."""
        if isinstance(max_parallelism, bool) or not isinstance(max_parallelism, int) or max_parallelism < 1:
            raise InvalidProgramError(
                f"expected the max parallelism of the new savepoint (an int ≥ 1); got {max_parallelism!r}; hint: "
                "use the max parallelism of the job that will restore it (128 unless env.set_max_parallelism)"
            )
        return SavepointWriter(env, max_parallelism)

    @staticmethod
    def from_existing_savepoint(
        env: StreamExecutionEnvironment, path: str | os.PathLike[str], *, state_backend: object = None
    ) -> SavepointWriter:
        """A copy of the savepoint at ``path`` to change; new operators get its max parallelism."""
        existing = ExistingSavepoint.load(os.fspath(path))
        keyed = {s.max_parallelism for s in existing.metadata.operator_states.values() if s.keyed}
        max_parallelism = max(keyed) if keyed else env.get_max_parallelism()
        return SavepointWriter(env, max_parallelism, existing)

    # -- changes --------------------------------------------------------------------------------------------
    def _uids(self) -> list[str]:
        return sorted({*self._kept, *self._bootstraps})

    def _absent(self, uid: str, action: str) -> CheckpointError:
        known = ", ".join(repr(u) for u in self._uids()) or "none"
        return CheckpointError(
            f"expected an operator with uid {uid!r} to {action}; got the operators {known}; hint: pass the uid the "
            "operator has in the savepoint (SavepointReader.read(env, path).uids() lists them)"
        )

    def remove_operator(self, uid: str | OperatorIdentifier) -> SavepointWriter:
        """Leave the state of operator ``uid`` out (a job without it then restores without
        ``allow_non_restored_state``)."""
        operator_id = operator_id_of(uid)
        if operator_id in self._kept:
            del self._kept[operator_id]
        elif operator_id in self._bootstraps:
            del self._bootstraps[operator_id]
        else:
            raise self._absent(operator_id, "remove")
        return self

    def change_operator_identifier(
        self, from_uid: str | OperatorIdentifier, to_uid: str | OperatorIdentifier
    ) -> SavepointWriter:
        """Give the state of operator ``from_uid`` to the operator ``to_uid`` (a renamed ``uid(...)``)."""
        old, new = operator_id_of(from_uid), operator_id_of(to_uid)
        if old not in self._kept and old not in self._bootstraps:
            raise self._absent(old, "change its identifier")
        if new != old and new in self._uids():
            raise CheckpointError(
                f"expected a uid not in the savepoint to rename {old!r} to; got {new!r}, which has state already; "
                f"hint: remove_operator({new!r}) first, or pick another uid"
            )
        if old in self._kept:
            self._kept[new] = self._kept.pop(old)
        else:
            self._bootstraps[new] = self._bootstraps.pop(old)
        return self

    def with_operator(
        self, uid: str | OperatorIdentifier, transformation: StateBootstrapTransformation
    ) -> SavepointWriter:
        """Add the state ``transformation`` builds as the state of operator ``uid``."""
        operator_id = operator_id_of(uid)
        if not isinstance(transformation, StateBootstrapTransformation):
            raise InvalidProgramError(
                f"expected a StateBootstrapTransformation for operator {operator_id!r}; got a "
                f"{type(transformation).__name__}; hint: OperatorTransformation.bootstrap_with(data)"
                ".key_by(selector).transform(function)"
            )
        if operator_id in self._uids():
            raise CheckpointError(
                f"expected a uid without state to bootstrap; got {operator_id!r}, which the savepoint holds already; "
                f"hint: remove_operator({operator_id!r}) first to replace its state"
            )
        self._bootstraps[operator_id] = transformation
        return self

    # -- writing --------------------------------------------------------------------------------------------
    def write(self, path: str | os.PathLike[str]) -> None:
        """Write the savepoint into the directory ``path`` (any fsspec URL). With an operator bootstrapped from a
        DataStream, this adds the bootstrap job to ``env``: run it with ``env.execute()``."""
        location = self._location(path)
        checkpoint_id = self.existing.metadata.checkpoint_id if self.existing is not None else 0
        prepared: dict[str, OperatorState] = {}
        if self.existing is not None:
            for new_id, old_id in sorted(self._kept.items()):
                prepared[new_id] = copy_operator_state(
                    self.existing.metadata.operator_states[old_id], location, new_id, checkpoint_id=checkpoint_id
                )
        streams = {uid: t for uid, t in self._bootstraps.items() if t.is_stream}
        for uid, t in sorted(self._bootstraps.items()):
            if not t.is_stream:
                prepared[uid] = self._write_records(uid, t, location)
        if not streams:
            write_savepoint_metadata(location, prepared, checkpoint_id=checkpoint_id)
            return
        self._add_bootstrap_job(streams, location, prepared, checkpoint_id)

    def _location(self, path: str | os.PathLike[str]) -> CheckpointStorageLocation:
        uri = _normalize(path)
        if self.existing is not None and _normalize(self.existing.path) == uri:
            raise CheckpointError(
                f"expected a new directory to write the savepoint to; got {path}, the savepoint it is made from; "
                "hint: write to another directory (the old savepoint stays valid)"
            )
        fs, fs_path = fsspec.core.url_to_fs(uri)
        if fs.exists(fs_path.rstrip("/") + "/" + METADATA_FILE_NAME):
            raise CheckpointError(
                f"expected a directory without a savepoint to write to; got {path}, which holds one already; "
                "hint: pick a new directory — a written savepoint is never overwritten"
            )
        return CheckpointStorageLocation(uri=uri)

    def _max_parallelism(self, t: StateBootstrapTransformation) -> int:
        return t.max_parallelism or self.max_parallelism

    def _write_records(
        self, uid: str, t: StateBootstrapTransformation, location: CheckpointStorageLocation
    ) -> OperatorState:
        """A bootstrap from records: run here, as one subtask."""
        assert isinstance(t.data, list)
        max_parallelism = self._max_parallelism(t)
        runner = BootstrapRunner(t, uid=uid, max_parallelism=max_parallelism)
        runner.open()
        try:
            runner.process(t.data)
            snapshot = runner.snapshot()
        finally:
            runner.close()
        written = write_subtask_state(
            location, uid, snapshot, subtask_index=0, parallelism=1, max_parallelism=max_parallelism
        )
        return OperatorState(
            operator_id=uid,
            parallelism=1,
            max_parallelism=max_parallelism,
            keyed=written.keyed,
            operator={0: written.operator} if written.operator is not None else {},
        )

    def _add_bootstrap_job(
        self,
        streams: dict[str, StateBootstrapTransformation],
        location: CheckpointStorageLocation,
        prepared: dict[str, OperatorState],
        checkpoint_id: int,
    ) -> None:
        outputs: list[DataStream[Any]] = []
        for uid, t in sorted(streams.items()):
            data: Any = t.data
            if data.get_execution_environment() is not self.env:
                raise InvalidProgramError(
                    f"expected the bootstrap DataStream of {uid!r} to come from the writer's environment; got a "
                    "stream of another StreamExecutionEnvironment; hint: build it with the env passed to "
                    "SavepointWriter"
                )
            max_parallelism = self._max_parallelism(t)
            if t.key_selector is not None:
                data = data.key_by(t.key_selector)
            elif isinstance(t.function, BroadcastStateBootstrapFunction):
                data = data.broadcast()  # every subtask holds the same copy
            operator = BootstrapOperator(t, uid=uid, location_uri=location.uri, max_parallelism=max_parallelism)
            out = data._one_input(f"Bootstrap: {uid}", operator)
            if t.key_selector is not None:
                # route by the savepoint's key groups: the consumer's max parallelism sets the key-group partitioner's
                out.set_max_parallelism(max_parallelism)
            outputs.append(out)
        merged = outputs[0].union(*outputs[1:]) if len(outputs) > 1 else outputs[0]
        merge = MergeOperatorStates(location_uri=location.uri, prepared=prepared, checkpoint_id=checkpoint_id)
        merged._sink("Savepoint: write _metadata", merge).set_parallelism(1)
