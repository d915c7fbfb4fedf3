"""CSV files in, event-time windows, Parquet out — exactly once.

Page views sit in CSV files (``ts,user,page,duration_ms`` with a header). The job reads them with a
``FileSource``, counts each page's views and total viewing time per one-minute event-time window, and writes the
results as Parquet through the exactly-once ``FileSink`` (a part file per subtask and checkpoint, committed when
the checkpoint completes). Then it reads the Parquet files back with pyarrow and checks them against a plain
Python count of the same CSV rows.

    python examples/csv_to_parquet.py
"""

from __future__ import annotations

import csv
import tempfile
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from strom import (
    Configuration,
    FileSink,
    FileSource,
    OutputFileConfig,
    Row,
    StreamExecutionEnvironment,
    TumblingEventTimeWindows,
    WatermarkStrategy,
)
from strom.formats import CsvReaderFormat, CsvSchema, ParquetBulkWriters

PAGES = ["/home", "/search", "/product", "/cart", "/checkout"]
MINUTE = 60_000


def write_page_views(directory: Path, files: int = 3, rows_per_file: int = 20_000) -> None:
    """Page views over an hour of event time, a little out of order within each file."""
    directory.mkdir(parents=True, exist_ok=True)
    for f in range(files):
        with open(directory / f"views-{f}.csv", "w", newline="") as out:
            w = csv.writer(out)
            w.writerow(["ts", "user", "page", "duration_ms"])
            for i in range(rows_per_file):
                n = f * rows_per_file + i
                ts = 1_700_000_000_000 + n * 60 - (n * 7919) % 5_000  # up to 5 s out of order
                w.writerow([ts, f"user-{n % 97}", PAGES[(n * 31) % len(PAGES)], 200 + (n * 13) % 5_000])


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="strom-csv-to-parquet-"))
    views_dir, out_dir = work / "views", work / "per-minute"
    write_page_views(views_dir)

    # a bounded restart strategy: a record that fails every attempt fails the job instead of looping
    config = Configuration({"restart-strategy.type": "fixed-delay", "restart-strategy.fixed-delay.attempts": 3})
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(2)
    env.enable_checkpointing(1000)  # the Parquet sink commits a part file per subtask at every checkpoint

    schema = (
        CsvSchema.builder()
        .add_number_column("ts", number_type="BIGINT")
        .add_string_column("user")
        .add_string_column("page")
        .add_number_column("duration_ms", number_type="BIGINT")
        .set_use_header()
        .build()
    )
    source = FileSource.for_record_stream_format(CsvReaderFormat.for_schema(schema), str(views_dir)).build()
    watermarks = WatermarkStrategy.for_bounded_out_of_orderness(timedelta(seconds=5)).with_timestamp_assigner(
        lambda view, _: view.ts
    )
    views = env.from_source(source, watermarks, "page views")

    per_minute = (
        views.map(lambda v: (v.page, v.ts // MINUTE * MINUTE, 1, v.duration_ms))
        .key_by(lambda t: t[0])
        .window(TumblingEventTimeWindows.of(timedelta(minutes=1)))
        .reduce(lambda a, b: (a[0], a[1], a[2] + b[2], a[3] + b[3]))
        .map(lambda t: Row(page=t[0], minute=t[1], views=t[2], total_ms=t[3]))
    )
    arrow_schema = pa.schema(
        [("minute", pa.int64()), ("page", pa.string()), ("total_ms", pa.int64()), ("views", pa.int64())]
    )
    per_minute.sink_to(
        FileSink.for_bulk_format(str(out_dir), ParquetBulkWriters.for_schema(arrow_schema))
        .with_output_file_config(
            OutputFileConfig.builder().with_part_prefix("views").with_part_suffix(".parquet").build()
        )
        .build()
    )
    env.execute("csv to parquet")

    table = pq.read_table(out_dir)
    got = {(r["page"], r["minute"]): (r["views"], r["total_ms"]) for r in table.to_pylist()}
    expected: Counter[tuple[str, int]] = Counter()
    total_ms: Counter[tuple[str, int]] = Counter()
    for path in sorted(views_dir.iterdir()):
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                key = (row["page"], int(row["ts"]) // MINUTE * MINUTE)
                expected[key] += 1
                total_ms[key] += int(row["duration_ms"])
    assert got == {k: (expected[k], total_ms[k]) for k in expected}, "the Parquet output differs from a plain count"
    busiest = max(got, key=lambda k: got[k][0])
    print(f"{table.num_rows} (page, minute) rows in {len(list(out_dir.rglob('*.parquet')))} Parquet files: {out_dir}")
    when = datetime.fromtimestamp(busiest[1] / 1000, tz=UTC).strftime("%H:%M")
    print(f"busiest: {busiest[0]} at {when} UTC with {got[busiest][0]} views; the output matches a plain count")


if __name__ == "__main__":
    main()
