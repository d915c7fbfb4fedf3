"""The ``filesystem`` table connector end to end: partitioned tables in every format (``dt=…/hr=…`` directories,
the default partition for NULL, partition columns not in the files), the streaming sink's partition commit
(``_SUCCESS`` in every partition of a bounded job, with the partition-time trigger), rolling by file size, and a
continuous source reading files that appear while it runs (``source.monitor-interval``)."""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from strom import JobExecutionError
from strom.table import EnvironmentSettings, TableEnvironment

pytestmark = pytest.mark.timeout(300)

ROWS = (
    "(1, 'a', 1.50, TIMESTAMP '2024-01-01 10:00:00', '2024-01-01', 10), "
    "(2, 'b/c', 2.25, TIMESTAMP '2024-01-01 11:00:00.123', '2024-01-01', 11), "
    "(3, CAST(NULL AS STRING), 3.00, TIMESTAMP '2024-01-02 00:00:00', CAST(NULL AS STRING), 0)"
)


def _env(parallelism: int = 1) -> TableEnvironment:
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", str(parallelism))
    return t_env


def _files(directory: Path) -> list[str]:
    return sorted(str(p.relative_to(directory).parent) for p in directory.rglob("*") if p.is_file())


@pytest.mark.parametrize("fmt", ["parquet", "csv", "json"])
def test_a_partitioned_table_writes_hive_directories_and_reads_them_back(tmp_path: Path, fmt: str) -> None:
    t_env = _env()
    t_env.execute_sql(
        "CREATE TABLE t (id BIGINT, name STRING, amount DECIMAL(10, 2), ts TIMESTAMP(3), dt STRING, hr INT) "
        f"PARTITIONED BY (dt, hr) WITH ('connector' = 'filesystem', 'path' = '{tmp_path}', 'format' = '{fmt}')"
    )
    t_env.execute_sql(f"INSERT INTO t VALUES {ROWS}").wait()
    assert _files(tmp_path) == ["dt=2024-01-01/hr=10", "dt=2024-01-01/hr=11", "dt=__DEFAULT_PARTITION__/hr=0"]
    rows = sorted((tuple(r) for r in t_env.execute_sql("SELECT * FROM t").collect()), key=lambda r: r[0])
    assert rows == [
        (1, "a", _dec("1.50"), datetime.datetime(2024, 1, 1, 10), "2024-01-01", 10),
        (2, "b/c", _dec("2.25"), datetime.datetime(2024, 1, 1, 11, 0, 0, 123000), "2024-01-01", 11),
        (3, None, _dec("3.00"), datetime.datetime(2024, 1, 2), None, 0),
    ]
    filtered = [tuple(r) for r in t_env.execute_sql("SELECT id FROM t WHERE hr = 11").collect()]
    assert filtered == [(2,)]
    part = next(p for p in (tmp_path / "dt=2024-01-01" / "hr=10").iterdir())
    if fmt == "parquet":  # the partition columns live in the directory names only
        assert pq.read_schema(part).names == ["id", "name", "amount", "ts"]
    elif fmt == "json":
        assert part.read_text() == '{"id":1,"name":"a","amount":1.5,"ts":"2024-01-01 10:00:00"}\n'
    else:
        assert part.read_text() == '1,a,1.5,"2024-01-01 10:00:00"\n'  # as Flink writes them


def _dec(text: str) -> Any:
    from decimal import Decimal

    return Decimal(text)


def test_the_streaming_sink_commits_every_partition_with_a_success_file(tmp_path: Path) -> None:
    t_env = _env(parallelism=2)
    t_env.get_config().set("execution.checkpointing.interval", "100 ms")
    t_env.execute_sql(
        "CREATE TABLE gen (id BIGINT, ts AS TO_TIMESTAMP_LTZ(id * 60000, 3), WATERMARK FOR ts AS ts) WITH ("
        "'connector' = 'datagen', 'fields.id.kind' = 'sequence', 'fields.id.start' = '0', 'fields.id.end' = '179')"
    )
    out = tmp_path / "out"
    t_env.execute_sql(
        "CREATE TABLE sink (id BIGINT, dt STRING, hr STRING) PARTITIONED BY (dt, hr) WITH ("
        f"'connector' = 'filesystem', 'path' = '{out}', 'format' = 'parquet', "
        "'sink.partition-commit.trigger' = 'partition-time', 'sink.partition-commit.delay' = '1 h', "
        "'partition.time-extractor.timestamp-pattern' = '$dt $hr:00:00', "
        "'sink.partition-commit.policy.kind' = 'success-file')"
    )
    t_env.execute_sql(
        "INSERT INTO sink SELECT id, DATE_FORMAT(ts, 'yyyy-MM-dd'), DATE_FORMAT(ts, 'HH') FROM gen"
    ).wait()
    partitions = ["dt=1970-01-01/hr=00", "dt=1970-01-01/hr=01", "dt=1970-01-01/hr=02"]
    for partition in partitions:
        assert (out / partition / "_SUCCESS").is_file()
    t_env.execute_sql(
        "CREATE TABLE back (id BIGINT, dt STRING, hr STRING) PARTITIONED BY (dt, hr) WITH ("
        f"'connector' = 'filesystem', 'path' = '{out}', 'format' = 'parquet')"
    )
    rows = sorted(tuple(r) for r in t_env.execute_sql("SELECT id, hr FROM back").collect())
    assert rows == [(i, f"{i // 60:02d}") for i in range(180)]  # _SUCCESS files are not read


def test_parts_roll_by_file_size(tmp_path: Path) -> None:
    t_env = _env()
    t_env.execute_sql(
        "CREATE TABLE gen (id BIGINT) WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence', "
        "'fields.id.start' = '1', 'fields.id.end' = '2000')"
    )
    t_env.execute_sql(
        f"CREATE TABLE sink (id BIGINT) WITH ('connector' = 'filesystem', 'path' = '{tmp_path}', 'format' = 'csv', "
        "'sink.rolling-policy.file-size' = '1 kb')"
    )
    t_env.execute_sql("INSERT INTO sink SELECT id FROM gen").wait()
    parts = sorted(p for p in tmp_path.iterdir() if p.is_file())
    assert len(parts) > 5 and all(p.stat().st_size <= 1024 for p in parts)
    assert sorted(int(line) for p in parts for line in p.read_text().split()) == list(range(1, 2001))


def test_a_monitored_source_reads_files_that_appear_while_it_runs(tmp_path: Path) -> None:
    (tmp_path / "dt=1").mkdir()
    (tmp_path / "dt=1" / "a.json").write_text('{"id": 1}\n{"id": 2}\n')
    t_env = _env()
    t_env.execute_sql(
        "CREATE TABLE t (id BIGINT, dt INT) PARTITIONED BY (dt) WITH ('connector' = 'filesystem', "
        f"'path' = '{tmp_path}', 'format' = 'json', 'source.monitor-interval' = '100 ms')"
    )
    rows: Iterator[Any] = iter(t_env.execute_sql("SELECT id, dt FROM t").collect())
    try:
        assert sorted(tuple(next(rows)) for _ in range(2)) == [(1, 1), (2, 1)]
        (tmp_path / "dt=2").mkdir()
        (tmp_path / "dt=2" / ".b.json").write_text('{"id": 3}\n')  # hidden until complete
        (tmp_path / "dt=2" / ".b.json").rename(tmp_path / "dt=2" / "b.json")
        assert tuple(next(rows)) == (3, 2)
    finally:
        close = getattr(rows, "close", None)
        if close is not None:
            close()


FACTS = Path(__file__).parents[2] / "data" / "flink_sql" / "fs"


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_partition_directories_and_lines_are_flink_s(tmp_path: Path, fmt: str) -> None:
    """The table and rows of ``flink_fs_partitions.py``: Flink 2.3's directory names (escaping, the default
    partition for NULL and ''), and its lines without the partition columns."""
    rows = (
        "(1, 'a', CAST(1.50 AS DECIMAL(10, 2)), TIMESTAMP '2024-01-01 10:00:00', '2024-01-01', 10, TRUE), "
        "(2, 'b/c', CAST(2.25 AS DECIMAL(10, 2)), TIMESTAMP '2024-01-01 11:00:00.123', 'x=y:z', 11, FALSE), "
        "(3, CAST(NULL AS STRING), CAST(3.00 AS DECIMAL(10, 2)), TIMESTAMP '2024-01-02 00:00:00', "
        "CAST(NULL AS STRING), 0, CAST(NULL AS BOOLEAN)), "
        "(4, 'd', CAST(4.00 AS DECIMAL(10, 2)), TIMESTAMP '2024-01-02 00:00:00', '', 1, TRUE)"
    )
    t_env = _env()
    t_env.execute_sql(
        "CREATE TABLE t (id BIGINT, name STRING, amount DECIMAL(10, 2), ts TIMESTAMP(3), dt STRING, hr INT, "
        f"ok BOOLEAN) PARTITIONED BY (dt, hr) WITH ('connector' = 'filesystem', 'path' = '{tmp_path}', "
        f"'format' = '{fmt}')"
    )
    t_env.execute_sql(f"INSERT INTO t VALUES {rows}").wait()
    lines = sorted(
        f"{p.parent.relative_to(tmp_path)}: {line}"
        for p in tmp_path.rglob("*")
        if p.is_file()
        for line in p.read_text().splitlines()
    )
    facts = (FACTS / "fs_partitions.txt").read_text().split(f"## {fmt}: files\n")[1].split("\n## ")[0]
    assert lines == sorted(facts.splitlines())
    # Flink 2.3 fails reading the default partition back ("Path should not be null or empty"); strom reads NULL
    back = sorted((tuple(r) for r in t_env.execute_sql("SELECT id, amount, dt, hr FROM t").collect()), key=str)
    assert [(i, str(a), d, h) for i, a, d, h in back] == [
        (1, "1.50", "2024-01-01", 10),
        (2, "2.25", "x=y:z", 11),
        (3, "3.00", None, 0),
        (4, "4.00", None, 1),
    ]


@pytest.mark.parametrize("fmt", ["parquet", "json"])
def test_a_filter_on_partition_columns_prunes_the_other_partitions_files(tmp_path: Path, fmt: str) -> None:
    t_env = _env()
    t_env.execute_sql(
        "CREATE TABLE t (id BIGINT, name STRING, amount DECIMAL(10, 2), ts TIMESTAMP(3), dt STRING, hr INT) "
        f"PARTITIONED BY (dt, hr) WITH ('connector' = 'filesystem', 'path' = '{tmp_path}', 'format' = '{fmt}')"
    )
    t_env.execute_sql(f"INSERT INTO t VALUES {ROWS}").wait()
    (tmp_path / "dt=2024-01-01" / "hr=10" / "broken").write_text("not a row of the table\n")

    def ids(where: str) -> list[int]:
        return sorted(r[0] for r in t_env.execute_sql(f"SELECT id FROM t WHERE {where}").collect())

    assert ids("hr = 11 AND id > 0") == [2]  # the broken file's partition is never read
    assert ids("dt = '2024-01-01' AND hr IN (0, 11) OR hr = 11") == [2]
    assert ids("hr <> 10 AND RAND() < 2") == [2, 3]
    with pytest.raises(JobExecutionError, match="Source: filesystem"):
        ids("id > 0 OR hr = 11")  # not a partition-only conjunct: every file is read, the broken one too
