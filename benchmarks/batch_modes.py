"""BATCH vs STREAMING execution of one bounded word-count-like job, in paired rounds (the order switched every round,
so a drift in the machine's speed cancels within a pair).

The job: a bounded generator of ``--records`` words (``--keys`` distinct) → (word, 1) → keyBy → reduce(sum) → a sink
that drops its input, at parallelism ``--parallelism`` on as many one-slot TaskManagers. STREAMING runs it pipelined,
every task at once, the reduce emitting every running count; BATCH runs it on blocking sort-merge exchanges, stage
after stage, the reduce emitting one final count per word. Both are checked once for the same counts (collected).

    python benchmarks/batch_modes.py --records 1000000 --rounds 5 [--no-compression]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import Counter
from typing import Any

from strom import Configuration, DataGeneratorSource, StreamExecutionEnvironment
from strom.api.execution_mode import RuntimeExecutionMode


def _word(keys: int) -> Any:
    def word(i: int) -> str:
        return f"w{(i * 7919) % keys}"

    return word


def _add(a: tuple[str, int], b: tuple[str, int]) -> tuple[str, int]:
    return (a[0], a[1] + b[1])


COMPRESSION = {"taskmanager.network.batch-shuffle.compression.enabled": True}


def _env(mode: RuntimeExecutionMode, parallelism: int) -> StreamExecutionEnvironment:
    config = Configuration(
        {"taskmanager.numberOfTaskSlots": 1, "minicluster.number-of-taskmanagers": parallelism, **COMPRESSION}
    )
    env = StreamExecutionEnvironment.get_execution_environment(config)
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


def run_once(mode: RuntimeExecutionMode, records: int, keys: int, parallelism: int) -> float:
    env = _env(mode, parallelism)
    _counts(env, records, keys).add_sink(lambda v: None)
    start = time.perf_counter()
    env.execute(f"word count {mode.value}")
    return time.perf_counter() - start


def check(mode: RuntimeExecutionMode, records: int, keys: int, parallelism: int) -> dict[str, int]:
    final: dict[str, int] = {}
    for word, count in _counts(_env(mode, parallelism), records, keys).execute_and_collect():
        final[word] = max(final.get(word, 0), count)  # STREAMING emits every running count: the last is the largest
    return final


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--keys", type=int, default=10_000)
    parser.add_argument("--parallelism", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--no-compression", action="store_true", help="BATCH's partition files uncompressed")
    args = parser.parse_args()
    COMPRESSION["taskmanager.network.batch-shuffle.compression.enabled"] = not args.no_compression
    expected = Counter(_word(args.keys)(i) for i in range(100_000))
    for mode in (RuntimeExecutionMode.BATCH, RuntimeExecutionMode.STREAMING):
        got = check(mode, 100_000, args.keys, args.parallelism)
        if got != dict(expected):
            raise SystemExit(f"expected the same counts in {mode.value}; got {len(got)} words, differing")
    times: dict[str, list[float]] = {"BATCH": [], "STREAMING": []}
    ratios = []
    for r in range(args.rounds):
        order = [RuntimeExecutionMode.BATCH, RuntimeExecutionMode.STREAMING]
        if r % 2:
            order.reverse()
        pair = {m.value: run_once(m, args.records, args.keys, args.parallelism) for m in order}
        for m, t in pair.items():
            times[m].append(t)
        ratios.append(pair["STREAMING"] / pair["BATCH"])
        print(f"round {r + 1}: BATCH {pair['BATCH']:.2f} s, STREAMING {pair['STREAMING']:.2f} s", flush=True)
    print(
        f"{args.records:,} records, {args.keys:,} keys, p={args.parallelism}: "
        f"BATCH median {statistics.median(times['BATCH']):.2f} s, "
        f"STREAMING median {statistics.median(times['STREAMING']):.2f} s, "
        f"STREAMING/BATCH median of paired ratios {statistics.median(ratios):.2f}"
    )


if __name__ == "__main__":
    main()
