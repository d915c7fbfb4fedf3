"""The file connector end to end on real TaskManager processes: FileSource reads give exactly the rows a plain read
gives (CSV, JSON lines, text, Parquet; local and S3; p=1 and p=2); a continuously monitored directory reads each new
file once, across a SIGKILLed TaskManager; files → Parquet through the exactly-once FileSink (local and S3) with a
TaskManager SIGKILLed three times commits exactly the rows of an uninterrupted run; a savepoint taken mid-read
restores at another parallelism and the output is still exact."""

from __future__ import annotations

import csv
import gzip
import json
import os
import random
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from failover import committed_rows, completed_checkpoints, failover_env, kill_a_task_manager, kill_task_managers
from s3_server import S3Bucket

from strom import FileSink, FileSource, JsonLinesEncoder, MapFunction, Row, StreamExecutionEnvironment
from strom.connectors.file_system import StreamFormat
from strom.formats import (
    CsvReaderFormat,
    CsvSchema,
    JsonLinesReaderFormat,
    ParquetBulkWriters,
    ParquetColumnarRowInputFormat,
)

SCHEMA = CsvSchema.builder().add_number_column("id").add_string_column("name").add_number_column("score", "DOUBLE")
CSV_SCHEMA = SCHEMA.set_use_header().build()
ARROW = pa.schema([("id", pa.int64()), ("name", pa.string()), ("score", pa.float64())])


def row_values(i: int) -> tuple[int, str, float]:
    # names with the separator, quotes and a line break: the CSV reader must handle quoting
    name = f'n{i}, "q"' if i % 97 == 0 else (f"line\nbreak {i}" if i % 89 == 0 else f"n{i}")
    return (i, name, i / 4)


def write_inputs(directory: Path, fmt: str, files: int, rows: int, *, start: int = 0) -> None:
    """``files`` files of ``rows`` rows each, ids from ``start``; the last line-format file gzip'ed; plus files
    the source must skip (hidden, ``_SUCCESS``)."""
    directory.mkdir(parents=True, exist_ok=True)
    for f in range(files):
        ids = range(start + f * rows, start + (f + 1) * rows)
        write_file(directory / f"part-{start + f:05d}", fmt, ids, gz=f == files - 1 and fmt != "parquet")
    (directory / ".hidden.csv").write_text("not,a,row\n")
    (directory / "_SUCCESS").write_text("")


def write_file(base: Path, fmt: str, ids: Any, *, gz: bool = False) -> Path:
    rows = [row_values(i) for i in ids]
    if fmt == "parquet":
        path = base.with_suffix(".parquet")
        pq.write_table(
            pa.Table.from_pylist([dict(zip(ARROW.names, r, strict=True)) for r in rows], ARROW),
            path,
            row_group_size=700,
        )
        return path
    if fmt == "csv":
        buf = _csv_text(rows)
    elif fmt == "jsonl":
        buf = "".join(json.dumps(dict(zip(ARROW.names, r, strict=True))) + "\n" for r in rows)
    else:  # text: one line per row, no line breaks inside
        buf = "".join(f"{i}|{name.replace(chr(10), ' ')}|{score}\n" for i, name, score in rows)
    suffix = {"csv": ".csv", "jsonl": ".jsonl", "text": ".txt"}[fmt]
    if gz:
        path = base.with_suffix(suffix + ".gz")
        path.write_bytes(gzip.compress(buf.encode()))
    else:
        path = base.with_suffix(suffix)
        path.write_text(buf)
    return path


def _csv_text(rows: list[tuple[int, str, float]]) -> str:
    import io

    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["id", "name", "score"])
    w.writerows(rows)
    return out.getvalue()


def plain_read(directory: Path, fmt: str) -> list[Any]:
    """What ``csv`` / ``json`` / a line loop / pyarrow read from the same files (visible ones only)."""
    out: list[Any] = []
    for path in sorted(p for p in directory.rglob("*") if p.is_file() and not p.name.startswith((".", "_"))):
        if fmt == "parquet":
            out.extend(pq.read_table(path).to_pylist())
            continue
        data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
        text = data.decode()
        if fmt == "csv":
            reader = csv.reader(text.splitlines(keepends=True))
            next(reader)
            out.extend({"id": int(r[0]), "name": r[1], "score": float(r[2])} for r in reader)
        elif fmt == "jsonl":
            out.extend(json.loads(line) for line in text.splitlines())
        else:
            out.extend(text.splitlines())
    return out


def source_of(fmt: str, *paths: str, storage_options: dict[str, Any] | None = None, monitor: str | None = None) -> Any:
    if fmt == "parquet":
        builder = FileSource.for_bulk_file_format(ParquetColumnarRowInputFormat(), *paths)
    else:
        stream_format = {
            "csv": lambda: CsvReaderFormat.for_schema(CSV_SCHEMA),
            "jsonl": lambda: JsonLinesReaderFormat(),
            "text": lambda: StreamFormat.text_line_format(),
        }[fmt]()
        builder = FileSource.for_record_stream_format(stream_format, *paths)
    if storage_options:
        builder = builder.storage_options(storage_options)
    if monitor:
        builder = builder.monitor_continuously(monitor)
    return builder.build()


def as_plain(record: Any) -> Any:
    return record.as_dict() if isinstance(record, Row) else record


def _key(record: Any) -> str:
    return json.dumps(record, sort_keys=True)


@pytest.mark.timeout(180)
@pytest.mark.parametrize("fmt", ["csv", "jsonl", "text", "parquet"])
@pytest.mark.parametrize("parallelism", [1, 2])
def test_a_directory_reads_exactly_as_a_plain_read(tmp_path: Path, fmt: str, parallelism: int) -> None:
    data = tmp_path / "in"
    write_inputs(data, fmt, files=4, rows=2_500)
    write_inputs(data / "nested", fmt, files=1, rows=500, start=100_000)
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(parallelism)
    stream = env.from_source(source_of(fmt, str(data)), source_name=f"{fmt} files").map(as_plain)
    with stream.execute_and_collect(f"read {fmt}") as results:
        got = list(results)
    expected = plain_read(data, fmt)
    assert len(expected) == 4 * 2_500 + 500
    assert Counter(map(_key, got)) == Counter(map(_key, expected))


@pytest.mark.timeout(180)
def test_csv_and_parquet_files_on_s3_read_as_plain_reads(tmp_path: Path, s3_server: S3Bucket) -> None:
    fs = s3_server.filesystem()
    for fmt in ("csv", "parquet"):
        local = tmp_path / fmt
        write_inputs(local, fmt, files=3, rows=1_000)
        for path in local.iterdir():
            fs.put_file(str(path), f"{s3_server.name}/{fmt}/{path.name}")
        env = StreamExecutionEnvironment.get_execution_environment()
        env.set_parallelism(2)
        source = source_of(fmt, s3_server.url(fmt), storage_options=s3_server.storage_options)
        with env.from_source(source, source_name=f"s3 {fmt}").map(as_plain).execute_and_collect() as results:
            got = list(results)
        assert Counter(map(_key, got)) == Counter(map(_key, plain_read(local, fmt)))


# -- exactly once ------------------------------------------------------------------------------------------------
class Throttle(MapFunction):
    """Passes records on at about ``rate`` per second per subtask, so that a job lasts long enough to be killed."""

    def __init__(self, rate: float) -> None:
        self.rate = rate
        self.count = 0
        self.start = 0.0

    def map(self, value: Any) -> Any:
        if self.count == 0:
            self.start = time.monotonic()
        self.count += 1
        if self.count % 100 == 0:
            ahead = self.count / self.rate - (time.monotonic() - self.start)
            if ahead > 0:
                time.sleep(ahead)
        return value


def to_tuple(row: Any) -> tuple[int, str, float]:
    return (row.id, row.name, row.score * 2)


def expected_tuples(ids: range) -> Counter[tuple[Any, ...]]:
    return Counter((i, name, score * 2) for i, name, score in (row_values(i) for i in ids))


def parquet_rows(fs: Any, directory: str) -> list[tuple[Any, ...]]:
    """The rows of the committed Parquet parts under ``directory`` (final names only: in-progress and pending
    parts are hidden)."""
    rows: list[tuple[Any, ...]] = []
    for path in sorted(fs.find(directory)):
        if os.path.basename(path).startswith((".", "_")):
            continue
        with fs.open(path, "rb") as f:
            rows.extend(tuple(r.values()) for r in pq.read_table(f).to_pylist())
    return rows


@pytest.mark.processes  # kills TaskManagers
@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("target", ["local", "s3"])
def test_files_to_parquet_exactly_once_with_three_task_manager_kills(
    tmp_path: Path, target: str, request: pytest.FixtureRequest
) -> None:
    rows = 100_000
    data = tmp_path / "in"
    write_inputs(data, "csv", files=40, rows=rows // 40)
    if target == "s3":
        bucket: S3Bucket = request.getfixturevalue("s3_server")
        out, options, fs = bucket.url("out"), dict(bucket.storage_options), bucket.filesystem()
    else:
        import fsspec

        out, options, fs = str(tmp_path / "out"), {}, fsspec.filesystem("file")
    env = failover_env()
    (
        env.from_source(source_of("csv", str(data)), source_name="csv files")
        .uid("files")
        .map(Throttle(4_000))  # about 12 s of work: the three kills land while it runs, also on a loaded machine
        .map(to_tuple)
        .sink_to(FileSink.for_bulk_format(out, ParquetBulkWriters.for_schema(ARROW), storage_options=options).build())
        .uid("parquet")
    )
    client = env.execute_async("files to parquet, three kills")
    killed: list[int] = []
    killer = threading.Thread(target=kill_task_managers, args=(client, 3, random.Random(11), killed))
    killer.start()
    try:
        result = client.get_job_execution_result()
    finally:
        killer.join()
    assert len(killed) == 3, "the job ended before three TaskManagers were killed"
    assert result.num_restarts >= 3
    got = parquet_rows(fs, out if target == "local" else out.removeprefix("s3://"))
    assert len(got) == rows
    assert Counter(got) == expected_tuples(range(rows))


@pytest.mark.processes  # kills a TaskManager
@pytest.mark.slow
@pytest.mark.timeout(240)
def test_a_monitored_directory_reads_each_new_file_once_across_a_kill(tmp_path: Path) -> None:
    data, out = tmp_path / "in", tmp_path / "out"
    write_inputs(data, "jsonl", files=2, rows=500)
    env = failover_env()
    (
        env.from_source(source_of("jsonl", str(data), monitor="100 ms"), source_name="watched files")
        .uid("files")
        .map(lambda d: (d["id"], d["name"], d["score"] * 2))
        .sink_to(FileSink.for_row_format(str(out), JsonLinesEncoder()).build())
        .uid("out")
    )
    client = env.execute_async("monitored directory")
    total = 2 * 500
    try:
        completed_checkpoints(client, 1)
        for k in range(8):  # new files while the job runs, each moved into place whole
            ids = range(10_000 + k * 300, 10_000 + (k + 1) * 300)
            target = data / ("later" if k % 2 else "") / f"new-{k}"
            target.parent.mkdir(exist_ok=True)
            staged = write_file(tmp_path / f".staging-{k}", "jsonl", ids)
            os.replace(staged, target.with_suffix(".jsonl"))
            total += len(ids)
            if k == 3:
                kill_a_task_manager(client, seed=5)
            time.sleep(0.2)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and len(committed_rows(out)) < total:
            assert not client.get_job_status().is_globally_terminal
            time.sleep(0.1)
        time.sleep(1.0)  # later checkpoints must not commit anything twice
        got = committed_rows(out)
    finally:
        client.cancel()
    ids = [*range(1_000), *range(10_000, 10_000 + 8 * 300)]
    assert len(got) == total
    assert Counter(got) == Counter(tuple(json.loads(json.dumps(t))) for t in expected_tuples(ids))


@pytest.mark.processes  # kills a TaskManager
@pytest.mark.slow
@pytest.mark.timeout(240)
@pytest.mark.parametrize("new_parallelism", [1, 3])
def test_a_savepoint_taken_mid_read_restores_at_another_parallelism(tmp_path: Path, new_parallelism: int) -> None:
    rows = 30_000
    data, out, savepoints = tmp_path / "in", tmp_path / "out", tmp_path / "savepoints"
    write_inputs(data, "csv", files=12, rows=rows // 12)

    def job(parallelism: int) -> StreamExecutionEnvironment:
        env = failover_env(parallelism)
        (
            env.from_source(source_of("csv", str(data)), source_name="csv files")
            .uid("files")
            .map(Throttle(6_000))
            .map(to_tuple)
            .sink_to(FileSink.for_row_format(str(out), JsonLinesEncoder()).build())
            .uid("out")
        )
        return env

    client = job(2).execute_async("before the savepoint")
    completed_checkpoints(client, 2)
    savepoint = client.stop_with_savepoint(str(savepoints))
    # the parts stay in progress across checkpoints (Flink's default rolling policy) and the savepoint rolled them:
    # its rows are committed, or pending in hidden parts until the restored job commits them
    hidden = [f for f in out.rglob(".part-*.inprogress") if f.is_file()]
    before = committed_rows(out) + [tuple(json.loads(line)) for f in hidden for line in f.read_text().splitlines()]
    assert 0 < len(before) < rows, "the savepoint should be taken mid-read"
    job(new_parallelism).execute("after the savepoint", savepoint_path=savepoint)
    got = committed_rows(out)
    assert len(got) == rows
    assert Counter(got) == Counter(tuple(json.loads(json.dumps(t))) for t in expected_tuples(range(rows)))


# -- bad input -----------------------------------------------------------------------------------------------------
def write_with_a_bad_line(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "scores.csv"
    path.write_text("id,name,score\n1,a,0.5\n2,b,not-a-number\n3,c,1.5\n")
    return path


@pytest.mark.timeout(120)
def test_a_malformed_csv_line_fails_the_job_naming_file_line_and_column(tmp_path: Path) -> None:
    from strom import JobExecutionError

    path = write_with_a_bad_line(tmp_path / "in")
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    env.from_source(source_of("csv", str(tmp_path / "in")), source_name="scores").map(as_plain).print()
    with pytest.raises(JobExecutionError) as failure:
        env.execute("bad csv")
    message = str(failure.value)
    # file:line as a compiler names it (it passed before by matching "line 3…" of strom's own frames, now hidden)
    assert f"{path}:3" in message and "column 'score' (column 3)" in message, message


@pytest.mark.timeout(120)
def test_a_malformed_csv_line_goes_to_the_side_output_when_asked_and_the_rest_is_read(tmp_path: Path) -> None:
    from strom import OutputTag

    path = write_with_a_bad_line(tmp_path / "in")
    bad = OutputTag("bad-lines")
    fmt = CsvReaderFormat.for_schema(CSV_SCHEMA).with_invalid_records_to(bad)
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    rows = env.from_source(FileSource.for_record_stream_format(fmt, str(tmp_path / "in")).build(), source_name="s")
    both = rows.map(lambda r: ("row", r.id)).union(rows.get_side_output(bad).map(lambda x: ("bad", x.line, x.raw)))
    with both.execute_and_collect("bad csv to a side output") as results:
        got = sorted(results)
    assert got == [("bad", 3, "2,b,not-a-number"), ("row", 1), ("row", 3)], (got, path)


@pytest.mark.timeout(60)
def test_a_path_that_does_not_exist_fails_execute_before_any_task_manager_starts(tmp_path: Path) -> None:
    from processes import running_task_managers

    from strom import ConnectorError

    env = StreamExecutionEnvironment.get_execution_environment()
    env.from_source(source_of("csv", str(tmp_path / "missing")), source_name="nothing").print()
    with pytest.raises(ConnectorError, match="missing"):
        env.execute("missing input")
    assert running_task_managers() == []
