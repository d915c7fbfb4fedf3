"""BATCH vs STREAMING execution of one bounded word count, in paired rounds (the order switched every round, so a
drift in the machine's speed cancels within a pair), with the plain Python loop of the same count in the same run.

The job: a bounded generator of ``--records`` words (``--keys`` distinct) → (word, 1) → keyBy → reduce(sum) → a
counting sink (``write_batch``: records, Σ count, Σ count²) at parallelism ``--parallelism`` on as many one-slot
TaskManagers. STREAMING runs it pipelined, every task at once, the reduce emitting every running count; BATCH runs
it on blocking sort-merge exchanges, stage after stage, the reduce emitting one final count per word. Every timed
run is checked against the plain loop's counts c_k: BATCH's sink must see Σ c_k = N and Σ c_k², STREAMING's the
running counts, Σ_k c_k(c_k+1)/2; before the rounds both modes' collected counts are compared exactly (100 000
words). Reported per mode: job time (``execute()``, TaskManager start included), the TaskManagers' CPU time
(user + system of the child processes), and the load average.

    python benchmarks/batch_modes.py --records 3000000 --rounds 5 [--batch KEY=VALUE ...]

``--batch`` sets a configuration key for the BATCH runs only (``taskmanager.network.compression.codec=ZLIB``,
``execution.sorted-inputs.enabled=false``, ...).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import tempfile
import time
import uuid
from collections import Counter
from operator import itemgetter
from typing import Any

from strom import Configuration, DataGeneratorSource, StreamExecutionEnvironment
from strom.api.execution_mode import RuntimeExecutionMode
from strom.api.sink import Sink, SinkWriter, SinkWriterContext


def _word(keys: int) -> Any:
    def word(i: int) -> str:
        return f"w{(i * 7919) % keys}"

    return word


def _add(a: tuple[str, int], b: tuple[str, int]) -> tuple[str, int]:
    return (a[0], a[1] + b[1])


_count = itemgetter(1)


class _CountingWriter(SinkWriter[Any]):
    def __init__(self, out_dir: str) -> None:
        self.out_dir = out_dir
        self.records = self.total = self.squares = 0

    def write(self, element: Any) -> None:
        self.write_batch([element])

    def write_batch(self, elements: list[Any]) -> None:
        counts = list(map(_count, elements))
        self.records += len(counts)
        self.total += sum(counts)
        self.squares += sum(c * c for c in counts)

    def close(self) -> None:
        name = os.path.join(self.out_dir, f"sink-{uuid.uuid4().hex}.json")
        with open(name, "w") as f:
            json.dump({"records": self.records, "total": self.total, "squares": self.squares}, f)


class CountingSink(Sink[Any]):
    def __init__(self, out_dir: str) -> None:
        self.out_dir = out_dir

    def create_writer(self, context: SinkWriterContext) -> SinkWriter[Any]:
        return _CountingWriter(self.out_dir)


def _env(mode: RuntimeExecutionMode, parallelism: int, extra: dict[str, Any]) -> StreamExecutionEnvironment:
    config = {"taskmanager.numberOfTaskSlots": 1, "minicluster.number-of-taskmanagers": parallelism}
    if mode is RuntimeExecutionMode.BATCH:
        config.update(extra)
    env = StreamExecutionEnvironment.get_execution_environment(Configuration(config))
    env.set_parallelism(parallelism)
    env.set_runtime_mode(mode)
    return env


def _counts(env: StreamExecutionEnvironment, records: int, keys: int) -> Any:
    return (
        env.from_source(DataGeneratorSource(_word(keys), records), source_name="words")
        .map(lambda w: (w, 1))
        .key_by(lambda t: t[0])
        .reduce(_add)
    )


def plain_loop(records: int, keys: int) -> tuple[float, Counter[str]]:
    """The ceiling: the same count in one Python loop, no framework."""
    word = _word(keys)
    start = time.perf_counter()
    counts: dict[str, int] = {}
    get = counts.get
    for i in range(records):
        w = word(i)
        counts[w] = get(w, 0) + 1
    return time.perf_counter() - start, Counter(counts)


def run_once(
    mode: RuntimeExecutionMode, records: int, keys: int, parallelism: int, extra: dict[str, Any]
) -> tuple[float, float, dict[str, int]]:
    """Job time, the TaskManagers' CPU seconds and the sink's totals of one run."""
    with tempfile.TemporaryDirectory(prefix="batch-modes-") as out_dir:
        env = _env(mode, parallelism, extra)
        _counts(env, records, keys).sink_to(CountingSink(out_dir))
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        env.execute(f"word count {mode.value}")
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        totals = Counter[str]()
        for name in os.listdir(out_dir):
            with open(os.path.join(out_dir, name)) as f:
                totals.update(json.load(f))
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return wall, cpu, dict(totals)


def verify(mode: RuntimeExecutionMode, totals: dict[str, int], counts: Counter[str]) -> None:
    if mode is RuntimeExecutionMode.BATCH:
        expected = {"records": len(counts), "total": counts.total(), "squares": sum(c * c for c in counts.values())}
    else:
        expected = {"records": counts.total(), "total": sum(c * (c + 1) // 2 for c in counts.values())}
    got = {k: totals.get(k, 0) for k in expected}
    if got != expected:
        raise SystemExit(f"expected the sink's checksums {expected} in {mode.value}; got {got}")


def check(mode: RuntimeExecutionMode, records: int, keys: int, parallelism: int, extra: dict[str, Any]) -> Counter[str]:
    final: dict[str, int] = {}
    for word, count in _counts(_env(mode, parallelism, extra), records, keys).execute_and_collect():
        final[word] = max(final.get(word, 0), count)  # STREAMING emits every running count: the last is the largest
    return Counter(final)


def _setting(text: str) -> tuple[str, Any]:
    key, _, value = text.partition("=")
    return key, {"true": True, "false": False}.get(value.lower(), value)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=3_000_000)
    parser.add_argument("--keys", type=int, default=10_000)
    parser.add_argument("--parallelism", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--batch", type=_setting, action="append", default=[], help="KEY=VALUE for BATCH runs")
    args = parser.parse_args()
    extra = dict(args.batch)
    _, small = plain_loop(100_000, args.keys)
    for mode in (RuntimeExecutionMode.BATCH, RuntimeExecutionMode.STREAMING):
        if check(mode, 100_000, args.keys, args.parallelism, extra) != small:
            raise SystemExit(f"expected the plain loop's counts in {mode.value}; got others")
    loop_s, counts = plain_loop(args.records, args.keys)
    results: dict[str, list[tuple[float, float]]] = {"BATCH": [], "STREAMING": []}
    ratios, cpu_ratios = [], []
    for r in range(args.rounds):
        order = [RuntimeExecutionMode.BATCH, RuntimeExecutionMode.STREAMING]
        if r % 2:
            order.reverse()
        pair = {}
        for m in order:
            wall, cpu, totals = run_once(m, args.records, args.keys, args.parallelism, extra)
            verify(m, totals, counts)
            pair[m.value] = (wall, cpu)
            results[m.value].append((wall, cpu))
        ratios.append(pair["STREAMING"][0] / pair["BATCH"][0])
        cpu_ratios.append(pair["STREAMING"][1] / pair["BATCH"][1])
        print(
            f"round {r + 1}: BATCH {pair['BATCH'][0]:.2f} s ({pair['BATCH'][1]:.2f} s CPU), STREAMING "
            f"{pair['STREAMING'][0]:.2f} s ({pair['STREAMING'][1]:.2f} s CPU), load {os.getloadavg()[0]:.1f}",
            flush=True,
        )
    med = {m: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v)) for m, v in results.items()}
    print(
        f"{args.records:,} words, {args.keys:,} keys, p={args.parallelism}, BATCH settings {extra or 'default'}: "
        f"plain loop {loop_s:.2f} s; BATCH median {med['BATCH'][0]:.2f} s ({med['BATCH'][1]:.2f} s CPU), "
        f"STREAMING median {med['STREAMING'][0]:.2f} s ({med['STREAMING'][1]:.2f} s CPU); STREAMING/BATCH median of "
        f"paired ratios: job time {statistics.median(ratios):.2f}, CPU {statistics.median(cpu_ratios):.2f}"
    )


if __name__ == "__main__":
    main()
