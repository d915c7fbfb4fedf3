"""Checkpoints under backpressure (issue 29 §3): a sink 10× slower than its source, checkpoints every second.

    python benchmarks/unaligned.py                    # this tree against --before (default /work/main), prints
    python benchmarks/unaligned.py --write-docs       # ... and puts the section into docs/benchmarks.md
    python benchmarks/unaligned.py --before ''        # this tree only

The job: a paced source (``--rate`` records/s, p=2, each record carries ``--payload`` bytes) → key-by → a sink that
sleeps so that it takes ten times the source's time per record (p=2, its own slot sharing group, so every channel
of the exchange crosses TaskManagers: two TaskManagers of two slots). The exchange fills and stays full: the
source is backpressured from the first seconds on. Checkpoints every ``--interval`` ms, EXACTLY_ONCE, at most one
at a time; the job runs ``--seconds`` and is cancelled. Reported: the checkpoints completed after the first
``--warmup`` seconds (backpressure built up) — their duration (trigger → complete, median and max), how many
completed / failed, and the in-flight data they persisted (``persisted_data_bytes`` of every subtask, the channel
state size the REST API's checkpoint statistics show as ``persisted_data``).

Each configuration runs in a child process whose ``PYTHONPATH`` is the tree under test (this worktree, or
``--before`` for the engine before the change), in turn, ``--repeat`` rounds.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
BEGIN = "<!-- unaligned-benchmarks:begin -->"
END = "<!-- unaligned-benchmarks:end -->"

#: (label, tree: "after" | "before", mode, aligned-checkpoint-timeout ms or None)
CONFIGS: list[tuple[str, str, str, int | None]] = [
    ("aligned", "after", "aligned", None),
    ("unaligned, sender side only (before)", "before", "unaligned", None),
    ("unaligned, receiver side too (after)", "after", "unaligned", None),
    ("aligned-checkpoint-timeout 100 ms (after)", "after", "unaligned", 100),
]


# ---- the job (runs in the child) ----------------------------------------------------------------------------------
def run_child(args: argparse.Namespace) -> dict[str, Any]:
    from strom import (
        CheckpointingMode,
        Configuration,
        DataGeneratorSource,
        Sink,
        SinkWriter,
        SinkWriterContext,
        StreamExecutionEnvironment,
    )

    payload = "x" * args.payload
    sleep_per_record = 10.0 / args.rate * 2  # two source subtasks share the rate; each sink subtask gets half

    class SlowWriter(SinkWriter[Any]):
        """Ten times slower per record than the source."""

        def write(self, element: Any) -> None:
            time.sleep(sleep_per_record)

        def write_batch(self, elements: list[Any]) -> None:
            time.sleep(sleep_per_record * len(elements))

    class SlowSink(Sink[Any]):
        def create_writer(self, context: SinkWriterContext) -> SinkWriter[Any]:
            return SlowWriter()

    def record(i: int) -> tuple[int, int, str]:
        return (i % 97, i, payload)

    conf: dict[str, Any] = {"taskmanager.numberOfTaskSlots": 2}
    if args.timeout_ms is not None:
        conf["execution.checkpointing.aligned-checkpoint-timeout"] = f"{args.timeout_ms} ms"
    env = StreamExecutionEnvironment.get_execution_environment(Configuration(conf))
    env.set_parallelism(2)
    env.enable_checkpointing(args.interval, CheckpointingMode.EXACTLY_ONCE)
    cfg = env.get_checkpoint_config()
    cfg.set_checkpoint_storage(tempfile.mkdtemp(prefix="ucbench-"))
    cfg.set_checkpoint_timeout(60_000)
    if args.mode == "unaligned":
        cfg.enable_unaligned_checkpoints()
    count = int(args.rate * (args.seconds + 30))
    (
        env.from_source(DataGeneratorSource(record, count, records_per_second=args.rate), source_name="paced")
        .key_by(lambda r: r[0])
        .sink_to(SlowSink())
        .slot_sharing_group("sink")
    )
    client = env.execute_async("unaligned under backpressure")
    t0 = time.time() * 1000.0
    time.sleep(args.seconds)
    stats = client.get_checkpoint_statistics()
    client.cancel()
    warm = [c for c in stats if c.trigger_timestamp_ms >= t0 + args.warmup * 1000.0]
    done = [c for c in warm if c.status == "COMPLETED"]
    return {
        "durations_ms": [float(c.duration_ms or 0) for c in done],
        "persisted": [sum(s.get("persisted_data_bytes", 0.0) for s in c.subtasks.values()) for c in done],
        "failed": sum(1 for c in warm if c.status == "FAILED"),
        "in_progress": sum(1 for c in warm if c.status == "IN_PROGRESS"),
    }


# ---- the driver -------------------------------------------------------------------------------------------------
def _run(tree: str, mode: str, timeout_ms: int | None, args: argparse.Namespace) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--child", "--mode", mode, *_common(args)]
    if timeout_ms is not None:
        cmd += ["--timeout-ms", str(timeout_ms)]
    env = dict(os.environ, PYTHONPATH=tree)
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=args.seconds + 120, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"{mode} on {tree} failed: {out.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def _common(args: argparse.Namespace) -> list[str]:
    return [
        *("--rate", str(args.rate), "--payload", str(args.payload), "--interval", str(args.interval)),
        *("--seconds", str(args.seconds), "--warmup", str(args.warmup)),
    ]


def _kb(xs: list[float]) -> str:
    return f"{statistics.median(xs) / 1024:,.0f} / {max(xs) / 1024:,.0f} KiB" if xs else "—"


def _s(xs: list[float]) -> str:
    return f"{statistics.median(xs) / 1000:.2f} / {max(xs) / 1000:.2f} s" if xs else "—"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--mode", default="unaligned", help=argparse.SUPPRESS)
    ap.add_argument("--timeout-ms", type=int, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--before", default="/work/main", help="the tree of the engine before the change ('' = none)")
    ap.add_argument("--rate", type=int, default=20_000, help="source records/s (all subtasks)")
    ap.add_argument("--payload", type=int, default=100, help="bytes of payload per record")
    ap.add_argument("--interval", type=int, default=1000, help="checkpoint interval, ms")
    ap.add_argument("--seconds", type=float, default=20.0, help="how long each run lasts")
    ap.add_argument("--warmup", type=float, default=3.0, help="checkpoints triggered before this are left out")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--write-docs", action="store_true")
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(run_child(args)))
        return 0
    trees = {"after": str(ROOT), "before": args.before}
    configs = [c for c in CONFIGS if trees[c[1]]]
    results: dict[str, dict[str, Any]] = {c[0]: {"durations_ms": [], "persisted": [], "failed": 0} for c in configs}
    for rnd in range(args.repeat):
        for label, tree, mode, timeout_ms in configs if rnd % 2 == 0 else list(reversed(configs)):
            r = _run(trees[tree], mode, timeout_ms, args)
            acc = results[label]
            acc["durations_ms"] += r["durations_ms"]
            acc["persisted"] += r["persisted"]
            acc["failed"] += r["failed"] + r["in_progress"]
            print(
                f"round {rnd + 1} {label}: {len(r['durations_ms'])} completed, durations {_s(r['durations_ms'])}, "
                f"persisted {_kb(r['persisted'])}, failed/pending {r['failed'] + r['in_progress']}",
                file=sys.stderr,
            )
    rows = [
        f"| {label} | {len(r['durations_ms'])} | {r['failed']} | {_s(r['durations_ms'])} | {_kb(r['persisted'])} |"
        for label, r in results.items()
    ]
    section = "\n".join(
        [
            BEGIN,
            "## Checkpoints under backpressure (unaligned, issue 29 §3)",
            "",
            f"Run: {dt.date.today().isoformat()} · `python benchmarks/unaligned.py --write-docs` · source "
            f"{args.rate:,} records/s ({args.payload} B payload) at p=2 → key-by → a sink ten times slower per record "
            f"at p=2 in another TaskManager; checkpoints every {args.interval} ms, EXACTLY_ONCE; {args.seconds:.0f} s "
            f"per run, {args.repeat} rounds, checkpoints triggered in the first {args.warmup:.0f} s left out. "
            "Duration = trigger → complete; persisted = in-flight data stored as channel state (all subtasks; "
            "`persisted_data` in the REST checkpoint statistics). *Before* runs the engine of the main branch before "
            "the change (the barrier overtook only the sender's subpartitions).",
            "",
            "| configuration | checkpoints completed | failed / unfinished | duration median / max"
            " | persisted median / max |",
            "|---|---|---|---|---|",
            *rows,
            END,
        ]
    )
    print(section)
    if args.write_docs:
        docs = ROOT / "docs" / "benchmarks.md"
        sys.path.insert(0, str(HERE))
        from bench import splice_section

        docs.write_text(splice_section(docs.read_text(), section, BEGIN, END))
    return 0


if __name__ == "__main__":
    sys.exit(main())
