"""SavepointWriter: savepoints bootstrapped from tables, frames, lists and bounded DataStreams restore into the state
backends as a job restores them (key groups into a keyed backend, operator state redistributed); operators of an
existing savepoint are copied, renamed or removed; misuse fails with what exists."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from savepoints import KEYS, AllStates, write_job_savepoint

from strom import StreamExecutionEnvironment
from strom.api.checkpoint import CheckpointedFunction, FunctionInitializationContext, FunctionSnapshotContext
from strom.api.functions import RuntimeContext
from strom.api.state import ListStateDescriptor, MapStateDescriptor, ValueStateDescriptor
from strom.exceptions import CheckpointError, CorruptStateError, InvalidProgramError
from strom.runtime.checkpoint.snapshot import OperatorRestoreState
from strom.runtime.checkpoint.storage import read_state, resolve_checkpoint_pointer
from strom.runtime.operators.base import StreamingRuntimeContext, TaskInfo
from strom.runtime.state.heap_keyed_state_backend import HeapKeyedStateBackend
from strom.runtime.state.key_groups import assign_to_key_group
from strom.runtime.state.operator_state_backend import OperatorStateBackend
from strom.state import (
    BroadcastStateBootstrapFunction,
    KeyedStateBootstrapFunction,
    OperatorTransformation,
    SavepointReader,
    SavepointWriter,
    StateBootstrapFunction,
)
from strom.state.savepoint_output import BootstrapOperator


class Counts(KeyedStateBootstrapFunction[str, dict[str, Any]]):
    def open(self, runtime_context: RuntimeContext) -> None:
        self.count = runtime_context.get_state(ValueStateDescriptor("count"))

    def process_element(self, value: dict[str, Any], ctx: KeyedStateBootstrapFunction.Context) -> None:
        assert ctx.get_current_key() == value["key"]
        self.count.update((self.count.value() or 0) + value["count"])
        ctx.timer_service().register_event_time_timer(value["count"])


class Offsets(StateBootstrapFunction[int], CheckpointedFunction):
    def initialize_state(self, context: FunctionInitializationContext) -> None:
        self.state = context.get_operator_state_store().get_list_state(ListStateDescriptor("offsets"))
        self.offsets: list[int] = list(self.state.get()) if context.is_restored() else []

    def snapshot_state(self, context: FunctionSnapshotContext) -> None:
        self.state.update(self.offsets)

    def process_element(self, value: int, ctx: StateBootstrapFunction.Context) -> None:
        self.offsets.append(value)


class Rules(BroadcastStateBootstrapFunction[tuple[str, int]]):
    def process_element(self, value: tuple[str, int], ctx: BroadcastStateBootstrapFunction.Context) -> None:
        ctx.get_broadcast_state(MapStateDescriptor("rules")).put(*value)


def env_of(parallelism: int = 1) -> StreamExecutionEnvironment:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(parallelism)
    return env


def restored_backend(path: Path, uid: str) -> HeapKeyedStateBackend:
    """The keyed state of ``uid`` restored as a keyed operator restores it."""
    _, metadata = resolve_checkpoint_pointer(str(path))
    state = metadata.operator_states[uid]
    backend = HeapKeyedStateBackend(max_parallelism=state.max_parallelism)
    backend.restore({kg: read_state(h) for kg, h in state.keyed.items()})
    return backend


def counts_of(backend: HeapKeyedStateBackend) -> dict[Any, Any]:
    return dict(backend.get_table("count"))


def test_a_table_bootstraps_keyed_state_that_a_keyed_backend_restores(tmp_path: Path) -> None:
    table = pa.table({"key": ["a", "b", "c", "a"], "count": [1, 2, 3, 10]})
    transformation = OperatorTransformation.bootstrap_with(table).key_by(lambda r: r["key"]).transform(Counts())
    SavepointWriter.new_savepoint(env_of(), 32).with_operator("counts", transformation).write(str(tmp_path / "sp"))
    backend = restored_backend(tmp_path / "sp", "counts")
    assert counts_of(backend) == {"a": 11, "b": 2, "c": 3}
    assert backend.max_parallelism == 32
    _, metadata = resolve_checkpoint_pointer(str(tmp_path / "sp"))
    assert metadata.is_savepoint and metadata.checkpoint_id == 0
    assert set(metadata.operator_states["counts"].keyed) == {assign_to_key_group(k, 32) for k in "abc"}
    timers = backend.get_namespaced_table("_timer_state/event_user-timers")
    assert timers["a"] == {(None, 1): True, (None, 10): True}


def test_a_frame_like_object_bootstraps_its_rows_as_dicts(tmp_path: Path) -> None:
    class Frame:  # what the writer uses of a pandas DataFrame
        columns = ["key", "count"]
        iloc = None

        def to_dict(self, orient: str) -> list[dict[str, Any]]:
            assert orient == "records"
            return [{"key": "x", "count": 4}]

    transformation = OperatorTransformation.bootstrap_with(Frame()).key_by(lambda r: r["key"]).transform(Counts())
    SavepointWriter.new_savepoint(env_of()).with_operator("counts", transformation).write(str(tmp_path / "sp"))
    assert counts_of(restored_backend(tmp_path / "sp", "counts")) == {"x": 4}


def test_list_and_broadcast_state_bootstrap_and_redistribute_on_restore(tmp_path: Path) -> None:
    writer = SavepointWriter.new_savepoint(env_of())
    writer.with_operator("source", OperatorTransformation.bootstrap_with(range(5)).transform(Offsets()))
    writer.with_operator("rules", OperatorTransformation.bootstrap_with([("r1", 1), ("r2", 2)]).transform(Rules()))
    writer.write(str(tmp_path / "sp"))
    _, metadata = resolve_checkpoint_pointer(str(tmp_path / "sp"))
    blobs = [read_state(h) for h in metadata.operator_states["source"].operator.values()]
    shares = []
    for subtask in range(2):
        backend = OperatorStateBackend()
        backend.restore(blobs, subtask_index=subtask, parallelism=2)
        shares.append(backend.get_list_state(ListStateDescriptor("offsets")).get())
    assert shares == [[0, 1, 2], [3, 4]]
    reader = SavepointReader.read(env_of(), str(tmp_path / "sp"))
    assert reader.broadcast_state("rules", "rules") == {"r1": 1, "r2": 2}


@pytest.mark.parametrize("parallelism", [1, 3])
def test_a_bounded_datastream_bootstraps_through_a_job(tmp_path: Path, parallelism: int) -> None:
    env = env_of(parallelism)
    data = env.from_collection([{"key": f"k{i % 50}", "count": i} for i in range(200)])
    transformation = OperatorTransformation.bootstrap_with(data).key_by(lambda r: r["key"]).transform(Counts())
    writer = SavepointWriter.new_savepoint(env, 16).with_operator("counts", transformation)
    writer.with_operator("source", OperatorTransformation.bootstrap_with([7]).transform(Offsets()))  # in the client
    writer.write(str(tmp_path / "sp"))
    assert not (tmp_path / "sp" / "_metadata").exists(), "the job writes _metadata, last"
    env.execute("bootstrap")
    expected = {f"k{k}": sum(i for i in range(200) if i % 50 == k) for k in range(50)}
    assert counts_of(restored_backend(tmp_path / "sp", "counts")) == expected
    _, metadata = resolve_checkpoint_pointer(str(tmp_path / "sp"))
    assert metadata.operator_states["counts"].parallelism == parallelism
    assert metadata.operator_states["counts"].max_parallelism == 16
    assert SavepointReader.read(env, str(tmp_path / "sp")).list_state("source", "offsets") == [7]


def test_an_existing_savepoint_is_copied_with_a_renamed_and_without_a_removed_operator(tmp_path: Path) -> None:
    old = write_job_savepoint(tmp_path / "old")
    writer = SavepointWriter.from_existing_savepoint(env_of(), str(old))
    writer.change_operator_identifier("counts", "counts-v2").remove_operator("source")
    writer.write(str(tmp_path / "new"))
    shutil.rmtree(old)  # the new savepoint is self-contained
    reader = SavepointReader.read(env_of(), str(tmp_path / "new"))
    assert reader.uids() == ["counts-v2"]
    assert reader.savepoint.metadata.checkpoint_id == 7
    rows = reader.read_keyed_state_table("counts-v2", AllStates()).to_pylist()
    assert sorted(r["count"] for r in rows) == list(range(len(KEYS)))


def test_an_existing_savepoint_gets_a_new_operator_with_its_max_parallelism(tmp_path: Path) -> None:
    old = write_job_savepoint(tmp_path / "old", max_parallelism=64)
    table = pa.table({"key": ["z"], "count": [9]})
    writer = SavepointWriter.from_existing_savepoint(env_of(), str(old))
    writer.with_operator(
        "more", OperatorTransformation.bootstrap_with(table).key_by(lambda r: r["key"]).transform(Counts())
    )
    writer.write(str(tmp_path / "new"))
    backend = restored_backend(tmp_path / "new", "more")
    assert backend.max_parallelism == 64 and counts_of(backend) == {"z": 9}
    assert SavepointReader.read(env_of(), str(tmp_path / "new")).uids() == ["counts", "more", "source"]


def test_a_damaged_existing_savepoint_is_not_copied(tmp_path: Path) -> None:
    old = write_job_savepoint(tmp_path / "old")
    damaged = old / "source-op-1"
    damaged.write_bytes(damaged.read_bytes()[:-1] + b"!")
    writer = SavepointWriter.from_existing_savepoint(env_of(), str(old))
    with pytest.raises(CorruptStateError, match=r"operator state of subtask 1.*of operator 'source'"):
        writer.write(str(tmp_path / "new"))
    assert not (tmp_path / "new" / "_metadata").exists()


def test_changes_to_operators_that_are_not_there_name_those_that_are(tmp_path: Path) -> None:
    old = write_job_savepoint(tmp_path / "old")
    writer = SavepointWriter.from_existing_savepoint(env_of(), str(old))
    with pytest.raises(CheckpointError, match=r"uid 'count' to remove; got the operators 'counts', 'source'"):
        writer.remove_operator("count")
    with pytest.raises(CheckpointError, match=r"uid 'x' to change its identifier"):
        writer.change_operator_identifier("x", "y")
    with pytest.raises(CheckpointError, match=r"got 'source', which has state already.*remove_operator"):
        writer.change_operator_identifier("counts", "source")
    table_transformation = OperatorTransformation.bootstrap_with([1]).transform(Offsets())
    with pytest.raises(CheckpointError, match=r"got 'counts', which the savepoint holds already"):
        writer.with_operator("counts", table_transformation)


def test_a_savepoint_is_never_written_over_another(tmp_path: Path) -> None:
    old = write_job_savepoint(tmp_path / "old")
    with pytest.raises(CheckpointError, match="the savepoint it is made from"):
        SavepointWriter.from_existing_savepoint(env_of(), str(old)).write(str(old))
    with pytest.raises(CheckpointError, match="holds one already"):
        SavepointWriter.new_savepoint(env_of()).write(str(old))


def test_misused_transformations_say_what_they_expect() -> None:
    with pytest.raises(InvalidProgramError, match=r"key the data first"):
        OperatorTransformation.bootstrap_with([1]).transform(Counts())  # type: ignore[arg-type]
    with pytest.raises(InvalidProgramError, match=r"KeyedStateBootstrapFunction after key_by"):
        OperatorTransformation.bootstrap_with([1]).key_by(lambda v: v).transform(Offsets())  # type: ignore[arg-type]
    with pytest.raises(InvalidProgramError, match=r"iterable of records; got a int"):
        OperatorTransformation.bootstrap_with(5)
    with pytest.raises(InvalidProgramError, match=r"max parallelism of the new savepoint"):
        SavepointWriter.new_savepoint(env_of(), 0)
    with pytest.raises(InvalidProgramError, match=r"StateBootstrapTransformation"):
        SavepointWriter.new_savepoint(env_of()).with_operator("x", Counts())  # type: ignore[arg-type]


class Emitted:
    def __init__(self) -> None:
        self.records: list[Any] = []

    def emit(self, batch: list[Any]) -> None:
        self.records.extend(batch)


def bootstrap_operator(transformation: Any, location: Path) -> tuple[BootstrapOperator, Emitted]:
    operator = BootstrapOperator(transformation, uid="counts", location_uri=str(location), max_parallelism=8)
    info = TaskInfo(
        job_id="j",
        job_name="bootstrap",
        task_name="t",
        subtask_index=0,
        parallelism=1,
        max_parallelism=8,
        attempt_number=0,
    )
    output = Emitted()
    operator.setup(StreamingRuntimeContext(info), output)  # type: ignore[arg-type]
    return operator, output


def test_a_bootstrap_job_that_fails_over_restores_what_it_built_up_to_its_checkpoint(tmp_path: Path) -> None:
    keyed = OperatorTransformation.bootstrap_with([]).key_by(lambda r: r["key"]).transform(Counts())
    first, _ = bootstrap_operator(keyed, tmp_path)
    first.initialize_state(None)
    first.open()
    first.process_batch([{"key": "a", "count": 1}, {"key": "b", "count": 2}])
    snapshot = first.snapshot_state(1, 0)
    assert snapshot is not None
    first.process_batch([{"key": "a", "count": 100}])  # lost with the failure: replayed from the checkpoint
    second, output = bootstrap_operator(keyed, tmp_path)
    second.initialize_state(OperatorRestoreState(checkpoint_id=1, keyed=snapshot.resolve().keyed))
    second.open()
    second.process_batch([{"key": "a", "count": 10}])
    second.finish()
    (written,) = output.records
    backend = HeapKeyedStateBackend(max_parallelism=8)
    backend.restore({kg: read_state(h) for kg, h in written.keyed.items()})
    assert counts_of(backend) == {"a": 11, "b": 2}


def test_operator_state_of_a_bootstrap_job_survives_a_fail_over_too(tmp_path: Path) -> None:
    lists = OperatorTransformation.bootstrap_with([]).transform(Offsets())
    first, _ = bootstrap_operator(lists, tmp_path)
    first.initialize_state(None)
    first.open()
    first.process_batch([1, 2])
    snapshot = first.snapshot_state(1, 0)
    assert snapshot is not None and snapshot.operator is not None
    second, output = bootstrap_operator(lists, tmp_path)
    second.initialize_state(OperatorRestoreState(checkpoint_id=1, operator=(snapshot.operator,)))
    second.open()
    second.process_batch([3])
    second.finish()
    (written,) = output.records
    backend = OperatorStateBackend()
    backend.restore([read_state(written.operator)], subtask_index=0, parallelism=1)
    assert backend.get_list_state(ListStateDescriptor("offsets")).get() == [1, 2, 3]


def test_operator_and_broadcast_state_bootstrap_through_a_job_at_parallelism_2(tmp_path: Path) -> None:
    env = env_of(2)
    offsets = env.from_collection(list(range(10))).rebalance()
    rules = env.from_collection([("r1", 1), ("r2", 2)])
    writer = SavepointWriter.new_savepoint(env)
    writer.with_operator("source", OperatorTransformation.bootstrap_with(offsets).transform(Offsets()))
    writer.with_operator("rules", OperatorTransformation.bootstrap_with(rules).transform(Rules()))
    writer.write(str(tmp_path / "sp"))
    env.execute("bootstrap operator state")
    reader = SavepointReader.read(env, str(tmp_path / "sp"))
    assert sorted(reader.list_state("source", "offsets")) == list(range(10))
    _, metadata = resolve_checkpoint_pointer(str(tmp_path / "sp"))
    assert sorted(metadata.operator_states["rules"].operator) == [0, 1]
    states = reader.savepoint.operator_states(metadata.operator_states["rules"])
    assert states.broadcast["rules"] == [{"r1": 1, "r2": 2}, {"r1": 1, "r2": 2}]  # the same copy in every subtask
