"""The filesystem table connector's pieces without a cluster: partition paths (Flink's escaping, default name,
values parsed back to the column types), the partition time extractor, the partition committer's triggers
(process-time with a delay, partition-time by the smallest subtask watermark, end of input) and the parquet
format's round trip of the SQL types' Python values."""

from __future__ import annotations

import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import fsspec
import pytest

from strom.api.row import Row
from strom.connectors.file_system.bucket_assigners import BucketAssignerContext
from strom.connectors.file_system.file_committer import FileCommittable
from strom.table.connectors.parquet_format import TableParquetFormat, TableParquetWriterFactory, arrow_schema
from strom.table.connectors.partition_commit import (
    PartitionCommitInfo,
    PartitionCommitOptions,
    PartitionTimeExtractor,
    _PartitionCommitter,
)
from strom.table.connectors.partition_path import (
    DEFAULT_PARTITION_NAME,
    PartitionBucketAssigner,
    PartitionValueParser,
    escape_path_name,
    unescape_path_name,
)
from strom.table.errors import ValidationException
from strom.table.types import DataTypes


def test_partition_values_are_escaped_as_flink_escapes_them_and_parse_back() -> None:
    assert escape_path_name("2024-01-01 10:00") == "2024-01-01 10%3A00"
    assert escape_path_name("a=b/c#d") == "a%3Db%2Fc%23d"
    for text in ("plain", "a/b", "50%", "x=y:z", "%zz"):
        assert unescape_path_name(escape_path_name(text)) == text
    assigner = PartitionBucketAssigner(["dt", "hr", "ok"], [1, 2, 3], DEFAULT_PARTITION_NAME)
    row = Row(7, datetime.date(2024, 1, 31), None, True)
    assert assigner.get_bucket_id(row, BucketAssignerContext()) == "dt=2024-01-31/hr=__DEFAULT_PARTITION__/ok=true"
    parser = PartitionValueParser(["dt", "hr", "ok"], ["DATE", "INTEGER", "BOOLEAN"], DEFAULT_PARTITION_NAME)
    assert parser("/base/dt=2024-01-31/hr=__DEFAULT_PARTITION__/ok=true/part-0") == (
        datetime.date(2024, 1, 31),
        None,
        True,
    )
    assert parser("/base/dt=2024-02-01/hr=7/ok=false/part-1") == (datetime.date(2024, 2, 1), 7, False)
    with pytest.raises(ValidationException, match="hr='x'"):
        parser("/base/dt=2024-02-01/hr=x/ok=false/part-1")


def test_the_partition_time_extractor_takes_a_pattern_or_the_first_value() -> None:
    assert PartitionTimeExtractor(["dt"], None, None).extract({"dt": "2024-01-31"}) == datetime.datetime(2024, 1, 31)
    extractor = PartitionTimeExtractor(["dt", "hr"], "$dt $hr:00:00", None)
    assert extractor.extract({"dt": "2024-01-31", "hr": "10"}) == datetime.datetime(2024, 1, 31, 10)
    compact = PartitionTimeExtractor(["day", "hour"], "$day$hour", "yyyyMMddHH")
    assert compact.extract({"day": "20240131", "hour": "09"}) == datetime.datetime(2024, 1, 31, 9)
    with pytest.raises(ValidationException, match="timestamp-pattern"):
        extractor.extract({"dt": "yesterday", "hr": "1"})


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _committer(tmp_path: Path, trigger: str, delay_ms: int, pattern: str | None = None) -> Any:
    options = PartitionCommitOptions(
        trigger=trigger,
        delay_ms=delay_ms,
        success_file_name="_SUCCESS",
        extractor=PartitionTimeExtractor(["dt", "hr"], pattern, None),
    )
    clock = _Clock()
    return _PartitionCommitter(str(tmp_path), {}, options, clock=clock), clock


def _info(subtask: int, watermark: int | None, *partitions: str, end: bool = False) -> PartitionCommitInfo:
    return PartitionCommitInfo(subtask, 2, watermark, tuple(partitions), end)


def test_process_time_commits_a_partition_once_its_delay_passed(tmp_path: Path) -> None:
    committer, clock = _committer(tmp_path, "process-time", 60_000)
    committer.commit(1, [_info(0, None, "dt=a/hr=1"), _info(1, None)])
    assert committer.committed == []
    clock.now += 59
    committer.commit(2, [_info(0, None, "dt=a/hr=2")])
    assert committer.committed == []
    clock.now += 1
    committer.commit(3, [])
    assert committer.committed == ["dt=a/hr=1"]
    assert (tmp_path / "dt=a" / "hr=1" / "_SUCCESS").is_file()
    assert not (tmp_path / "dt=a" / "hr=2" / "_SUCCESS").exists()


def test_partition_time_commits_once_every_subtask_s_watermark_passed_it(tmp_path: Path) -> None:
    committer, _ = _committer(tmp_path, "partition-time", 0, "$dt $hr:00:00")
    ten = int(datetime.datetime(2024, 1, 1, 10, tzinfo=datetime.UTC).timestamp() * 1000)
    committer.commit(1, [_info(0, ten + 3_600_001, "dt=2024-01-01/hr=10")])
    assert committer.committed == []  # subtask 1 has no watermark yet
    committer.commit(2, [_info(1, ten, "dt=2024-01-01/hr=11")])
    assert committer.committed == []  # the smallest watermark is the partition's time, not past it
    committer.commit(3, [_info(1, ten + 1)])
    assert committer.committed == ["dt=2024-01-01/hr=10"]
    committer.commit(4, [_info(0, 2**63 - 1, end=True), _info(1, 2**63 - 1, end=True)])
    assert committer.committed == ["dt=2024-01-01/hr=10", "dt=2024-01-01/hr=11"]


def test_the_committer_commits_the_files_before_their_partitions(tmp_path: Path) -> None:
    committer, _ = _committer(tmp_path, "process-time", 0)
    directory = tmp_path / "dt=a" / "hr=1"
    directory.mkdir(parents=True)
    (directory / ".part-0.inprogress").write_text("x\n")
    part = FileCommittable(pending_path=str(directory / ".part-0.inprogress"), final_path=str(directory / "part-0"))
    committer.commit(1, [part, _info(0, None, "dt=a/hr=1"), _info(1, None)])
    assert (directory / "part-0").read_text() == "x\n"
    assert (directory / "_SUCCESS").is_file()
    committer.commit(2, [part, _info(0, None, "dt=a/hr=1")])  # after a failover: the same again, harmless
    assert sorted(p.name for p in directory.iterdir()) == ["_SUCCESS", "part-0"]


def test_parquet_round_trips_the_sql_types_python_values(tmp_path: Path) -> None:
    names = ["id", "name", "amount", "score", "ts", "ltz", "day", "ok", "dt"]
    types = [
        DataTypes.BIGINT(),
        DataTypes.STRING(),
        DataTypes.DECIMAL(10, 2),
        DataTypes.DOUBLE(),
        DataTypes.TIMESTAMP(3),
        DataTypes.TIMESTAMP_LTZ(6),
        DataTypes.DATE(),
        DataTypes.BOOLEAN(),
        DataTypes.STRING(),
    ]
    rows = [
        Row(1, "a", Decimal("1.50"), 0.5, datetime.datetime(2024, 1, 1, 10, 0, 0, 123000),
            datetime.datetime(2024, 1, 1, 9, 0, 0, 1), datetime.date(2024, 1, 1), True, "x"),
        Row(2, None, None, None, None, None, None, None, "x"),
    ]  # fmt: skip
    file_columns = names[:-1]
    schema = arrow_schema(file_columns, types[:-1])
    path = tmp_path / "dt=x" / "part-0.parquet"
    path.parent.mkdir()
    with path.open("wb") as stream:
        writer = TableParquetWriterFactory(schema, tuple(range(8))).create(stream)
        writer.add_elements(rows)
        writer.finish()
    layout = [(False, i) for i in range(8)] + [(True, 0)]
    fmt = TableParquetFormat(file_columns, types[:-1], layout, PartitionValueParser(["dt"], ["VARCHAR"], "d"))
    fs = fsspec.filesystem("file")
    (split,) = fmt.create_splits(fs, str(path), str(path), path.stat().st_size)
    reader = fmt.create_reader(fs, str(path), split)
    got = reader.read_batch(10)
    reader.close()
    assert got is not None
    assert [tuple(r) for r in got] == [tuple(r) for r in rows]
    assert type(got[0][0]) is int and type(got[0][2]) is Decimal and got[0][5].tzinfo is None
