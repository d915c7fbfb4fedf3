"""File connector benchmarks: reading CSV, JSON lines and Parquet with ``FileSource`` at p=1 and p=2 against the same
read in a plain Python loop (``csv``, ``json``) and with pyarrow alone, and the exactly-once Parquet ``FileSink``
with checkpoints every second against pyarrow writing the same rows.

    python benchmarks/files.py [--rows 1000000] [--rounds 3] [--write-docs]

Every round runs each reference and each strom job once, in turn, so each ratio pairs runs of the same round (the
machine's speed drifts); the table gives the median over rounds of rows/s and of the paired ratios. A strom job's
time is taken inside the job (``jobs.py``): from the first sink writer's creation, when the tasks start and before
the first split is requested, to the last writer's close — cluster start-up is not in it. The references read the
same files with the same column types: ``csv.reader`` converting each field, ``json.loads`` per line,
``pyarrow.parquet.read_table(...).to_pylist()``.
"""

from __future__ import annotations

import argparse
import csv
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pyarrow as pa
import pyarrow.parquet as pq
from bench import log, machine, md_table, splice_section
from jobs import read_parts, write_part

from strom import Configuration, Sink, SinkWriter, SinkWriterContext, StreamExecutionEnvironment

FILES = 4
DOCS = Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md"
BEGIN = "<!-- file-benchmarks:begin -->"
END = "<!-- file-benchmarks:end -->"
SCHEMA = pa.schema([("id", pa.int64()), ("user", pa.string()), ("amount", pa.float64()), ("ts", pa.int64())])


# ---- the data ------------------------------------------------------------------------------------------------
def make_data(root: Path, rows: int) -> dict[str, Path]:
    """``rows`` rows ``(id, user, amount, ts)`` in ``FILES`` files each of CSV (with a header), JSON lines and
    Parquet (row groups of 65 536 rows)."""
    dirs = {fmt: root / fmt for fmt in ("csv", "jsonl", "parquet")}
    for d in dirs.values():
        d.mkdir(parents=True)
    per_file = rows // FILES
    for f in range(FILES):
        lo, hi = f * per_file, (f + 1) * per_file if f < FILES - 1 else rows
        ids = range(lo, hi)
        users = [f"user-{i % 1000}" for i in ids]
        amounts = [(i % 10_000) / 100 for i in ids]
        tss = [1_700_000_000_000 + i for i in ids]
        with open(dirs["csv"] / f"part-{f}.csv", "w", newline="") as out:
            w = csv.writer(out)
            w.writerow(["id", "user", "amount", "ts"])
            w.writerows(zip(ids, users, amounts, tss, strict=True))
        with open(dirs["jsonl"] / f"part-{f}.jsonl", "w") as out:
            for row in zip(ids, users, amounts, tss, strict=True):
                out.write(json.dumps(dict(zip(("id", "user", "amount", "ts"), row, strict=True))) + "\n")
        table = pa.table({"id": list(ids), "user": users, "amount": amounts, "ts": tss}, schema=SCHEMA)
        pq.write_table(table, dirs["parquet"] / f"part-{f}.parquet", row_group_size=65_536)
    return dirs


def _files(directory: Path) -> list[Path]:
    return sorted(p for p in directory.iterdir() if not p.name.startswith((".", "_")))


# ---- the references: the same reads in plain Python / pyarrow ---------------------------------------------------
def plain_csv(directory: Path) -> int:
    n = 0
    for path in _files(directory):
        with open(path, newline="") as f:
            reader = csv.reader(f)
            next(reader)
            rows = [(int(r[0]), r[1], float(r[2]), int(r[3])) for r in reader]
            n += len(rows)
    return n


def plain_jsonl(directory: Path) -> int:
    n = 0
    loads = json.loads
    for path in _files(directory):
        with open(path) as f:
            rows = [loads(line) for line in f]
            n += len(rows)
    return n


def pyarrow_parquet(directory: Path) -> int:
    n = 0
    for path in _files(directory):
        n += len(pq.read_table(path).to_pylist())
    return n


def pyarrow_write(rows: list[tuple[int, str, float, int]], out: Path) -> int:
    """The reference of the Parquet sink: the same rows, from Python tuples, written by pyarrow (column-wise)."""
    out.mkdir(parents=True, exist_ok=True)
    ids, users, amounts, tss = (list(c) for c in zip(*rows, strict=True))
    table = pa.table({"id": ids, "user": users, "amount": amounts, "ts": tss}, schema=SCHEMA)
    pq.write_table(table, out / "part-0.parquet")
    return len(rows)


# ---- the strom jobs ------------------------------------------------------------------------------------------
class _StampingWriter(SinkWriter[Any]):
    """Counts records; the part it writes at close carries its creation (the task's start) and close stamps."""

    def __init__(self, out_dir: str, subtask: int) -> None:
        self.out_dir = out_dir
        self.subtask = subtask
        self.records = 0
        write_part(out_dir, "source", {"t_open": time.monotonic_ns(), "subtask": subtask})

    def write(self, element: Any) -> None:
        self.records += 1

    def write_batch(self, elements: list[Any]) -> None:
        self.records += len(elements)

    def close(self) -> None:
        write_part(self.out_dir, "sink", {"t_close": time.monotonic_ns(), "records": self.records})


class StampingSink(Sink[Any]):
    def __init__(self, out_dir: str) -> None:
        self.out_dir = out_dir

    def create_writer(self, context: SinkWriterContext) -> SinkWriter[Any]:
        return _StampingWriter(self.out_dir, context.subtask_index)


def _source(fmt: str, directory: Path) -> Any:
    from strom import FileSource
    from strom.formats import CsvReaderFormat, CsvSchema, JsonLinesReaderFormat, ParquetColumnarRowInputFormat

    if fmt == "csv":
        schema = (
            CsvSchema.builder()
            .add_number_column("id", number_type="BIGINT")
            .add_string_column("user")
            .add_number_column("amount", number_type="DOUBLE")
            .add_number_column("ts", number_type="BIGINT")
            .set_use_header()
            .build()
        )
        return FileSource.for_record_stream_format(CsvReaderFormat.for_schema(schema), str(directory)).build()
    if fmt == "jsonl":
        return FileSource.for_record_stream_format(JsonLinesReaderFormat(), str(directory)).build()
    return FileSource.for_bulk_file_format(ParquetColumnarRowInputFormat(), str(directory)).build()


def _timed(env: StreamExecutionEnvironment, name: str, out_dir: str) -> tuple[float, int]:
    env.execute(name)
    opens = [p["t_open"] for p in read_parts(out_dir, "source")]
    closes = [p for p in read_parts(out_dir, "sink")]
    seconds = (max(p["t_close"] for p in closes) - min(opens)) / 1e9
    return seconds, sum(p["records"] for p in closes)


def strom_read(fmt: str, directory: Path, parallelism: int) -> tuple[float, int]:
    """FileSource → counting sink (chained); seconds inside the job and records read."""
    out_dir = tempfile.mkdtemp(prefix="strom-bench-files-")
    try:
        env = StreamExecutionEnvironment.get_execution_environment(Configuration())
        env.set_parallelism(parallelism)
        env.from_source(_source(fmt, directory), source_name=f"{fmt} files").sink_to(StampingSink(out_dir))
        return _timed(env, f"read {fmt} p={parallelism}", out_dir)
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)


def strom_parquet_sink(directory: Path, out: Path) -> tuple[float, int]:
    """Parquet files → map to tuples → the exactly-once Parquet FileSink, p=1, checkpoints every second. Seconds
    from the task's start to the end of the job (the last commit), and the rows the committed files hold."""
    from strom import FileSink
    from strom.formats import ParquetBulkWriters

    out_dir = tempfile.mkdtemp(prefix="strom-bench-files-")
    try:
        env = StreamExecutionEnvironment.get_execution_environment(Configuration())
        env.set_parallelism(1)
        env.enable_checkpointing(1000)
        stream = env.from_source(_source("parquet", directory), source_name="parquet files")
        stream.map(_StampOnce(out_dir)).sink_to(
            FileSink.for_bulk_format(str(out), ParquetBulkWriters.for_schema(SCHEMA)).build()
        )
        t0 = time.monotonic_ns()
        env.execute("parquet sink")
        t1 = time.monotonic_ns()
        opens = [p["t_open"] for p in read_parts(out_dir, "source")]
        seconds = (t1 - min(opens)) / 1e9 if opens else (t1 - t0) / 1e9
        return seconds, pq.read_table(out).num_rows
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)


class _StampOnce:
    """An identity map whose first call stamps the moment the first row arrives."""

    def __init__(self, out_dir: str) -> None:
        self.out_dir = out_dir
        self.stamped = False

    def __call__(self, row: Any) -> Any:
        if not self.stamped:
            self.stamped = True
            write_part(self.out_dir, "source", {"t_open": time.monotonic_ns()})
        return row


# ---- rounds and the report -----------------------------------------------------------------------------------
def _timed_ref(fn: Callable[[], int]) -> tuple[float, int]:
    t0 = time.perf_counter()
    n = fn()
    return time.perf_counter() - t0, n


def run(rows: int, rounds: int) -> dict[str, Any]:
    root = Path(tempfile.mkdtemp(prefix="strom-bench-files-data-"))
    try:
        log(f"writing {rows:,} rows as CSV, JSON lines and Parquet ({FILES} files each) in {root}")
        dirs = make_data(root, rows)
        refs: dict[str, Callable[[], int]] = {
            "csv": lambda: plain_csv(dirs["csv"]),
            "jsonl": lambda: plain_jsonl(dirs["jsonl"]),
            "parquet": lambda: pyarrow_parquet(dirs["parquet"]),
        }
        rates: dict[str, list[float]] = {}
        ratios: dict[str, list[float]] = {}
        for r in range(rounds):
            log(f"round {r + 1}/{rounds}")
            for fmt, ref in refs.items():
                s, n = _timed_ref(ref)
                assert n == rows, f"the {fmt} reference read {n} rows; expected {rows}"
                ref_rate = n / s
                rates.setdefault(f"{fmt} reference", []).append(ref_rate)
                log(f"  {fmt:8} reference   {ref_rate:>12,.0f} rows/s")
                for p in (1, 2):
                    s, n = strom_read(fmt, dirs[fmt], p)
                    assert n == rows, f"strom read {n} {fmt} rows at p={p}; expected {rows}"
                    rate = n / s
                    rates.setdefault(f"{fmt} p={p}", []).append(rate)
                    ratios.setdefault(f"{fmt} p={p}", []).append(rate / ref_rate)
                    log(f"  {fmt:8} strom p={p}    {rate:>12,.0f} rows/s  ({rate / ref_rate:.2f}x the reference)")
            sample = [(i, f"user-{i % 1000}", (i % 10_000) / 100, 1_700_000_000_000 + i) for i in range(rows)]
            out = root / f"ref-out-{r}"
            s, n = _timed_ref(lambda out=out, sample=sample: pyarrow_write(sample, out))
            ref_rate = n / s
            rates.setdefault("parquet sink reference", []).append(ref_rate)
            s, n = strom_parquet_sink(dirs["parquet"], root / f"sink-out-{r}")
            assert n == rows, f"the Parquet sink committed {n} rows; expected {rows}"
            rate = n / s
            rates.setdefault("parquet sink", []).append(rate)
            ratios.setdefault("parquet sink", []).append(rate / ref_rate)
            log(f"  parquet sink (exactly-once, checkpoint 1 s) {rate:>12,.0f} rows/s; pyarrow {ref_rate:,.0f}")
        return {"rates": rates, "ratios": ratios, "rows": rows, "rounds": rounds}
    finally:
        shutil.rmtree(root, ignore_errors=True)


def render(result: dict[str, Any]) -> str:
    med = {k: statistics.median(v) for k, v in result["rates"].items()}
    rat = {k: statistics.median(v) for k, v in result["ratios"].items()}
    rows = []
    for fmt, ref_name in (("csv", "csv.reader + int/float"), ("jsonl", "json.loads per line"), ("parquet", "pyarrow")):
        for p in (1, 2):
            key = f"{fmt} p={p}"
            target = "≥ 0.70" if p == 1 else ""
            ok = "" if p != 1 else (" ✓" if rat[key] >= 0.70 else " ✗")
            rows.append(
                [
                    f"read {fmt}",
                    f"p={p}",
                    f"{med[key]:,.0f}",
                    f"{med[f'{fmt} reference']:,.0f} ({ref_name})",
                    f"{rat[key]:.2f}{ok}",
                    target,
                ]
            )
    rows.append(
        [
            "Parquet FileSink, exactly-once, checkpoint 1 s",
            "p=1",
            f"{med['parquet sink']:,.0f}",
            f"{med['parquet sink reference']:,.0f} (pyarrow write_table)",
            f"{rat['parquet sink']:.2f}",
            "",
        ]
    )
    m = machine()
    lines = [
        BEGIN,
        "## File connector: FileSource reads and the Parquet FileSink",
        "",
        f"`python benchmarks/files.py --rows {result['rows']} --rounds {result['rounds']} --write-docs` "
        f"(`make bench-files`) on "
        f"{time.strftime('%Y-%m-%d')}, {m.get('cpu', '')}, {m.get('ram', '')} RAM, {m.get('python', '')}, "
        f"commit {m.get('commit', '?')}. {result['rows']:,} rows "
        f"`(id, user, amount, ts)` in {FILES} files per format; medians of {result['rounds']} rounds, ratios paired "
        "within a round. strom's time runs from the tasks' start (before the first split request) to the last "
        "sink's close; the references are the same reads in the benchmark process.",
        "",
        md_table(
            ["what", "parallelism", "strom rows/s", "reference rows/s", "ratio (median of paired)", "target"], rows
        ),
        "",
        "The Parquet sink's figure runs from the first row reaching the sink's map to the job's end — the last "
        "checkpoint and its commit included — at p=1 with a checkpoint every second; pyarrow writes the same rows "
        "from Python tuples with one `write_table`. The reads are CPU-bound in the source task (plain CSV blocks are "
        "parsed by pyarrow's CSV reader, JSON lines by one `json.loads` per line); p=2 reads two files at a time.",
        END,
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--write-docs", action="store_true")
    args = ap.parse_args(argv)
    result = run(args.rows, args.rounds)
    section = render(result)
    print(section)
    if args.write_docs:
        text = DOCS.read_text()
        DOCS.write_text(splice_section(text, section, BEGIN, END))
        log(f"wrote {DOCS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
