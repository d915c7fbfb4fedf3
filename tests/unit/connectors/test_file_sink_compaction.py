"""FileSink compaction (Flink's ``FileSink.enableCompact``): checkpoint-rolled parts merged per bucket before the
commit, exactly once across restores — driven by hand through the SinkWriterOperator (no cluster)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from strom.connectors.file_system import (
    BucketAssigner,
    FileCompactor,
    FileCompactStrategy,
    FileSink,
    FileWriter,
    OutputFileConfig,
    RollingPolicy,
    SimpleStringEncoder,
)
from strom.connectors.file_system.compaction import CompactionBuckets, WaitingPart
from strom.connectors.file_system.file_committer import FileCommittable
from strom.datastream.connectors.file_system import FileCompactor as PyFlinkFileCompactor
from strom.datastream.connectors.file_system import FileCompactStrategy as PyFlinkFileCompactStrategy
from strom.exceptions import InvalidProgramError
from strom.formats.parquet_writer import ParquetBulkWriters
from strom.runtime.checkpoint.snapshot import OperatorRestoreState, OperatorSnapshot
from strom.runtime.network.events import CheckpointOptions
from strom.runtime.operators.base import StreamingRuntimeContext, TaskInfo
from strom.runtime.operators.sink import SinkWriterOperator

pytestmark = pytest.mark.timeout(30)

SCHEMA = pa.schema([("n", pa.int64()), ("name", pa.string())])
IN_BASE_PATH = BucketAssigner.base_path_bucket_assigner()


class _Discard:
    def emit(self, batch: list[Any]) -> None:
        raise AssertionError("a sink emits nothing")


def _every(n: int) -> FileCompactStrategy:
    return FileCompactStrategy.Builder.new_builder().enable_compaction_on_checkpoint(n).build()


def _parquet_sink(d: Path, strategy: FileCompactStrategy) -> FileSink:
    return (
        FileSink.for_bulk_format(str(d), ParquetBulkWriters.for_schema(SCHEMA))
        .with_bucket_assigner(IN_BASE_PATH)
        .with_output_file_config(OutputFileConfig.builder().with_part_suffix(".parquet").build())
        .enable_compact(strategy, FileCompactor.parquet_file_compactor())
        .build()
    )


def _row_sink(d: Path, strategy: FileCompactStrategy) -> FileSink:
    return (
        FileSink.for_row_format(str(d), SimpleStringEncoder())
        .with_bucket_assigner(IN_BASE_PATH)
        .with_rolling_policy(RollingPolicy.on_checkpoint_rolling_policy())
        .enable_compact(strategy, FileCompactor.concat_file_compactor())
        .build()
    )


def _start(sink: FileSink, restore: OperatorRestoreState | None = None, attempt: int = 0) -> SinkWriterOperator:
    op = SinkWriterOperator(sink)
    op.checkpointing_enabled = True
    info = TaskInfo(
        job_id="job-1",
        job_name="files",
        task_name="Sink: Writer",
        subtask_index=0,
        parallelism=1,
        max_parallelism=128,
        attempt_number=attempt,
    )
    op.setup(StreamingRuntimeContext(info, operator_name=op.name), _Discard())
    op.initialize_state(restore)
    op.open()
    return op


def _snapshot(op: SinkWriterOperator, checkpoint_id: int, *, savepoint: bool = False) -> OperatorSnapshot:
    op.prepare_snapshot_pre_barrier(checkpoint_id, CheckpointOptions(is_savepoint=savepoint))
    snap = op.snapshot_state(checkpoint_id, 1_000 * checkpoint_id)
    assert snap is not None and snap.operator is not None
    return snap


def _checkpoint(op: SinkWriterOperator, checkpoint_id: int) -> OperatorSnapshot:
    snap = _snapshot(op, checkpoint_id)
    op.notify_checkpoint_complete(checkpoint_id)
    return snap


def _restore(checkpoint_id: int, snap: OperatorSnapshot) -> OperatorRestoreState:
    assert snap.operator is not None
    return OperatorRestoreState(checkpoint_id=checkpoint_id, operator=(snap.operator,), old_parallelism=1)


def _crash(op: SinkWriterOperator) -> None:
    writer = op._writer
    assert isinstance(writer, FileWriter)
    for part in writer._parts.values():
        part.stream.close()


def _visible(d: Path) -> list[str]:
    return sorted(n for n in os.listdir(d) if not n.startswith("."))


def _hidden(d: Path) -> list[str]:
    return sorted(n for n in os.listdir(d) if n.startswith("."))


def _parquet_rows(d: Path) -> list[tuple[int, str]]:
    rows = [(r["n"], r["name"]) for n in _visible(d) for r in pq.read_table(d / n).to_pylist()]
    return sorted(rows)


def _batch(first: int, count: int = 3) -> list[tuple[int, str]]:
    return [(i, f"r{i}") for i in range(first, first + count)]


def test_parquet_parts_of_n_checkpoints_are_merged_into_one_file(tmp_path: Path) -> None:
    op = _start(_parquet_sink(tmp_path, _every(3)))
    for cid in range(1, 7):
        op.process_batch(_batch(10 * cid))
        _checkpoint(op, cid)
        if cid == 2:
            assert _visible(tmp_path) == [] and len(_hidden(tmp_path)) == 2  # waiting, hidden
    assert len(_visible(tmp_path)) == 2 and _hidden(tmp_path) == []  # one per three checkpoints, inputs gone
    for name in _visible(tmp_path):
        assert name.endswith(".parquet") and pq.ParquetFile(tmp_path / name).metadata.num_row_groups == 3
    op.process_batch(_batch(70))
    op.finish()  # end of input compacts what waits
    _checkpoint(op, 7)
    op.close()
    assert _parquet_rows(tmp_path) == sorted(r for cid in range(1, 8) for r in _batch(10 * cid))
    assert len(_visible(tmp_path)) == 3 and _hidden(tmp_path) == []


def test_row_parts_are_concatenated_at_the_size_threshold(tmp_path: Path) -> None:
    strategy = FileCompactStrategy.builder().set_size_threshold(12).build()
    op = _start(_row_sink(tmp_path, strategy))
    for cid, words in enumerate((["aa", "bb"], ["cc"], ["dd", "ee"], ["ff"]), start=1):
        op.process_batch(words)
        _checkpoint(op, cid)
    # 6 + 3 bytes wait; + 6 reach 12: compacted; "ff" waits
    assert [(tmp_path / n).read_text() for n in _visible(tmp_path)] == ["aa\nbb\ncc\ndd\nee\n"]
    assert len(_hidden(tmp_path)) == 1
    op.close()  # a failure: the waiting part stays, for a restore


def test_a_restore_before_the_compaction_completed_compacts_again_exactly_once(tmp_path: Path) -> None:
    op = _start(_parquet_sink(tmp_path, _every(2)))
    op.process_batch(_batch(10))
    snap1 = _checkpoint(op, 1)  # the part waits (in the writer state)
    op.process_batch(_batch(20))
    _snapshot(op, 2)  # compacted: a new hidden part; the checkpoint never completes
    assert len(_hidden(tmp_path)) == 3
    _crash(op)
    op.close()

    restored = _start(_parquet_sink(tmp_path, _every(2)), _restore(1, snap1), attempt=1)
    assert len(_hidden(tmp_path)) == 1  # the waiting part is spared; the failed attempt's parts are swept
    restored.process_batch(_batch(20))  # replayed
    _checkpoint(restored, 2)
    assert _parquet_rows(tmp_path) == sorted(_batch(10) + _batch(20))
    assert len(_visible(tmp_path)) == 1 and _hidden(tmp_path) == []
    restored.close()


def test_a_restore_after_the_compaction_commits_it_once_and_deletes_the_inputs(tmp_path: Path) -> None:
    op = _start(_parquet_sink(tmp_path, _every(2)))
    op.process_batch(_batch(10))
    _checkpoint(op, 1)
    op.process_batch(_batch(20))
    snap2 = _snapshot(op, 2)  # complete on the JobMaster, but the notification never arrives
    _crash(op)
    for attempt in (1, 2):  # restored twice: the commit and the inputs' deletion are idempotent
        restored = _start(_parquet_sink(tmp_path, _every(2)), _restore(2, snap2), attempt=attempt)
        restored.close()
    assert _parquet_rows(tmp_path) == sorted(_batch(10) + _batch(20))
    assert len(_visible(tmp_path)) == 1 and _hidden(tmp_path) == []


def test_a_savepoint_compacts_what_waits(tmp_path: Path) -> None:
    op = _start(_row_sink(tmp_path, _every(10)))
    op.process_batch(["a"])
    _checkpoint(op, 1)
    op.process_batch(["b"])
    savepoint = _snapshot(op, 2, savepoint=True)
    op.notify_checkpoint_complete(2)
    assert [(tmp_path / n).read_text() for n in _visible(tmp_path)] == ["a\nb\n"] and _hidden(tmp_path) == []
    op.close()
    restored = _start(_row_sink(tmp_path, _every(10)), _restore(2, savepoint), attempt=1)
    restored.close()
    assert [(tmp_path / n).read_text() for n in _visible(tmp_path)] == ["a\nb\n"]


def test_waiting_parts_restored_without_compaction_are_committed(tmp_path: Path) -> None:
    op = _start(_row_sink(tmp_path, _every(5)))
    op.process_batch(["a"])
    snap = _checkpoint(op, 1)
    _crash(op)
    plain = (
        FileSink.for_row_format(str(tmp_path), SimpleStringEncoder())
        .with_bucket_assigner(IN_BASE_PATH)
        .with_rolling_policy(RollingPolicy.on_checkpoint_rolling_policy())
        .build()
    )
    restored = _start(plain, _restore(1, snap), attempt=1)
    _checkpoint(restored, 2)
    assert [(tmp_path / n).read_text() for n in _visible(tmp_path)] == ["a\n"] and _hidden(tmp_path) == []
    restored.close()


def test_the_strategy_decides_per_bucket() -> None:
    buckets = CompactionBuckets(FileCompactStrategy(size_threshold=10, num_checkpoints_before_compaction=3))

    def part(bucket: str, size: int) -> WaitingPart:
        c = FileCommittable(pending_path=f"/{bucket}/.p{size}", final_path=f"/{bucket}/p{size}")
        return WaitingPart(bucket_id=bucket, committable=c, size=size, writer_id="w")

    buckets.add(part("a", 4))
    buckets.add(part("b", 12))
    assert [[p.size for p in g] for g in buckets.due(everything=False)] == [[12]]  # "b" reached the threshold
    buckets.validate()
    buckets.add(part("a", 5))
    assert buckets.due(everything=False) == []
    assert [[p.size for p in g] for g in buckets.due(everything=False)] == [[4, 5]]  # the third checkpoint
    buckets.add(part("c", 1))
    assert [[p.size for p in g] for g in buckets.due(everything=True)] == [[1]]
    assert buckets.waiting == {}


def test_builders_and_pyflink_names() -> None:
    assert PyFlinkFileCompactor is FileCompactor and PyFlinkFileCompactStrategy is FileCompactStrategy
    strategy = (
        FileCompactStrategy.Builder.new_builder()
        .set_size_threshold(1024)
        .enable_compaction_on_checkpoint(4)
        .set_num_compact_threads(2)
        .build()
    )
    assert (
        strategy.get_size_threshold(),
        strategy.get_num_checkpoints_before_compaction(),
        strategy.get_num_compact_threads(),
    ) == (1024, 4, 2)
    with pytest.raises(InvalidProgramError, match="a size threshold or a number of checkpoints; got neither"):
        FileCompactStrategy.builder().build()
    with pytest.raises(InvalidProgramError, match="positive int"):
        FileCompactStrategy.builder().set_size_threshold(0)
    with pytest.raises(InvalidProgramError, match="a FileCompactStrategy and a FileCompactor"):
        FileSink.for_row_format("/tmp/x", SimpleStringEncoder()).enable_compact(strategy, "concat")
