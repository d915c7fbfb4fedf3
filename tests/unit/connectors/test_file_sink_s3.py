"""FileSink on an object store: a real S3-compatible server (moto, a child process), driven by hand through the
SinkWriterOperator. Commits copy the staging object and delete it; they are idempotent, survive a crash between
copy and delete, and nothing uncommitted is ever under a final name."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from s3_server import S3Bucket

from strom.api.sink import CommitRequest
from strom.connectors.file_system import (
    BucketAssigner,
    Encoder,
    FileCommittable,
    FileCommitter,
    FileSink,
    JsonLinesEncoder,
)
from strom.exceptions import ConnectorError, StromError
from strom.formats.parquet_writer import ParquetBulkWriters
from strom.runtime.checkpoint.snapshot import OperatorRestoreState, OperatorSnapshot
from strom.runtime.operators.base import StreamingRuntimeContext, TaskInfo
from strom.runtime.operators.sink import SinkWriterOperator

pytestmark = pytest.mark.timeout(60)


class _Discard:
    def emit(self, batch: list[Any]) -> None:
        raise AssertionError("a sink emits nothing")


def _operator(sink: FileSink, restore: OperatorRestoreState | None = None, attempt: int = 0) -> SinkWriterOperator:
    op = SinkWriterOperator(sink)
    op.checkpointing_enabled = True
    info = TaskInfo(
        job_id="j",
        job_name="j",
        task_name="Sink",
        subtask_index=0,
        parallelism=1,
        max_parallelism=128,
        attempt_number=attempt,
    )
    op.setup(StreamingRuntimeContext(info, operator_name=op.name), _Discard())
    op.initialize_state(restore)
    op.open()
    return op


def _snapshot(op: SinkWriterOperator, checkpoint_id: int) -> OperatorSnapshot:
    snap = op.snapshot_state(checkpoint_id, checkpoint_id)
    assert snap is not None and snap.operator is not None
    return snap


def _visible(bucket: S3Bucket, prefix: str = "out") -> list[str]:
    return [k for k in bucket.list_keys(prefix) if not k.rsplit("/", 1)[-1].startswith(".")]


def _hidden(bucket: S3Bucket, prefix: str = "out") -> list[str]:
    return [k for k in bucket.list_keys(prefix) if k.rsplit("/", 1)[-1].startswith(".")]


def _json_sink(bucket: S3Bucket, **kw: Any) -> FileSink:
    return FileSink.for_row_format(
        bucket.url("out"), JsonLinesEncoder(), storage_options=bucket.storage_options
    ).build()


def test_nothing_is_visible_on_s3_until_the_checkpoint_completes(s3_server: S3Bucket) -> None:
    op = _operator(_json_sink(s3_server))
    op.process_batch([{"a": 1}, {"b": 2}])
    assert s3_server.list_keys() == []  # the open part is an unfinished upload: no object, no listing
    _snapshot(op, 1)
    assert _visible(s3_server) == [] and len(_hidden(s3_server)) == 1  # the staging object
    op.notify_checkpoint_complete(1)
    [key] = s3_server.list_keys()
    assert s3_server.read(key) == b'{"a":1}\n{"b":2}\n'
    op.close()


def test_a_commit_repeated_after_a_crash_between_copy_and_delete_cleans_up(s3_server: S3Bucket) -> None:
    op = _operator(_json_sink(s3_server))
    op.process_batch(["x"])
    _snapshot(op, 1)
    [committable] = [c for c, _ in op._pending[1]]
    assert isinstance(committable, FileCommittable) and committable.final_path.startswith("s3://")
    fs = s3_server.filesystem()
    fs.copy(committable.pending_path, committable.final_path)  # the committer died right after the copy
    assert len(_hidden(s3_server)) == 1 and len(_visible(s3_server)) == 1

    committer = FileCommitter(s3_server.storage_options)  # the restored job commits again
    request = CommitRequest(committable)
    committer.commit([request])
    assert _hidden(s3_server) == [] and [s3_server.read(k) for k in _visible(s3_server)] == [b'"x"\n']
    committer.commit([CommitRequest(committable)])  # and again: nothing happens
    assert [s3_server.read(k) for k in s3_server.list_keys()] == [b'"x"\n']
    fs.rm_file(committable.final_path)
    with pytest.raises(StromError, match="expected it or its pending file"):
        committer.commit([CommitRequest(committable)])
    op.close()


def test_restore_commits_the_checkpoint_and_deletes_the_staging_objects_after_it(s3_server: S3Bucket) -> None:
    sink = (
        FileSink.for_row_format(s3_server.url("out"), Encoder.simple_string_encoder())
        .with_storage_options(s3_server.storage_options)
        .with_bucket_assigner(BucketAssigner.field_bucket_assigner(0))
        .build()
    )
    op = _operator(sink)
    op.process_batch([("a", 1), ("b", 1)])
    snap = _snapshot(op, 1)  # completes, but the notification never arrives
    op.process_batch([("a", 2), ("c", 2)])
    _snapshot(op, 2)  # not completed: its staging objects hold records the source replays
    assert len(_hidden(s3_server)) == 4
    # the TaskManager dies; the job restores checkpoint 1
    restored = _operator(sink, OperatorRestoreState(checkpoint_id=1, operator=(snap.operator,), old_parallelism=1), 1)
    assert _hidden(s3_server) == []
    assert sorted(s3_server.read(k).decode() for k in _visible(s3_server)) == ["('a', 1)\n", "('b', 1)\n"]
    assert sorted(k.split("/")[1] for k in _visible(s3_server)) == ["a", "b"]
    restored.close()


def test_a_failed_writer_aborts_its_open_uploads(s3_server: S3Bucket) -> None:
    op = _operator(_json_sink(s3_server))
    op.process_batch([1])
    op.close()  # a failure: nothing checkpointed
    assert s3_server.list_keys() == []
    fs = s3_server.filesystem()
    uploads = fs.call_s3("list_multipart_uploads", Bucket=s3_server.name).get("Uploads", [])
    assert uploads == []


def test_parquet_parts_on_s3_are_valid_files(s3_server: S3Bucket) -> None:
    schema = pa.schema([("id", pa.int64()), ("name", pa.string())])
    sink = FileSink.for_bulk_format(
        s3_server.url("out"), ParquetBulkWriters.for_schema(schema), storage_options=s3_server.storage_options
    ).build()
    op = _operator(sink)
    op.process_batch([(i, f"n{i}") for i in range(1000)])
    _snapshot(op, 1)
    op.notify_checkpoint_complete(1)
    [key] = s3_server.list_keys()
    with s3_server.filesystem().open(f"{s3_server.name}/{key}", "rb") as f:
        table = pq.read_table(f)
    assert table.to_pylist() == [{"id": i, "name": f"n{i}"} for i in range(1000)]
    op.close()


def test_validate_names_an_unknown_scheme_or_a_missing_package_before_any_cluster() -> None:
    with pytest.raises(ConnectorError, match="URL scheme fsspec knows"):
        FileSink.for_row_format("nosuch://b/out", JsonLinesEncoder()).build().validate()
    with pytest.raises(ConnectorError, match="pip install"):
        FileSink.for_row_format("gs://bucket/out", JsonLinesEncoder()).build().validate()  # gcsfs is not installed
