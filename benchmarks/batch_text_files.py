"""A word count over text files: strom BATCH vs strom STREAMING vs Spark's own DataFrame job (``local[2]``) on the
same files, all checked against the counts made while writing them.

The files: ``--megabytes`` of lines of 12 words drawn from ``--keys`` distinct words, in files of 8 MB, written once
under ``--dir`` (reused while their size matches). strom: ``FileSource`` of text lines → flat_map(split) → (word, 1)
→ keyBy → sum → a counting sink (benchmarks/batch_modes.py's: records, Σ count, Σ count²), parallelism 2 on two
one-slot TaskManagers; BATCH with its defaults (local aggregation on). Spark: ``spark.read.text`` → explode(split) →
groupBy().count() → the same three sums, collected on the driver, in a session started before the timing (its JVM's
start is not in the figure; strom's TaskManagers' start is, as in batch_modes.py). Reported per engine: job time,
CPU time (strom: the TaskManager processes; Spark: its JVM), median over ``--rounds``.

    python benchmarks/batch_text_files.py --megabytes 200 --rounds 3
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import resource
import statistics
import tempfile
import time
from collections import Counter
from typing import Any

import batch_modes
import cloudpickle
import psutil

from strom import Configuration, StreamExecutionEnvironment
from strom.api.execution_mode import RuntimeExecutionMode
from strom.connectors.file_system import FileSource, TextLineInputFormat

cloudpickle.register_pickle_by_value(batch_modes)  # its sink runs in the TaskManagers, which cannot import it

FILE_BYTES = 8 << 20
WORDS_PER_LINE = 12


def write_files(directory: str, megabytes: int, keys: int) -> Counter[str]:
    """The text files (written unless there, with a record of their counts) and the count of every word in them."""
    marker = os.path.join(directory, f"_counts-{megabytes}-{keys}.txt")
    if os.path.exists(marker):
        with open(marker) as f:
            return Counter({w: int(c) for w, c in (line.split() for line in f)})
    for name in os.listdir(directory) if os.path.isdir(directory) else []:
        os.remove(os.path.join(directory, name))
    os.makedirs(directory, exist_ok=True)
    rng = random.Random(29)
    vocabulary = [f"w{i}" for i in range(keys)]
    counts: Counter[str] = Counter()
    remaining, index = megabytes << 20, 0
    while remaining > 0:
        size = 0
        lines = []
        while size < min(FILE_BYTES, remaining):
            words = rng.choices(vocabulary, k=WORDS_PER_LINE)
            counts.update(words)
            line = " ".join(words)
            lines.append(line)
            size += len(line) + 1
        with open(os.path.join(directory, f"part-{index:04d}.txt"), "w") as f:
            f.write("\n".join(lines) + "\n")
        remaining -= size
        index += 1
    with open(marker, "w") as f:
        f.writelines(f"{w} {c}\n" for w, c in counts.items())
    return counts


def _text_files(directory: str) -> list[str]:
    return sorted(os.path.join(directory, n) for n in os.listdir(directory) if n.endswith(".txt") and n[0] != "_")


def strom_run(mode: RuntimeExecutionMode, directory: str) -> tuple[float, float, dict[str, int]]:
    with tempfile.TemporaryDirectory(prefix="batch-text-") as out_dir:
        env = StreamExecutionEnvironment.get_execution_environment(
            Configuration({"taskmanager.numberOfTaskSlots": 1, "minicluster.number-of-taskmanagers": 2})
        )
        env.set_parallelism(2)
        env.set_runtime_mode(mode)
        source = FileSource.for_record_stream_format(TextLineInputFormat(), *_text_files(directory)).build()
        (
            env.from_source(source, source_name="text")
            .flat_map(str.split)
            .map(lambda w: (w, 1))
            .key_by(lambda t: t[0])
            .sum(1)
            .sink_to(batch_modes.CountingSink(out_dir))
        )
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        env.execute(f"text word count {mode.value}")
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        totals: Counter[str] = Counter()
        for name in os.listdir(out_dir):
            with open(os.path.join(out_dir, name)) as f:
                totals.update(json.load(f))
    return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, dict(totals)


def _jvm_cpu() -> float:
    total = 0.0
    for p in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.Error):  # a child that exited while we looked counts nothing
            if "java" in p.name():
                t = p.cpu_times()
                total += t.user + t.system
    return total


def spark_run(spark: Any, directory: str) -> tuple[float, float, dict[str, int]]:
    from pyspark.sql import functions as F

    before = _jvm_cpu()
    start = time.perf_counter()
    words = spark.read.text(directory + "/part-*.txt").select(F.explode(F.split("value", " ")).alias("w"))
    counts = words.where(F.col("w") != "").groupBy("w").count()
    row = counts.agg(F.count("*"), F.sum("count"), F.sum(F.col("count") * F.col("count"))).collect()[0]
    wall = time.perf_counter() - start
    return wall, _jvm_cpu() - before, {"records": row[0], "total": row[1], "squares": row[2]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--megabytes", type=int, default=200)
    parser.add_argument("--keys", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "strom-batch-text"))
    parser.add_argument("--no-spark", action="store_true")
    args = parser.parse_args()
    counts = write_files(args.dir, args.megabytes, args.keys)
    final = {"records": len(counts), "total": counts.total(), "squares": sum(c * c for c in counts.values())}
    running = {"records": counts.total(), "total": sum(c * (c + 1) // 2 for c in counts.values())}
    print(f"{args.megabytes} MB of text, {counts.total():,} words, {len(counts):,} distinct", flush=True)
    spark = None
    if not args.no_spark:
        from pyspark.sql import SparkSession

        spark = (
            SparkSession.builder.master("local[2]")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .getOrCreate()
        )
        spark.sparkContext.setLogLevel("ERROR")
    results: dict[str, list[tuple[float, float]]] = {}
    for r in range(args.rounds):
        runs: list[tuple[str, Any]] = [
            ("strom BATCH", lambda: strom_run(RuntimeExecutionMode.BATCH, args.dir)),
            ("strom STREAMING", lambda: strom_run(RuntimeExecutionMode.STREAMING, args.dir)),
        ]
        if spark is not None:
            runs.append(("Spark DataFrame", lambda: spark_run(spark, args.dir)))
        for name, run in runs if r % 2 == 0 else runs[::-1]:
            wall, cpu, totals = run()
            expected = running if name == "strom STREAMING" else final
            got = {k: totals.get(k, 0) for k in expected}
            if got != expected:
                raise SystemExit(f"expected {expected} from {name}; got {got}")
            results.setdefault(name, []).append((wall, cpu))
            print(f"round {r + 1}: {name} {wall:.2f} s ({cpu:.2f} s CPU), load {os.getloadavg()[0]:.1f}", flush=True)
    for name, rows in results.items():
        print(
            f"{name}: median {statistics.median(w for w, _ in rows):.2f} s, "
            f"{statistics.median(c for _, c in rows):.2f} s CPU"
        )
    if spark is not None:
        spark.stop()


if __name__ == "__main__":
    main()
