"""The state processor API (strom.state) against real jobs on TaskManager processes: a savepoint a job took is read
back value by value; a bootstrapped savepoint, one with a changed uid and one without removed operators restore into
running jobs whose counts continue from the state."""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from failover import committed_rows, completed_checkpoints

from strom import (
    Configuration,
    DataGeneratorSource,
    FileSink,
    JsonLinesEncoder,
    MapFunction,
    StreamExecutionEnvironment,
)
from strom.api.functions import RuntimeContext
from strom.api.state import ValueStateDescriptor
from strom.connectors.file_system import RollingPolicy
from strom.exceptions import StromError
from strom.state import (
    KeyedStateBootstrapFunction,
    KeyedStateReaderFunction,
    OperatorTransformation,
    SavepointReader,
    SavepointWriter,
)

pytestmark = [pytest.mark.processes, pytest.mark.timeout(240)]

KEYS = [f"k{i}" for i in range(10)]


class CountPerKey(MapFunction[Any, tuple[str, int]]):
    """The job's state: a count per key in ValueState 'count'; emits (key, count so far)."""

    def open(self, runtime_context: RuntimeContext) -> None:
        self.count = runtime_context.get_state(ValueStateDescriptor("count"))

    def map(self, value: Any) -> tuple[str, int]:
        key = value[0] if isinstance(value, tuple) else value
        count = (self.count.value() or 0) + 1
        self.count.update(count)
        return (key, count)


class CountReader(KeyedStateReaderFunction[str, dict[str, Any]]):
    def open(self, runtime_context: RuntimeContext) -> None:
        self.count = runtime_context.get_state(ValueStateDescriptor("count"))

    def read_key(self, key: str, ctx: KeyedStateReaderFunction.Context) -> Iterator[dict[str, Any]]:
        yield {"key": key, "count": self.count.value()}


class CountBootstrapper(KeyedStateBootstrapFunction[str, dict[str, Any]]):
    def open(self, runtime_context: RuntimeContext) -> None:
        self.count = runtime_context.get_state(ValueStateDescriptor("count"))

    def process_element(self, value: dict[str, Any], ctx: KeyedStateBootstrapFunction.Context) -> None:
        self.count.update(value["count"])


def env_of(parallelism: int, savepoint: Path | None = None, **extra: Any) -> StreamExecutionEnvironment:
    settings: dict[str, Any] = {"taskmanager.numberOfTaskSlots": 1, **extra}
    if savepoint is not None:
        settings["execution.savepoint.path"] = str(savepoint)
    env = StreamExecutionEnvironment.get_execution_environment(Configuration(settings))
    env.set_parallelism(parallelism)
    return env


def continue_counting(env: StreamExecutionEnvironment, uid: str, rounds: int = 3) -> dict[str, list[int]]:
    """A job counting each key ``rounds`` more times with the operator ``uid``; each key's counts, in order."""
    stream = env.from_collection(KEYS * rounds).key_by(lambda k: k).map(CountPerKey()).uid(uid)
    counts: dict[str, list[int]] = defaultdict(list)
    with stream.execute_and_collect() as results:
        for key, count in results:
            counts[key].append(count)
    return dict(counts)


COUNT = 10**9


@dataclass(frozen=True)
class Taken:
    savepoint: Path
    counts: dict[str, int]
    """Each key's count in the savepoint, as the records the source had read when it was taken make it."""


def counts_up_to(positions: dict[str, tuple[int, int]]) -> dict[str, int]:
    """The count per key of the records the source read: split ``datagen-i`` of two read ``[start, next)``."""
    counts: dict[str, int] = defaultdict(int)
    starts = {"datagen-0": 0, "datagen-1": COUNT // 2}
    for split_id, (next_index, _end) in positions.items():
        for i in range(starts[split_id], next_index):
            counts[f"k{i % 10}"] += 1
    return dict(counts)


@pytest.fixture(scope="module")
def taken(tmp_path_factory: pytest.TempPathFactory) -> Taken:
    """A job at p=2 counting per key (uids gen → counts → sink), stopped with a savepoint mid-way. The counts in it
    follow from the source's positions in it, read as the operator's list state 'SourceReaderState'."""
    base = tmp_path_factory.mktemp("job")
    out = base / "out"
    env = env_of(2)
    env.enable_checkpointing(200)
    (
        env.from_source(
            DataGeneratorSource(lambda i: (f"k{i % 10}", i), COUNT, records_per_second=3000), source_name="gen"
        )
        .uid("gen")
        .key_by(lambda e: e[0])
        .map(CountPerKey())
        .uid("counts")
        .sink_to(
            FileSink.for_row_format(str(out), JsonLinesEncoder())
            .with_rolling_policy(RollingPolicy.on_checkpoint_rolling_policy())  # committed at every checkpoint
            .build()
        )
        .uid("sink")
    )
    client = env.execute_async("counting")
    try:
        completed_checkpoints(client, 2)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and (not out.exists() or len(committed_rows(out)) < 500):
            time.sleep(0.1)
        savepoint = Path(client.stop_with_savepoint(str(base / "savepoints")))
    finally:
        client.close()
    splits = SavepointReader.read(env, str(savepoint)).list_state("gen", "SourceReaderState")
    counts = counts_up_to({split.split_id: split.payload for split in splits})
    assert set(counts) == set(KEYS)
    committed: dict[str, int] = defaultdict(int)
    for key, count in committed_rows(out):  # committed before the savepoint (its own rows commit on restore)
        committed[key] = max(committed[key], count)
    assert all(0 < committed[k] <= counts[k] for k in KEYS), (committed, counts)
    return Taken(savepoint=savepoint, counts=counts)


def test_the_keyed_state_of_a_job_savepoint_reads_as_the_job_left_it(taken: Taken) -> None:
    reader = SavepointReader.read(env_of(2), str(taken.savepoint))
    assert reader.uids() == ["counts", "gen", "sink"]
    table = reader.read_keyed_state_table("counts", CountReader())
    assert {r["key"]: r["count"] for r in table.to_pylist()} == taken.counts
    stream = SavepointReader.read(env_of(2), str(taken.savepoint)).read_keyed_state("counts", CountReader())
    with stream.execute_and_collect() as results:  # the same, read by a job of two subtasks
        assert sorted((r["key"], r["count"]) for r in results) == sorted(taken.counts.items())


@pytest.mark.parametrize("bootstrap", ["table", "stream"])
def test_a_bootstrapped_savepoint_restores_into_a_running_job_whose_counts_continue(
    tmp_path: Path, bootstrap: str
) -> None:
    initial = {key: 100 * i for i, key in enumerate(KEYS)}
    rows = [{"key": k, "count": c} for k, c in initial.items()]
    env = env_of(2)
    data: Any = pa.Table.from_pylist(rows) if bootstrap == "table" else env.from_collection(rows)
    transformation = (
        OperatorTransformation.bootstrap_with(data).key_by(lambda r: r["key"]).transform(CountBootstrapper())
    )
    SavepointWriter.new_savepoint(env, 128).with_operator("counts", transformation).write(str(tmp_path / "sp"))
    if bootstrap == "stream":
        env.execute("bootstrap")  # the bootstrap job, on two TaskManagers
    counts = continue_counting(env_of(3, tmp_path / "sp"), "counts")
    assert counts == {k: [c + 1, c + 2, c + 3] for k, c in initial.items()}


def test_a_savepoint_with_a_changed_uid_restores_under_the_new_uid(tmp_path: Path, taken: Taken) -> None:
    writer = SavepointWriter.from_existing_savepoint(env_of(1), str(taken.savepoint))
    writer.change_operator_identifier("counts", "counts-v2").remove_operator("gen").remove_operator("sink")
    writer.write(str(tmp_path / "sp"))
    counts = continue_counting(env_of(2, tmp_path / "sp"), "counts-v2", rounds=1)
    assert counts == {k: [c + 1] for k, c in taken.counts.items()}


def test_removed_operators_need_no_allow_non_restored_state(tmp_path: Path, taken: Taken) -> None:
    # the job without the source and the sink refuses the savepoint that still has their state ...
    with pytest.raises(StromError, match=r"got state for gen, sink that no operator claims"):
        continue_counting(env_of(2, taken.savepoint), "counts", rounds=1)
    # ... drops it when told to (Flink's allowNonRestoredState) ...
    allowed = continue_counting(
        env_of(2, taken.savepoint, **{"execution.savepoint.ignore-unclaimed-state": True}), "counts", rounds=1
    )
    assert allowed == {k: [c + 1] for k, c in taken.counts.items()}
    # ... and restores a savepoint without them as it is; without 'counts' too, the counts start again
    writer = SavepointWriter.from_existing_savepoint(env_of(1), str(taken.savepoint))
    writer.remove_operator("gen").remove_operator("sink")
    writer.write(str(tmp_path / "without-io"))
    assert continue_counting(env_of(2, tmp_path / "without-io"), "counts", rounds=1) == allowed
    writer.remove_operator("counts").write(str(tmp_path / "empty"))
    assert continue_counting(env_of(2, tmp_path / "empty"), "counts", rounds=1) == {k: [1] for k in KEYS}
