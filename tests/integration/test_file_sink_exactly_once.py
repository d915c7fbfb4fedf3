"""Exactly-once FileSink output on real TaskManagers with one SIGKILLed mid-job: Parquet on S3 (a real moto
server in a child process; the TaskManagers reach it through the sink's storage options), bucketed JSON lines
locally, JSON lines whose in-progress parts span many checkpoints (resumed after the restore), and Parquet parts
compacted every few checkpoints. The committed rows must be exactly those of an uninterrupted run."""

from __future__ import annotations

import json
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from failover import completed_checkpoints, failover_env, kill_a_task_manager
from s3_server import S3Bucket

from strom import DataGeneratorSource, StreamExecutionEnvironment
from strom.connectors.file_system import (
    BucketAssigner,
    FileCompactor,
    FileCompactStrategy,
    FileSink,
    JsonLinesEncoder,
    OutputFileConfig,
    RollingPolicy,
)
from strom.formats.parquet_writer import ParquetBulkWriters

COUNT = 60_000
SCHEMA = pa.schema([("key", pa.int64()), ("index", pa.int64()), ("name", pa.string())])


def event(i: int) -> tuple[int, int, str]:
    return (i % 5, i, f"e{i}")


def sink_env() -> StreamExecutionEnvironment:
    env: StreamExecutionEnvironment = failover_env(attempts=10)
    return env


def run_with_a_kill(env: StreamExecutionEnvironment, sink: FileSink) -> Any:
    (
        env.from_source(DataGeneratorSource(event, COUNT, records_per_second=15_000), source_name="events")
        .uid("events")
        .sink_to(sink)
        .uid("files")
    )
    client = env.execute_async("files with a kill")
    killed: list[int] = []

    def kill() -> None:
        completed_checkpoints(client, 2)
        if not client.get_job_status().is_globally_terminal:
            killed.append(kill_a_task_manager(client, seed=3))

    killer = threading.Thread(target=kill)
    killer.start()
    try:
        result = client.get_job_execution_result()
    finally:
        killer.join()
    assert killed, "the job ended before a TaskManager was killed"
    assert result.num_restarts >= 1
    return result


@pytest.mark.processes  # kills a TaskManager
@pytest.mark.timeout(180)
def test_parquet_on_s3_survives_a_killed_task_manager_exactly_once(s3_server: S3Bucket) -> None:
    sink = (
        FileSink.for_bulk_format(
            s3_server.url("out"),
            ParquetBulkWriters.for_schema(SCHEMA, row_group_size=2_000),
            storage_options=s3_server.storage_options,
        )
        .with_output_file_config(OutputFileConfig.builder().with_part_suffix(".parquet").build())
        .build()
    )
    run_with_a_kill(sink_env(), sink)
    keys = s3_server.list_keys("out")
    staging = [k for k in keys if k.rsplit("/", 1)[-1].startswith(".")]
    parts = [k for k in keys if k not in staging]
    assert staging == [] and parts and all(k.endswith(".parquet") for k in parts)
    fs = s3_server.filesystem()
    rows: list[tuple[Any, ...]] = []
    for key in parts:
        with fs.open(f"{s3_server.name}/{key}", "rb") as f:
            rows.extend(tuple(r.values()) for r in pq.read_table(f).to_pylist())
    assert len(rows) == COUNT
    assert Counter(rows) == Counter(event(i) for i in range(COUNT))


@pytest.mark.processes  # kills a TaskManager
@pytest.mark.timeout(180)
def test_bucketed_local_files_survive_a_killed_task_manager_exactly_once(tmp_path: Path) -> None:
    out = tmp_path / "out"
    sink = (
        FileSink.for_row_format(str(out), JsonLinesEncoder())
        .with_bucket_assigner(BucketAssigner.field_bucket_assigner(0))
        .build()
    )
    run_with_a_kill(sink_env(), sink)
    rows: list[tuple[Any, ...]] = []
    for bucket in sorted(out.iterdir()):
        assert bucket.is_dir() and bucket.name in {"0", "1", "2", "3", "4"}
        for f in bucket.iterdir():
            assert not f.name.startswith("."), f"an uncommitted part was left: {f}"
            rows.extend(tuple(json.loads(line)) for line in f.read_text().splitlines())
            assert all(r[0] == int(bucket.name) for r in rows[-3:])
    assert len(rows) == COUNT
    assert Counter(rows) == Counter(event(i) for i in range(COUNT))


@pytest.mark.processes  # kills a TaskManager
@pytest.mark.timeout(180)
def test_row_parts_spanning_checkpoints_survive_a_killed_task_manager_exactly_once(tmp_path: Path) -> None:
    """Checkpoints every 100 ms and Flink's default rolling policy: the parts roll by size only, not at every
    checkpoint; the TaskManager dies while its parts are in progress across checkpoints."""
    out = tmp_path / "out"
    sink = (
        FileSink.for_row_format(str(out), JsonLinesEncoder())
        .with_bucket_assigner(BucketAssigner.base_path_bucket_assigner())
        .with_rolling_policy(RollingPolicy.default_rolling_policy(part_size="128 kb"))
        .build()
    )
    env: StreamExecutionEnvironment = failover_env(interval_ms=100, attempts=10)
    result = run_with_a_kill(env, sink)
    files = sorted(out.iterdir())
    assert [f.name for f in files if f.name.startswith(".")] == [], "an uncommitted part or a marker was left"
    rows = [tuple(json.loads(line)) for f in files for line in f.read_text().splitlines()]
    assert len(rows) == COUNT
    assert Counter(rows) == Counter(event(i) for i in range(COUNT))
    checkpoints = result.checkpoint_counts.completed
    size = sum(f.stat().st_size for f in files)  # ~1.2 MB: ~10 parts of 128 kb, a few tails and merged parts
    assert checkpoints >= 15 and len(files) <= size // (128 * 1024) + 8 < checkpoints, (
        f"{len(files)} parts for {checkpoints} checkpoints"
    )


@pytest.mark.processes  # kills a TaskManager
@pytest.mark.timeout(180)
def test_compacted_parquet_parts_survive_a_killed_task_manager_exactly_once(tmp_path: Path) -> None:
    """Checkpoints every 100 ms roll a Parquet part each; every 5 checkpoints a subtask merges its parts into one."""
    out = tmp_path / "out"
    strategy = FileCompactStrategy.Builder.new_builder().enable_compaction_on_checkpoint(5).build()
    sink = (
        FileSink.for_bulk_format(str(out), ParquetBulkWriters.for_schema(SCHEMA, row_group_size=2_000))
        .with_bucket_assigner(BucketAssigner.base_path_bucket_assigner())
        .with_output_file_config(OutputFileConfig.builder().with_part_suffix(".parquet").build())
        .enable_compact(strategy, FileCompactor.parquet_file_compactor())
        .build()
    )
    env: StreamExecutionEnvironment = failover_env(interval_ms=100, attempts=10)
    result = run_with_a_kill(env, sink)
    files = sorted(out.iterdir())
    assert [f.name for f in files if f.name.startswith(".")] == [], "an uncommitted part or a marker was left"
    rows = [tuple(r.values()) for f in files for r in pq.read_table(f).to_pylist()]
    assert len(rows) == COUNT
    assert Counter(rows) == Counter(event(i) for i in range(COUNT))
    checkpoints = result.checkpoint_counts.completed
    assert len(files) < checkpoints, f"{len(files)} parts for {checkpoints} checkpoints"
