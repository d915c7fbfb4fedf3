"""strom's data-plane benchmarks: W1 (stateless), W2 (keyed running reduce), latency.

    python benchmarks/bench.py                 # full run (N = 2M / 1M, 3 repeats), prints the tables
    python benchmarks/bench.py --quick         # smoke run: small N, 1 repeat, 2 s latency runs
    python benchmarks/bench.py --write-docs    # ... and rewrite docs/benchmarks.md (what `make bench` runs)
    python benchmarks/bench.py --verify-peers  # only compare our vendored generator with the peers' common.py

Each workload runs at parallelism 1 and 2 (one TaskManager process per slot) and as the *ceiling*: the same
generator and functions in a plain Python loop in this process. Job time is measured inside the job
(max(sink close) − min(source open), CLOCK_MONOTONIC); records/s = N / job time. The wall time of
``execute()`` (cluster start-up and teardown included) is reported beside it.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.util
import json
import os
import platform
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import workloads
from workloads import W1_KNOWN_COUNTS, ceiling_w1, ceiling_w2

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "benchmarks.md"
PEERS_COMMON = Path(os.environ.get("STROM_BENCH_PEERS", "/work/shared/bench/peers/common.py"))
NOTES_BEGIN = "<!-- notes: begin (hand-written; bench.py --write-docs keeps this section) -->"
NOTES_END = "<!-- notes: end -->"
# The section benchmarks/checkpoints.py writes (`make bench-checkpoints`). --write-docs here keeps it, and every other
# `<!-- name-benchmarks:begin -->` section (windows, Spark, instruction counts), as it is.
CHECKPOINTS_BEGIN = "<!-- checkpoint-benchmarks:begin -->"
CHECKPOINTS_END = "<!-- checkpoint-benchmarks:end -->"

# Targets of the data plane (issue 3).
TARGET_W1_RATIO = 0.5  # W1 p=1 ≥ 50 % of the ceiling
TARGET_W2_SCALING = 1.6  # W2 p=2 ≥ 1.6 × p=1
TARGET_P99_MS = 10.0  # latency p99 < 10 ms at 10k rec/s, buffer timeout 0

# Peers, as measured by /work/shared/bench/peers/*.py (their RESULTS.md, 2026-11-22: 2-vCPU Intel Xeon VM,
# CPython 3.11.7; 3 runs, median records/s by each system's job time). Their W2 is a 1 s tumbling event-time
# window per key (not our running reduce), listed for scale only.
PEERS_REF_W1 = 1_334_080  # ref.py W1 there: the peers' ceiling
PEERS: list[tuple[str, str, int, int, str]] = [
    # system, configuration, W1 rec/s, W2 (windowed) rec/s, start-up
    ("plain Python loop (ref.py)", "1 process", PEERS_REF_W1, 185_753, "0.2 s"),
    ("Bytewax 0.21.1", "1 worker", 750_360, 22_379, "0.2 s"),
    ("Bytewax 0.21.1", "2 processes (-p 2)", 815_209, 40_118, "1.4 s"),
    ("PyFlink 2.3.0", "thread mode, p=1", 102_072, 7_871, "4.3 s"),
    ("PyFlink 2.3.0", "thread mode, p=2", 59_923, 4_233, "4.2 s"),
    ("PyFlink 2.3.0", "process mode, p=1", 35_806, 375, "4.5 s"),
    ("PySpark 4.3.0", "Structured Streaming, local[1]", 108_792, 35_362, "7.5 s"),
    ("PySpark 4.3.0", "Structured Streaming, local[2]", 91_024, 33_342, "7.6 s"),
]


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def splice_section(text: str, section: str, begin: str, end: str) -> str:
    """Put ``section`` (which carries its own ``begin``/``end`` markers) in place of the text between those
    markers, or, the first time, before the notes section (else at the end)."""
    i, j = text.find(begin), text.find(end)
    if i >= 0 and j > i:
        return text[:i] + section + text[j + len(end) :]
    k = text.find("## Notes")
    if k < 0:
        k = text.find(NOTES_BEGIN)
    if k < 0:
        return text.rstrip("\n") + "\n\n" + section + "\n"
    return text[:k] + section + "\n\n" + text[k:]


# ---- the generator is the peers' --------------------------------------------------------------------------------
def verify_peers(path: Path = PEERS_COMMON) -> tuple[bool | None, str]:
    """Compare our vendored generator/functions/checksum with the peers' ``common.py``; None = not available."""
    if not path.is_file():
        return None, f"{path} not found; generator not compared"
    spec = importlib.util.spec_from_file_location("_peers_common", path)
    assert spec is not None and spec.loader is not None
    theirs = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(theirs)
    rng = random.Random(7)
    sample = [*range(1000), *(rng.randrange(0, 10**9) for _ in range(2000)), 2_000_000 - 1, 10**12]
    bad = []
    for name in ("SEED", "NKEYS", "BASE_MS", "MAX_DISORDER_MS", "KEYS"):
        if getattr(theirs, name) != getattr(workloads, name):
            bad.append(name)
    for i in sample:
        e = workloads.event(i)
        if e != theirs.event(i):
            bad.append(f"event({i})")
        elif workloads.w1_map(e) != theirs.w1_map(e) or workloads.w1_filter(e) != theirs.w1_filter(e):
            bad.append(f"w1 on event({i})")
        if len(bad) > 5:
            break
    ours_ck, their_ck = workloads.W2Checksum(), theirs.W2Checksum()
    for i in sample[:500]:
        _, k, v, ts = workloads.event(i)
        ours_ck.add(k, ts - ts % 1000, v, 1)
        their_ck.add(k, ts - ts % 1000, v, 1)
    if ours_ck.as_dict() != their_ck.as_dict():
        bad.append("W2Checksum")
    if bad:
        return False, f"differs from {path}: {', '.join(bad[:6])}"
    return True, f"identical to {path} (constants, event/w1_map/w1_filter on {len(sample)} indices, W2Checksum)"


# ---- measurement ------------------------------------------------------------------------------------------------
@dataclass
class Series:
    """Repeated runs of one configuration."""

    workload: str
    config: str
    n: int
    job_s: list[float] = field(default_factory=list)
    wall_s: list[float] = field(default_factory=list)
    results: list[dict[str, Any]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    wrong: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return bool(self.job_s) and not self.errors and not self.wrong

    def rate_median(self) -> float | None:
        return self.n / statistics.median(self.job_s) if self.job_s else None

    def rate_best(self) -> float | None:
        return self.n / min(self.job_s) if self.job_s else None


@dataclass
class LatencySeries:
    buffer_timeout_ms: int
    rate: float
    seconds: float
    p50_ms: list[float] = field(default_factory=list)
    p99_ms: list[float] = field(default_factory=list)
    max_ms: list[float] = field(default_factory=list)
    records: list[int] = field(default_factory=list)
    pids: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    wrong: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return bool(self.p99_ms) and not self.errors and not self.wrong


def _median(xs: list[float]) -> float | None:
    return statistics.median(xs) if xs else None


def _percentile(sorted_xs: list[int], q: float) -> int:
    """Nearest-rank percentile of an ascending list."""
    k = max(0, min(len(sorted_xs) - 1, int(-(-q * len(sorted_xs) // 1)) - 1))
    return sorted_xs[k]


def _fresh_dir(tag: str) -> str:
    return tempfile.mkdtemp(prefix=f"strom-bench-{tag}-")


def measure_ceiling(series: Series, fn: Callable[[int], dict[str, int]]) -> None:
    t0 = time.monotonic_ns()
    result = fn(series.n)
    dt_s = (time.monotonic_ns() - t0) / 1e9
    series.job_s.append(dt_s)
    series.wall_s.append(dt_s)
    series.results.append(result)
    log(f"  {series.workload} {series.config:<10} {dt_s:7.2f} s  {series.n / dt_s:>12,.0f} rec/s  {result}")


def measure_job(series: Series, run: Callable[[str], Any], expected: dict[str, int]) -> None:
    out_dir = _fresh_dir(f"{series.workload}-{series.config}".replace(" ", "").replace("=", ""))
    try:
        r = run(out_dir)
    except Exception as exc:  # a broken engine is a finding, not a crash of the benchmark
        msg = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        series.errors.append(msg)
        log(f"  {series.workload} {series.config:<10} FAILED: {msg}")
        return
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)
    series.job_s.append(r.job_s)
    series.wall_s.append(r.wall_s)
    got = {k: r.result.get(k) for k in expected}
    series.results.append(r.result)
    if got != expected:
        series.wrong.append(f"expected {expected}, got {got}")
    pids = sorted({p["pid"] for p in r.sources} | {p["pid"] for p in r.sinks})
    opens = [p["t_open"] for p in r.sources]
    closes = [p["t_close"] for p in r.sinks]
    skew = f"; subtasks opened within {(max(opens) - min(opens)) / 1e6:.0f} ms" if len(opens) > 1 else ""
    skew += f", sinks closed within {(max(closes) - min(closes)) / 1e6:.0f} ms" if len(closes) > 1 else ""
    flag = "" if got == expected else f"  WRONG RESULT: expected {expected}"
    log(
        f"  {series.workload} {series.config:<10} {r.job_s:7.2f} s  {series.n / r.job_s:>12,.0f} rec/s"
        f"  (execute() {r.wall_s:.2f} s, TaskManager pids {pids}{skew})  {got}{flag}"
    )


def measure_latency(ls: LatencySeries, warmup_s: float, timeout_s: float) -> None:
    from jobs import run_latency

    out_dir = _fresh_dir(f"latency-bt{ls.buffer_timeout_ms}")
    try:
        r = run_latency(ls.rate, ls.seconds, ls.buffer_timeout_ms, out_dir, timeout_s)
    except Exception as exc:
        msg = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        ls.errors.append(msg)
        log(f"  latency bt={ls.buffer_timeout_ms} FAILED: {msg}")
        return
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)
    total = max(1, int(ls.rate * ls.seconds))
    seqs = [s for p in r.sinks for s in p["seqs"]]
    lat = [x for p in r.sinks for x in p["lat_ns"]]
    if sorted(seqs) != list(range(total)):
        ls.wrong.append(f"expected records 0..{total - 1} once each, got {len(seqs)} records")
    skip = int(ls.rate * warmup_s)
    kept = sorted(x for s, x in zip(seqs, lat, strict=True) if s >= skip)
    src_pids = {p["pid"] for p in r.sources}
    sink_pids = {p["pid"] for p in r.sinks}
    apart = src_pids.isdisjoint(sink_pids)
    if not apart:
        ls.wrong.append(f"source and sink ran in the same process {src_pids & sink_pids}")
    ls.pids.append(f"{sorted(src_pids)}→{sorted(sink_pids)}")
    if not kept:
        ls.wrong.append("no records after the warm-up")
        return
    p50, p99, mx = (_percentile(kept, 0.5) / 1e6, _percentile(kept, 0.99) / 1e6, kept[-1] / 1e6)
    ls.p50_ms.append(p50)
    ls.p99_ms.append(p99)
    ls.max_ms.append(mx)
    ls.records.append(len(kept))
    log(
        f"  latency bt={ls.buffer_timeout_ms:<3} {len(kept)} records after {warmup_s} s warm-up: p50 {p50:.2f} ms,"
        f" p99 {p99:.2f} ms, max {mx:.2f} ms; source pid {sorted(src_pids)}, sink pid {sorted(sink_pids)}"
        f" ({'different' if apart else 'SAME'} processes; engine: {r.task_pids}); execute() {r.wall_s:.2f} s"
    )


# ---- report -----------------------------------------------------------------------------------------------------
def _num(x: float) -> str:
    """12 345 678: thousands separated by spaces, as in the peers' RESULTS.md."""
    return f"{x:,.0f}".replace(",", " ")


def _fmt_rate(x: float | None) -> str:
    return "—" if x is None else _num(x)


def _fmt_s(xs: list[float]) -> str:
    return "—" if not xs else f"{min(xs):.2f} / {statistics.median(xs):.2f}"


def _fmt_ms(x: float | None) -> str:
    return "—" if x is None else f"{x:.2f}"


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def _status(s: Series) -> str:
    if s.errors:
        return "FAILED: " + s.errors[0]
    if s.wrong:
        return "WRONG: " + s.wrong[0]
    return "ok" if s.job_s else "not run"


@dataclass
class Report:
    args: argparse.Namespace
    started: dt.datetime
    peers: tuple[bool | None, str]
    series: dict[tuple[str, str], Series]
    latency: list[LatencySeries]

    def get(self, workload: str, config: str) -> Series | None:
        return self.series.get((workload, config))

    def throughput_rows(self) -> list[list[str]]:
        rows = []
        for (w, cfg), s in self.series.items():
            ceil = self.get(w, "ceiling")
            p1 = self.get(w, "p=1")
            r = s.rate_median()
            vs_ceiling = _ratio(r, ceil.rate_median() if ceil and ceil.ok else None) if cfg != "ceiling" else None
            vs_p1 = _ratio(r, p1.rate_median() if p1 and p1.ok else None) if cfg == "p=2" else None
            rows.append(
                [
                    w,
                    "plain loop (ceiling)" if cfg == "ceiling" else f"strom {cfg}",
                    _num(s.n),
                    _fmt_s(s.job_s),
                    _fmt_rate(r),
                    _fmt_rate(s.rate_best()),
                    _fmt_s(s.wall_s) if cfg != "ceiling" else "—",
                    "—" if vs_ceiling is None else f"{vs_ceiling:.0%}",
                    "—" if vs_p1 is None else f"{vs_p1:.2f}×",
                    _status(s),
                ]
            )
        return rows

    def latency_rows(self) -> list[list[str]]:
        rows = []
        for ls in self.latency:
            status = (
                ("FAILED: " + ls.errors[0])
                if ls.errors
                else ("WRONG: " + ls.wrong[0])
                if ls.wrong
                else ("ok" if ls.p99_ms else "not run")
            )
            rows.append(
                [
                    f"{ls.buffer_timeout_ms} ms",
                    _num(ls.rate),
                    str(_median([float(x) for x in ls.records]) or "—").removesuffix(".0"),
                    _fmt_ms(_median(ls.p50_ms)),
                    _fmt_ms(_median(ls.p99_ms)),
                    _fmt_ms(min(ls.p99_ms) if ls.p99_ms else None),
                    _fmt_ms(_median(ls.max_ms)),
                    "; ".join(dict.fromkeys(ls.pids)) or "—",
                    status,
                ]
            )
        return rows

    def targets(self) -> list[tuple[str, str, str]]:
        out = []
        c, p1 = self.get("W1", "ceiling"), self.get("W1", "p=1")
        r = _ratio(p1.rate_median(), c.rate_median()) if c and p1 and c.ok and p1.ok else None
        out.append(
            (
                f"W1 p=1 ≥ {TARGET_W1_RATIO:.0%} of the ceiling",
                "—" if r is None else f"{r:.0%}",
                "not measured" if r is None else ("**met**" if r >= TARGET_W1_RATIO else "**missed**"),
            )
        )
        p1, p2 = self.get("W2", "p=1"), self.get("W2", "p=2")
        r = _ratio(p2.rate_median(), p1.rate_median()) if p1 and p2 and p1.ok and p2.ok else None
        out.append(
            (
                f"W2 p=2 ≥ {TARGET_W2_SCALING}× p=1",
                "—" if r is None else f"{r:.2f}×",
                "not measured" if r is None else ("**met**" if r >= TARGET_W2_SCALING else "**missed**"),
            )
        )
        lat0 = next((ls for ls in self.latency if ls.buffer_timeout_ms == 0 and ls.ok), None)
        rate = _num(self.args.rate)
        p99 = _median(lat0.p99_ms) if lat0 else None
        out.append(
            (
                f"p99 latency < {TARGET_P99_MS:g} ms at {rate} rec/s, buffer timeout 0",
                "—" if p99 is None else f"{p99:.2f} ms",
                "not measured" if p99 is None else ("**met**" if p99 < TARGET_P99_MS else "**missed**"),
            )
        )
        return out


THROUGHPUT_HEADER = [
    "workload",
    "run",
    "N",
    "job s (min / med)",
    "rec/s (med)",
    "rec/s (best)",
    "execute() s (min / med)",
    "of ceiling",
    "p=2 / p=1",
    "result",
]
LATENCY_HEADER = [
    "buffer timeout",
    "rate (rec/s)",
    "records measured",
    "p50 ms",
    "p99 ms",
    "p99 ms (best run)",
    "max ms",
    "pid source → sink",
    "result",
]


def text_table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    return "\n".join(lines)


def md_table(header: list[str], rows: list[list[str]] | list[tuple[str, ...]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
    return "\n".join(lines)


def machine() -> dict[str, str]:
    info: dict[str, str] = {}
    try:
        cpuinfo = Path("/proc/cpuinfo").read_text()
        models = [ln.split(":", 1)[1].strip() for ln in cpuinfo.splitlines() if ln.startswith("model name")]
        info["cpu"] = f"{models[0] if models else platform.processor() or '?'} × {os.cpu_count()}"
    except OSError:
        info["cpu"] = f"{platform.processor() or '?'} × {os.cpu_count()}"
    try:
        meminfo = Path("/proc/meminfo").read_text()
        kb = int(next(ln.split()[1] for ln in meminfo.splitlines() if ln.startswith("MemTotal:")))
        info["ram"] = f"{kb / 2**20:.1f} GiB"
    except (OSError, StopIteration, ValueError):
        info["ram"] = "?"
    info["python"] = f"{platform.python_implementation()} {platform.python_version()}"
    os_name = platform.system()
    try:
        for ln in Path("/etc/os-release").read_text().splitlines():
            if ln.startswith("PRETTY_NAME="):
                os_name = ln.split("=", 1)[1].strip('"')
    except OSError:
        pass
    info["os"] = f"{os_name}, kernel {platform.release()}"
    try:
        head = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no", "strom"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        info["commit"] = head + (" + uncommitted changes in strom/" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        info["commit"] = "?"
    return info


def command_line() -> str:
    return "python benchmarks/bench.py " + " ".join(sys.argv[1:])


DEFAULT_NOTES = """\
_Hand-written notes (profiles, anomalies, the machine's load during the run) go here; `bench.py --write-docs`
keeps everything between these markers._
"""


def render_docs(rep: Report, notes: str, checkpoints: str = "") -> str:
    a = rep.args
    m = machine()
    load = os.getloadavg()
    ok, peers_msg = rep.peers
    lines = [
        "# Data-plane benchmarks",
        "",
        "<!-- Generated by `make bench` (benchmarks/bench.py --write-docs); edit only the notes section. -->",
        "",
        "Throughput of two workloads on strom — W1 stateless (map → filter), W2 keyed (running reduce of"
        " (sum, count) per key) — at parallelism 1 and 2, against the *ceiling*: the same generator and functions"
        " in a plain Python loop in one process, measured in the same run; and the end-to-end latency of records"
        " crossing from one TaskManager process to another at a fixed rate.",
        "",
        "## Run",
        "",
        f"- **Date:** {rep.started:%Y-%m-%d %H:%M} UTC"
        + (" — **quick smoke run, not a measurement**" if a.quick else ""),
        f"- **Command:** `{command_line()}`" + (" (`make bench`)" if a.write_docs and not a.quick else ""),
        f"- **Machine:** {m['cpu']}, {m['ram']} RAM; {m['os']}; {m['python']}; load average at start"
        f" {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f}",
        f"- **strom:** commit {m['commit']}",
        f"- **N:** W1 {_num(a.n_w1)} events, W2 {_num(a.n_w2)} events; {a.repeat} run(s) per configuration,"
        " min / median reported; records/s = N / job time (median run, and best run).",
        f"- **Generator:** `benchmarks/workloads.py`, vendored from the peers' `common.py`;"
        f" {'verified: ' + peers_msg if ok else ('**MISMATCH**: ' + peers_msg if ok is False else peers_msg)}.",
        "",
        "## Workloads",
        "",
        "- **W1** `from_sequence(0, N−1).map(event).map(w1_map).filter(w1_filter).sink_to(counting sink)` — one"
        " chain per subtask; the sink's `write_batch` counts `len(batch)`. Expected output: the ceiling's count"
        " (1 332 174 of 2 M, as every peer system).",
        "- **W2** `… .map(event).map(lambda e: (key, value, 1)).key_by(key).reduce((k, s₁+s₂, c₁+c₂))"
        ".sink_to(counting sink)` — the key_by is a network edge (in-process hand-over at p=1, TCP between"
        " the two TaskManagers at p=2); the sink's `write_batch` counts `len(batch)` and adds up the running"
        " counts `v[2]`. Checked: N records out and Σ of the running counts = Σ_k c_k(c_k+1)/2 of the plain"
        " loop (c_k = events of key k; the sink subtasks' parts add up).",
        "- **Job time** = max(sink writer `close()`) − min(first map's `open()`), CLOCK_MONOTONIC stamps written"
        " by the subtasks; **execute()** = wall time of the call, with MiniCluster and TaskManager start-up"
        " and teardown. At p=2 the MiniCluster starts two TaskManager processes (one slot each).",
        f"- **Latency**: a non-parallel source emits `(seq, monotonic_ns())` paced at {_num(a.rate)} records/s for"
        f" {a.latency_seconds:g} s; `map(now − stamp)` and the sink run in slot-sharing group `sink`, i.e. in a"
        f" second TaskManager process (the pids are checked), so every record crosses TCP. The first"
        f" {a.warmup:g} s are discarded as warm-up.",
        "",
        "## Throughput",
        "",
        md_table(THROUGHPUT_HEADER, rep.throughput_rows()) if rep.series else "_Not run (`--only`)._",
        "",
        "## Latency",
        "",
        md_table(LATENCY_HEADER, rep.latency_rows()) if rep.latency else "_Not run (`--only`)._",
        "",
        "Percentiles are the median over the runs (nearest rank within a run).",
        "",
        "## Targets",
        "",
        md_table(["target", "measured", "status"], rep.targets()),
        "",
        *peers_section(),
        "",
        *([checkpoints.strip("\n"), ""] if checkpoints else []),
        "## Notes",
        "",
        NOTES_BEGIN,
        notes.strip("\n"),
        NOTES_END,
        "",
    ]
    return "\n".join(lines)


def peers_section() -> list[str]:
    rows = [
        [system, cfg, _num(w1), f"{w1 / PEERS_REF_W1:.0%}", _num(w2), start] for system, cfg, w1, w2, start in PEERS
    ]
    return [
        "## Peers, for context",
        "",
        "Measured by the scripts in `/work/shared/bench/peers/` (`ref.py`, `bw_w*.py`, `pf_w*.py`, `sp_w*.py`)"
        " with the same generator, as reported in their `RESULTS.md` (2026-11-22, 2-vCPU Intel Xeon VM,"
        " CPython 3.11.7): median of 3 runs, records/s by each system's job time (start-up excluded; N = 1 M"
        " for PyFlink and Spark W1). Absolute rates depend on the machine — compare the *share of the ceiling*"
        " (their `ref.py` loop) with ours. Their W2 is a 1 s tumbling event-time window per key, heavier than"
        " our running reduce, so only W1 compares directly.",
        "",
        md_table(["system", "configuration", "W1 rec/s", "W1 of ref.py", "W2 (windowed) rec/s", "start-up"], rows),
    ]


def read_notes(path: Path) -> str:
    try:
        text = path.read_text()
    except OSError:
        return DEFAULT_NOTES
    i, j = text.find(NOTES_BEGIN), text.find(NOTES_END)
    if i < 0 or j < i:
        return DEFAULT_NOTES
    return text[i + len(NOTES_BEGIN) : j]


def read_checkpoint_section(path: Path) -> str:
    """The sections of ``path`` other scripts write (``<!-- name-benchmarks:begin -->`` … ``end``: windows,
    checkpoints, Spark, instruction counts), markers included, in their order."""
    try:
        text = path.read_text()
    except OSError:
        return ""
    return "\n\n".join(m.group(0) for m in _OTHER_SECTION.finditer(text))


_OTHER_SECTION = re.compile(r"<!-- ([a-z-]+)-benchmarks:begin -->.*?<!-- \1-benchmarks:end -->", re.S)


# ---- main -------------------------------------------------------------------------------------------------------
def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=int, help="events for both W1 and W2 (default: W1 2 000 000, W2 1 000 000)")
    p.add_argument("--n-w1", type=int, help="events for W1")
    p.add_argument("--n-w2", type=int, help="events for W2")
    p.add_argument("--repeat", type=int, help="runs per configuration (default 3)")
    p.add_argument("--only", default="w1,w2,latency", help="comma-separated subset of w1,w2,latency")
    p.add_argument("--parallelism", default="1,2", help="engine parallelisms to run (default 1,2)")
    p.add_argument("--quick", action="store_true", help="smoke run: N 100k/50k, 1 repeat, 2 s latency runs")
    p.add_argument("--rate", type=float, default=10_000, help="latency source rate, records/s (default 10000)")
    p.add_argument("--latency-seconds", type=float, help="length of a latency run (default 5 s)")
    p.add_argument("--warmup", type=float, default=0.5, help="seconds discarded at the start of a latency run")
    p.add_argument("--buffer-timeouts", default="0,100", help="buffer timeouts (ms) of the latency runs")
    p.add_argument("--timeout", type=float, default=300, help="cancel a job after this many seconds")
    p.add_argument("--write-docs", action="store_true", help=f"rewrite {DOCS.relative_to(ROOT)}")
    p.add_argument("--json", metavar="PATH", help="also write the raw figures as JSON")
    p.add_argument("--verify-peers", action="store_true", help="only compare the generator with the peers' copy")
    a = p.parse_args(argv)
    a.repeat = a.repeat or (1 if a.quick else 3)
    a.n_w1 = a.n_w1 or a.n or (100_000 if a.quick else 2_000_000)
    a.n_w2 = a.n_w2 or a.n or (50_000 if a.quick else 1_000_000)
    a.latency_seconds = a.latency_seconds or (2.0 if a.quick else 5.0)
    a.only = {x.strip().lower() for x in a.only.split(",") if x.strip()}
    unknown = a.only - {"w1", "w2", "latency"}
    if unknown:
        p.error(f"--only expects w1, w2, latency; got {', '.join(sorted(unknown))}")
    a.parallelism = [int(x) for x in a.parallelism.split(",") if x.strip()]
    a.buffer_timeouts = [int(x) for x in a.buffer_timeouts.split(",") if x.strip()]
    return a


def main(argv: list[str] | None = None) -> int:
    a = parse_args(argv)
    peers = verify_peers()
    log(f"generator: {peers[1]}")
    if a.verify_peers:
        return 0 if peers[0] else 1
    if peers[0] is False:
        log("refusing to measure with a generator that differs from the peers'")
        return 1

    from jobs import run_w1, run_w2  # imports strom

    started = dt.datetime.now(dt.UTC)
    series: dict[tuple[str, str], Series] = {}
    plan = [
        ("W1", a.n_w1, ceiling_w1, run_w1, "w1"),
        ("W2", a.n_w2, ceiling_w2, run_w2, "w2"),
    ]
    for w, n, _ceiling, _run, key in plan:
        if key not in a.only:
            continue
        series[(w, "ceiling")] = Series(w, "ceiling", n)
        for p in a.parallelism:
            series[(w, f"p={p}")] = Series(w, f"p={p}", n)
    latency = [LatencySeries(bt, a.rate, a.latency_seconds) for bt in a.buffer_timeouts] if "latency" in a.only else []

    for rep in range(a.repeat):
        log(f"== run {rep + 1} of {a.repeat}")
        for w, n, ceiling, run, key in plan:
            if key not in a.only:
                continue
            measure_ceiling(series[(w, "ceiling")], ceiling)
            expected = dict(series[(w, "ceiling")].results[-1])
            if w == "W1" and n in W1_KNOWN_COUNTS and expected["records"] != W1_KNOWN_COUNTS[n]:
                series[(w, "ceiling")].wrong.append(f"expected {W1_KNOWN_COUNTS[n]} records as the peers")
            for p in a.parallelism:

                def job(out_dir: str, run: Any = run, n: int = n, p: int = p) -> Any:
                    return run(n, p, out_dir, a.timeout)

                measure_job(series[(w, f"p={p}")], job, expected)
        for ls in latency:
            measure_latency(ls, a.warmup, a.timeout)

    rep_ = Report(a, started, peers, series, latency)
    print()
    if series:
        print(text_table(THROUGHPUT_HEADER, rep_.throughput_rows()))
        print()
    if latency:
        print(text_table(LATENCY_HEADER, rep_.latency_rows()))
        print()
    print(text_table(["target", "measured", "status"], [list(t) for t in rep_.targets()]).replace("**", ""))
    if a.json:
        Path(a.json).write_text(
            json.dumps(
                {
                    "started": started.isoformat(),
                    "args": {k: sorted(v) if isinstance(v, set) else v for k, v in vars(a).items()},
                    "series": [vars(s) for s in series.values()],
                    "latency": [vars(ls) for ls in latency],
                },
                indent=1,
            )
        )
    if a.write_docs:
        DOCS.write_text(render_docs(rep_, read_notes(DOCS), read_checkpoint_section(DOCS)))
        log(f"wrote {DOCS}")
    failed = [s for s in series.values() if not s.ok] + [ls for ls in latency if not ls.ok]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
