"""ParquetBulkWriters through FileSink.for_bulk_format: types, bad records, valid files pyarrow reads back."""

from __future__ import annotations

import datetime as dt
import io
import os
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from strom.api.row import Row, row_factory
from strom.connectors.file_system import BucketAssigner, FileSink, OnCheckpointRollingPolicy, RollingPolicy
from strom.exceptions import ConnectorError, InvalidProgramError, UserFunctionError
from strom.formats.parquet_writer import ParquetBulkWriters
from strom.runtime.operators.base import StreamingRuntimeContext, TaskInfo
from strom.runtime.operators.sink import SinkWriterOperator

pytestmark = pytest.mark.timeout(30)

SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        ("name", pa.string()),
        ("score", pa.float64()),
        ("ok", pa.bool_()),
        ("day", pa.date32()),
        ("at", pa.timestamp("us", tz="UTC")),
        ("price", pa.decimal128(10, 2)),
        ("tags", pa.list_(pa.string())),
        ("blob", pa.binary()),
    ]
)


class _Discard:
    def emit(self, batch: list[Any]) -> None:
        raise AssertionError("a sink emits nothing")


def _operator(sink: FileSink) -> SinkWriterOperator:
    op = SinkWriterOperator(sink)
    op.checkpointing_enabled = True
    info = TaskInfo(
        job_id="j",
        job_name="j",
        task_name="Sink",
        subtask_index=0,
        parallelism=1,
        max_parallelism=128,
        attempt_number=0,
    )
    op.setup(StreamingRuntimeContext(info, operator_name=op.name), _Discard())
    op.initialize_state(None)
    op.open()
    return op


def _record(i: int) -> tuple[Any, ...]:
    return (
        i,
        f"n{i}",
        i / 2,
        i % 2 == 0,
        dt.date(2024, 1, 1) + dt.timedelta(days=i),
        dt.datetime(2024, 1, 1, tzinfo=dt.UTC) + dt.timedelta(seconds=i),
        Decimal(i) / 100,
        [str(i)] * (i % 3),
        bytes([i % 256]),
    )


def _parts(base: Path) -> list[Path]:
    return sorted(p for p in base.rglob("*") if p.is_file() and not p.name.startswith("."))


def test_parts_are_valid_parquet_files_of_every_record_form(tmp_path: Path) -> None:
    sink = FileSink.for_bulk_format(str(tmp_path), ParquetBulkWriters.for_schema(SCHEMA, row_group_size=4)).build()
    op = _operator(sink)
    make = row_factory(SCHEMA.names)
    records = [_record(i) for i in range(10)]
    op.process_batch(records[:3])  # tuples in schema order
    op.process_batch([make(r) for r in records[3:6]])  # named Rows (shared field list)
    op.process_batch([dict(zip(SCHEMA.names, r, strict=True)) | {"extra": 1} for r in records[6:8]])  # dicts
    op.process_batch([Row(**dict(zip(SCHEMA.names, r, strict=True))) for r in records[8:]])  # Rows sorted by name
    assert _parts(tmp_path) == []  # nothing visible before the checkpoint completes
    op.snapshot_state(1, 1)
    op.notify_checkpoint_complete(1)
    [part] = _parts(tmp_path)
    table = pq.read_table(part)
    assert table.schema.equals(SCHEMA)
    assert [tuple(row.values()) for row in table.to_pylist()] == records
    assert pq.ParquetFile(part).metadata.num_row_groups == 3  # 4 + 4 + 2 rows
    op.close()


def test_bulk_parts_roll_at_every_checkpoint_and_at_a_part_size(tmp_path: Path) -> None:
    schema = pa.schema([("k", pa.string()), ("v", pa.int64())])
    sink = (
        FileSink.for_bulk_format(str(tmp_path), ParquetBulkWriters.for_schema(schema, row_group_size=1))
        .with_bucket_assigner(BucketAssigner.field_bucket_assigner("k"))
        .with_rolling_policy(RollingPolicy.on_checkpoint_rolling_policy(part_size=1))
        .build()
    )
    op = _operator(sink)
    op.process_batch([{"k": "a", "v": 1}, {"k": "b", "v": 2}])
    op.process_batch([{"k": "a", "v": 3}])  # part "a" holds a row group already: past 1 byte, it rolls first
    op.snapshot_state(1, 1)
    op.notify_checkpoint_complete(1)
    parts = _parts(tmp_path)
    assert sorted(p.parent.name for p in parts) == ["a", "a", "b"]
    assert sorted(v for p in parts for v in pq.read_table(p).column("v").to_pylist()) == [1, 2, 3]
    op.close()
    with pytest.raises(InvalidProgramError, match="expects an OnCheckpointRollingPolicy"):
        FileSink.for_bulk_format(str(tmp_path), ParquetBulkWriters.for_schema(schema)).with_rolling_policy(
            RollingPolicy.default_rolling_policy()  # type: ignore[arg-type]
        )
    assert isinstance(
        FileSink.for_bulk_format(str(tmp_path), ParquetBulkWriters.for_row_type(schema)).build().rolling_policy,
        OnCheckpointRollingPolicy,
    )


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ((1, "x", "not a float", None, None, None, None, None, None), "field 'score'; got 'not a float'"),
        ((None, "x", 1.0, None, None, None, None, None, None), "non-nullable Parquet field 'id'"),
        ({"id": 1, "name": "x"}, "without 'score'"),
        ((1, 2), "a tuple of 9 values"),
        ("text", "got 'text' \\(a 'str'\\)"),
        ((1, 7, 1.0, None, None, None, None, None, None), "field 'name'; got 7 \\(a 'int'\\) in the record \\(1, 7"),
    ],
)
def test_a_record_that_does_not_fit_the_schema_is_named(record: Any, message: str) -> None:
    writer = ParquetBulkWriters.for_schema(SCHEMA).create(io.BytesIO())  # type: ignore[arg-type]
    good = _record(1)
    with pytest.raises(ConnectorError, match=message) as info:
        writer.add_elements([good, record])
    assert "hint:" in str(info.value)


def test_an_error_in_the_sink_fails_the_task_with_the_record(tmp_path: Path) -> None:
    op = _operator(FileSink.for_bulk_format(str(tmp_path), ParquetBulkWriters.for_schema(SCHEMA)).build())
    with pytest.raises(UserFunctionError) as info:
        op.process_batch([(1, "x", "bad", None, None, None, None, None, None)])
    assert isinstance(info.value.__cause__, ConnectorError)
    op.close()
    left = [f for _, _, files in os.walk(tmp_path) for f in files if not f.startswith(".strom")]
    assert left == []  # the open part was discarded


def test_the_factory_rejects_misuse() -> None:
    with pytest.raises(InvalidProgramError, match=r"pyarrow\.Schema"):
        ParquetBulkWriters.for_schema([("a", pa.int64())])  # type: ignore[arg-type]
    with pytest.raises(InvalidProgramError, match="compression codec"):
        ParquetBulkWriters.for_schema(SCHEMA, compression="nope")
    with pytest.raises(InvalidProgramError, match="expects a BulkWriterFactory"):
        FileSink.for_bulk_format("/tmp/x", "parquet")  # type: ignore[arg-type]
