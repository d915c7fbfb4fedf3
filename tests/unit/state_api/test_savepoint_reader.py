"""SavepointReader on a savepoint written as a job writes one (tests/unit/state_api/savepoints.py): keyed state by a
KeyedStateReaderFunction as a table and as a stream, operator state by name, and the errors of a wrong uid, a wrong
state name or kind, and a damaged file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from savepoints import KEYS, AllStates, expected_row, write_job_savepoint

from strom import StreamExecutionEnvironment
from strom.api.functions import RuntimeContext
from strom.api.state import ListStateDescriptor, StateTtlConfig, ValueStateDescriptor
from strom.exceptions import CheckpointError, CorruptStateError, InvalidProgramError
from strom.runtime.state.state_backend import STATE_BACKENDS
from strom.state import KeyedStateReaderFunction, OperatorIdentifier, SavepointReader
from strom.state.keyed_state_input import KeyedStateSource


class Timers(KeyedStateReaderFunction[str, tuple[str, list[int]]]):
    def open(self, runtime_context: RuntimeContext) -> None:
        self.count = runtime_context.get_state(ValueStateDescriptor("count"))

    def read_key(self, key: str, ctx: KeyedStateReaderFunction.Context) -> list[tuple[str, list[int]]]:
        return [(key, ctx.registered_event_time_timers() + ctx.registered_processing_time_timers())]


class Registering(KeyedStateReaderFunction[str, Any]):
    def __init__(self, *descriptors: Any) -> None:
        self.descriptors = descriptors

    def open(self, runtime_context: RuntimeContext) -> None:
        self.states = [runtime_context.get_state(d) for d in self.descriptors]

    def read_key(self, key: str, ctx: KeyedStateReaderFunction.Context) -> list[Any]:
        return [s.value() for s in self.states]


@pytest.fixture(params=sorted(STATE_BACKENDS))
def savepoint(tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    """A savepoint of every state backend: they all write the canonical format the reader reads."""
    return write_job_savepoint(tmp_path / "savepoint", backend_type=request.param)


def reader(path: Path) -> SavepointReader:
    return SavepointReader.read(StreamExecutionEnvironment.get_execution_environment(), str(path))


def test_keyed_state_of_every_kind_reads_as_a_table_row_per_key(savepoint: Path) -> None:
    table = reader(savepoint).read_keyed_state_table("counts", AllStates())
    assert table.column_names == ["key", "count", "seen", "tags"]
    rows = sorted(table.to_pylist(), key=lambda r: int(r["key"][1:]))
    assert rows == [expected_row(i) for i in range(len(KEYS))]


def test_an_operator_identifier_and_the_metadata_file_name_the_same_state(savepoint: Path) -> None:
    by_uid = reader(savepoint).read_keyed_state_table("counts", AllStates()).to_pylist()
    by_id = reader(savepoint / "_metadata").read_keyed_state_table(OperatorIdentifier.for_uid("counts"), AllStates())
    assert by_id.to_pylist() == by_uid
    assert reader(savepoint).uids() == ["counts", "source"]


def test_a_notebook_reads_with_the_path_alone(savepoint: Path) -> None:
    by_path = SavepointReader.read(savepoint).read_keyed_state_table("counts", AllStates())  # a pathlib.Path
    assert by_path.to_pylist() == reader(savepoint).read_keyed_state_table("counts", AllStates()).to_pylist()
    with pytest.raises(InvalidProgramError, match=r"read\(env, path\) or read\(path\); got read\(int, NoneType\)"):
        SavepointReader.read(3)  # type: ignore[arg-type]


def test_a_state_with_ttl_reads_through_a_descriptor_with_the_same_ttl(savepoint: Path) -> None:
    fresh = ValueStateDescriptor("fresh")
    fresh.enable_time_to_live(StateTtlConfig.new_builder(10**12).build())
    values = reader(savepoint).read_keyed_state_table("counts", Registering(fresh)).column("value").to_pylist()
    assert sorted(values) == sorted(-i for i in range(len(KEYS)))
    with pytest.raises(InvalidProgramError, match=r"state 'fresh'.*value state with TTL.*StateTtlConfig"):
        reader(savepoint).read_keyed_state_table("counts", Registering(ValueStateDescriptor("fresh")))


def test_a_state_read_with_a_descriptor_of_another_kind_is_refused(savepoint: Path) -> None:
    with pytest.raises(InvalidProgramError, match=r"expected state 'count'.*got a ListStateDescriptor.*value state"):
        reader(savepoint).read_keyed_state_table("counts", Registering(ListStateDescriptor("count")))


def test_timers_of_each_key_are_in_the_reader_context(savepoint: Path) -> None:
    rows = reader(savepoint).read_keyed_state_table("counts", Timers()).to_pylist()
    assert sorted((r["f0"], r["f1"]) for r in rows) == sorted((k, [5_000 + i]) for i, k in enumerate(KEYS))


def test_an_unknown_uid_names_the_uids_of_the_savepoint(savepoint: Path) -> None:
    with pytest.raises(CheckpointError, match=r"uid 'count'.*got state for the operators 'counts', 'source'"):
        reader(savepoint).read_keyed_state_table("count", AllStates())


def test_an_unknown_state_name_names_the_states_there_are(savepoint: Path) -> None:
    with pytest.raises(
        CheckpointError, match=r"keyed state 'counter'.*got the states 'count', 'fresh', 'seen', 'tags'"
    ):
        reader(savepoint).read_keyed_state_table("counts", Registering(ValueStateDescriptor("counter")))


def test_keyed_state_of_an_operator_with_only_operator_state_points_to_the_operator_state_readers(
    savepoint: Path,
) -> None:
    with pytest.raises(CheckpointError, match=r"keyed state for operator 'source'.*read_list_state"):
        reader(savepoint).read_keyed_state_table("source", AllStates())


def test_a_reader_function_that_registers_nothing_is_refused(savepoint: Path) -> None:
    with pytest.raises(InvalidProgramError, match=r"register the states to read in open"):
        reader(savepoint).read_keyed_state_table("counts", Registering())


def test_a_damaged_state_file_fails_with_its_checksum_as_a_restore_does(savepoint: Path) -> None:
    damaged = savepoint / "counts-keyed-1"
    data = bytearray(damaged.read_bytes())
    data[len(data) // 2] ^= 0x40
    damaged.write_bytes(bytes(data))
    with pytest.raises(CorruptStateError, match=r"keyed state of key group \d+ .*of operator 'counts' in checkpoint 7"):
        reader(savepoint).read_keyed_state_table("counts", AllStates())


def test_a_damaged_metadata_file_is_refused_before_any_state_is_read(savepoint: Path) -> None:
    metadata = savepoint / "_metadata"
    metadata.write_text(metadata.read_text().replace('"counts-keyed-0"', '"counts-keyed-9"'))
    with pytest.raises(CorruptStateError, match="checksum"):
        reader(savepoint)


def test_operator_state_reads_by_name(savepoint: Path) -> None:
    r = reader(savepoint)
    assert r.list_state("source", "offsets") == [0, 1, 10, 11]
    assert r.union_state("source", "files") == ["file-0", "file-1"]
    assert r.broadcast_state("source", "rules") == {"a": 1, "b": 2}
    assert r.read_list_state_table("source", "offsets").column("value").to_pylist() == [0, 1, 10, 11]
    assert r.read_broadcast_state_table("source", "rules").to_pylist() == [
        {"key": "a", "value": 1},
        {"key": "b", "value": 2},
    ]


def test_operator_state_read_the_wrong_way_says_how_to_read_it(savepoint: Path) -> None:
    r = reader(savepoint)
    with pytest.raises(CheckpointError, match=r"union list state 'offsets'.*get_list_state.*read_list_state"):
        r.union_state("source", "offsets")
    with pytest.raises(
        CheckpointError,
        match=r"list state 'offset'.*'files' \(read_union_state\), 'offsets' \(read_list_state\), 'rules' "
        r"\(read_broadcast_state\)",
    ):
        r.list_state("source", "offset")
    with pytest.raises(CheckpointError, match=r"broadcast state 'rule' in operator 'counts'.*no operator state"):
        r.broadcast_state("counts", "rule")


def test_the_key_group_splits_cover_every_key_group_once(savepoint: Path) -> None:
    source = KeyedStateSource(reader(savepoint).savepoint, "counts", AllStates())
    for parallelism in (1, 3, 7):
        covered = [kg for s in source.create_splits(parallelism) for kg in range(*s.payload)]
        assert covered == list(range(128))


@pytest.mark.parametrize("parallelism", [1, 3])
def test_keyed_state_reads_as_a_bounded_stream_split_over_the_subtasks(savepoint: Path, parallelism: int) -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(parallelism)
    stream = SavepointReader.read(env, str(savepoint)).read_keyed_state("counts", AllStates())
    with stream.execute_and_collect() as results:
        rows = list(results)
    assert sorted(rows, key=lambda r: int(r["key"][1:])) == [expected_row(i) for i in range(len(KEYS))]


def test_operator_state_reads_as_a_bounded_stream(savepoint: Path) -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    r = SavepointReader.read(env, str(savepoint))
    with r.read_union_state("source", "files").execute_and_collect() as results:
        assert sorted(results) == ["file-0", "file-1"]
