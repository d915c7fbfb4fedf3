"""What watching a job costs: W2 (windows.py's 1 s tumbling event-time windows) with and without a dashboard
polling the REST API and Prometheus scraping every TaskManager and the JobManager, every second.

    python benchmarks/service_overhead.py                 # N = 3M events, 6 rounds, p=1 and p=2
    python benchmarks/service_overhead.py --quick         # smoke run
    python benchmarks/service_overhead.py --write-docs    # ... and its section of docs/benchmarks.md

*Watched* runs configure Flink's Prometheus reporter (``metrics.reporter.prom.*``, a free port per process) and start,
once the job is submitted, a poller process (a browser and a Prometheus server are processes of their own) that every
second — counted from the end of its previous poll, as the dashboard's refresh loop (``strom/web/dashboard/app.js``)
does — GETs what the dashboard's job page reads, and more: ``/overview``, ``/jobs/overview``, ``/jobs/:id``,
``/jobs/:id/checkpoints``, and per vertex ``/vertices/:vid``, ``/subtasks/metrics?get=busyTimeMsPerSecond,
backPressuredTimeMsPerSecond``, ``/watermarks`` and ``/backpressure``; and scrapes ``/metrics`` of the JobManager and
every TaskManager every second, parsed with ``prometheus_client``'s parser. *Plain* runs configure no reporter and
nobody polls (the REST server is up in both: the MiniCluster always starts it). Events/s = N / in-job time (first
source open → last sink close), checksums checked against ``ref.py``'s. Each round runs plain and watched once per
parallelism, in an order that alternates from round to round (ABBA); the ratio watched / plain is taken within a
round and the median (min–max) over the rounds is reported.
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
import threading
import time
import urllib.error
import urllib.request
from collections import defaultdict
from datetime import timedelta
from typing import Any

from bench import DOCS, log, machine, md_table, splice_section, text_table
from jobs import JobRun, TimedMap, _execute
from windows import FoldSink, Interleaved, SumCount, WithStart, job_checksum, ref_w2

SECTION_BEGIN = "<!-- service-benchmarks:begin -->"
SECTION_END = "<!-- service-benchmarks:end -->"
TARGET = 0.95  # issue 20: watched W2 within 5 % of plain
POLL_INTERVAL_S = 1.0
WATCH = ("rest", "prometheus")
PROMETHEUS = {
    "metrics.reporter.prom.factory.class": "org.apache.flink.metrics.prometheus.PrometheusReporterFactory",
    "metrics.reporter.prom.port": "0",
}


# ---- the poller: a process of its own, as a browser and a Prometheus server are ----------------------------------
def _get(url: str) -> bytes:
    """The body; a 404 is an answer too (``/checkpoints`` of a job without checkpointing answers 404, as Flink's)."""
    try:
        with urllib.request.urlopen(url, timeout=10) as resp:
            return bytes(resp.read())
    except urllib.error.HTTPError as exc:
        if exc.code != 404:
            raise
        return bytes(exc.read())


def _rest_poll(rest: str, job_id: str) -> int:
    """One tick of the dashboard (a superset of its job page's): the number of GETs made."""
    job = f"{rest}/jobs/{job_id}"
    paths = [f"{rest}/overview", f"{rest}/jobs/overview", f"{job}/checkpoints"]
    details = json.loads(_get(job))
    for v in details.get("vertices", []):
        vertex = f"{job}/vertices/{v['id']}"
        paths += [
            vertex,
            f"{vertex}/subtasks/metrics?get=busyTimeMsPerSecond,backPressuredTimeMsPerSecond",
            f"{vertex}/watermarks",
            f"{vertex}/backpressure",
        ]
    for p in paths:
        _get(p)
    return 1 + len(paths)


def _scrape(urls: list[str]) -> int:
    """One Prometheus scrape of every endpoint, parsed: the number of samples."""
    from prometheus_client.parser import text_string_to_metric_families

    samples = 0
    for url in urls:
        for family in text_string_to_metric_families(_get(url).decode()):
            samples += len(family.samples)
    return samples


def _every_second(name: str, tick: Any, stats: dict[str, Any], stop: threading.Event) -> None:
    while not stop.is_set():
        t0 = time.perf_counter()
        try:
            stats[name + "_units"] += tick()
            stats[name + "_ticks"] += 1
        except Exception as exc:  # the job ended under a poll: counted, not fatal
            stats[name + "_errors"] += 1
            stats[name + "_last_error"] = repr(exc)
        stats[name + "_seconds"] += time.perf_counter() - t0
        stop.wait(POLL_INTERVAL_S)


def poller_main(rest: str, job_id: str, metric_urls: list[str]) -> None:
    """Poll (``rest`` "-": no REST polling; no metric URLs: no scrapes) until stdin closes; then print the counts
    and the poller's own CPU time as JSON."""
    stats: dict[str, Any] = defaultdict(float)
    stop = threading.Event()
    threads = []
    if rest != "-":
        threads.append(
            threading.Thread(target=_every_second, args=("rest", lambda: _rest_poll(rest, job_id), stats, stop))
        )
    if metric_urls:
        threads.append(
            threading.Thread(target=_every_second, args=("prometheus", lambda: _scrape(metric_urls), stats, stop))
        )
    cpu = time.process_time()
    for t in threads:
        t.start()
    sys.stdin.read()
    stop.set()
    for t in threads:
        t.join()
    stats["poller_cpu_s"] = time.process_time() - cpu
    print(json.dumps(stats))


class Poller:
    """The poller process of one watched run."""

    def __init__(self, rest: str, job_id: str, metric_urls: list[str], watch: set[str]) -> None:
        rest = rest if "rest" in watch else "-"
        metric_urls = metric_urls if "prometheus" in watch else []
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--poll", rest, job_id, *metric_urls],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def stop(self) -> dict[str, Any]:
        out, _ = self.proc.communicate("", timeout=60)
        return dict(json.loads(out))


# ---- W2, plain or watched ------------------------------------------------------------------------------------------
def run_w2(
    n: int, p: int, out_dir: str, timeout_s: float, *, watched: bool, watch: frozenset[str] = frozenset(WATCH)
) -> tuple[JobRun, dict[str, Any]]:
    from strom import Configuration, StreamExecutionEnvironment, TumblingEventTimeWindows, WatermarkStrategy
    from strom.client.job_client import JobClient

    reporter = watched and "prometheus" in watch
    conf = Configuration({"taskmanager.numberOfTaskSlots": 1, **(PROMETHEUS if reporter else {})})
    env = StreamExecutionEnvironment.get_execution_environment(conf)
    env.set_parallelism(p)
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(timedelta(milliseconds=200)).with_timestamp_assigner(
        lambda e, ts: e[3]
    )
    (
        env.from_sequence(0, n - 1)
        .map(TimedMap(Interleaved(n, p), out_dir))
        .assign_timestamps_and_watermarks(strategy)
        .key_by(lambda e: e[1])
        .window(TumblingEventTimeWindows.of(timedelta(seconds=1)))
        .aggregate(SumCount(), WithStart())
        .sink_to(FoldSink(out_dir, "w2"))
    )
    pollers: list[Poller] = []
    submitted: list[float] = []  # this process's CPU time once the job is submitted (cluster start-up excluded)
    original = StreamExecutionEnvironment.execute_async

    def execute_async(self: StreamExecutionEnvironment, job_name: str | None = None) -> JobClient:
        client = original(self, job_name)
        if watched:
            urls = client.get_metric_urls()
            assert not reporter or len(urls) == p + 1, f"expected a Prometheus endpoint per process; got {urls}"
            pollers.append(Poller(client.get_rest_url(), client.get_job_id(), list(urls.values()), set(watch)))
        submitted.append(time.process_time())
        return client

    env.execute_async = execute_async.__get__(env)  # type: ignore[method-assign]
    try:
        job = _execute(env, f"bench W2 p={p}{' watched' if watched else ''}", out_dir, timeout_s)
        # this process hosts the JobManager (its REST server, its Prometheus endpoint): CPU from submission to the end
        jm_cpu = time.process_time() - submitted[0]
    finally:
        stats = pollers[0].stop() if pollers else {}
    return job, {**stats, "jobmanager_cpu_s": jm_cpu}


def measure(n: int, repeat: int, timeout_s: float, parallelisms: list[int], watch: frozenset[str]) -> dict[str, Any]:
    rates: dict[tuple[int, bool], list[float]] = defaultdict(list)
    #: CPU seconds per event of the TaskManager processes, of the JobManager's (this) process, and of the poller
    cpu: dict[tuple[int, bool, str], list[float]] = defaultdict(list)
    polls: dict[int, list[dict[str, Any]]] = defaultdict(list)
    ok = True
    expected = ref_w2(n)
    for i in range(repeat):
        for p in parallelisms:
            order = [False, True] if (i + p) % 2 == 0 else [True, False]
            for watched in order:
                with tempfile.TemporaryDirectory(prefix="strom-bench-") as out:
                    r, stats = run_w2(n, p, out, timeout_s, watched=watched, watch=watch)
                    same = job_checksum("w2", r) == expected
                ok = ok and same
                rates[(p, watched)].append(n / r.job_s)
                assert r.cpu_s is not None, "the W2 parts carry CPU stamps"
                cpu[(p, watched, "taskmanagers")].append(r.cpu_s / n)
                cpu[(p, watched, "jobmanager")].append(stats["jobmanager_cpu_s"] / n)
                cpu[(p, watched, "poller")].append(stats.get("poller_cpu_s", 0.0) / n)
                if watched:
                    polls[p].append({**stats, "job_s": r.job_s})
                what = "watched" if watched else "plain  "
                line = f"round {i + 1}/{repeat} p={p} {what}: {n / r.job_s:,.0f} ev/s (job {r.job_s:.1f} s) checksum "
                jm_note = f"; JobManager process {stats['jobmanager_cpu_s'] / r.job_s:.1%} of a core"
                log(line + ("ok" if same else "DIFFERS") + jm_note + (_poll_note(stats, r.job_s) if watched else ""))
    return {"rates": rates, "cpu": cpu, "polls": polls, "ok": ok}


def _poll_note(stats: dict[str, Any], job_s: float) -> str:
    failed = stats.get("rest_errors", 0) + stats.get("prometheus_errors", 0)
    error = stats.get("rest_last_error") or stats.get("prometheus_last_error") or ""
    note = f"; {stats.get('rest_units', 0):.0f} REST GETs, {stats.get('prometheus_ticks', 0):.0f} scrapes"
    note += f", poller {stats.get('poller_cpu_s', 0) / job_s:.1%} of a core"
    return note + (f" ({failed:.0f} failed: {error})" if failed else "")


def paired(num: list[float], den: list[float]) -> tuple[float, float, float]:
    ratios = [a / b for a, b in zip(num, den, strict=True)]
    return statistics.median(ratios), min(ratios), max(ratios)


def _met(ok: bool) -> str:
    return "met" if ok else "not met"


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):,.0f} ({min(values):,.0f}–{max(values):,.0f})"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--n", type=int)
    ap.add_argument("--repeat", type=int)
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--write-docs", action="store_true")
    ap.add_argument("--watch", default=",".join(WATCH), help="what watches: rest, prometheus or both (profiling)")
    ap.add_argument("--parallelism", default="1,2", help="the parallelisms measured")
    ap.add_argument("--poll", nargs="+", help=argparse.SUPPRESS)  # the poller process: REST URL, job id, metric URLs
    a = ap.parse_args(argv)
    if a.poll:
        poller_main(a.poll[0], a.poll[1], a.poll[2:])
        return
    n = a.n or (300_000 if a.quick else 3_000_000)
    repeat = a.repeat or (1 if a.quick else 6)
    load_before = os.getloadavg()
    parallelisms = [int(x) for x in a.parallelism.split(",")]
    result = measure(n, repeat, a.timeout, parallelisms, frozenset(w.strip() for w in a.watch.split(",")))
    load_after = os.getloadavg()
    rows: list[list[str]] = []
    targets: list[list[str]] = []
    for p in parallelisms:
        plain, watched = result["rates"][(p, False)], result["rates"][(p, True)]
        med, lo, hi = paired(watched, plain)
        polls = result["polls"][p]
        gets = statistics.median(s.get("rest_units", 0) / s["job_s"] for s in polls)
        scrapes = statistics.median(s.get("prometheus_ticks", 0) / s["job_s"] for s in polls)
        samples = statistics.median(s.get("prometheus_units", 0) / max(1, s.get("prometheus_ticks", 0)) for s in polls)
        rest_ms = statistics.median(1000 * s.get("rest_seconds", 0) / max(1, s.get("rest_ticks", 0)) for s in polls)
        failed = sum(s.get("rest_errors", 0) + s.get("prometheus_errors", 0) for s in polls)
        c = result["cpu"]
        tm_ratio, tm_lo, tm_hi = paired(c[(p, True, "taskmanagers")], c[(p, False, "taskmanagers")])
        plain_total = [t + j for t, j in zip(c[(p, False, "taskmanagers")], c[(p, False, "jobmanager")], strict=True)]
        extra = [
            (t + j + q) / base - 1
            for t, j, q, base in zip(
                c[(p, True, "taskmanagers")],
                c[(p, True, "jobmanager")],
                c[(p, True, "poller")],
                plain_total,
                strict=True,
            )
        ]
        jm_us = statistics.median(c[(p, True, "jobmanager")]) * 1e6
        jm_plain_us = statistics.median(c[(p, False, "jobmanager")]) * 1e6
        poller_us = statistics.median(c[(p, True, "poller")]) * 1e6
        rows.append(
            [
                f"W2 p={p}",
                spread(plain),
                spread(watched),
                f"{med:.3f} ({lo:.3f}–{hi:.3f})",
                f"{gets:.1f} GETs/s ({rest_ms:.0f} ms per poll)",
                f"{scrapes:.2f}/s × {p + 1} endpoints ({samples:.0f} samples)",
                f"{tm_ratio:.3f} ({tm_lo:.3f}–{tm_hi:.3f})",
                f"{jm_plain_us:.3f} → {jm_us:.3f} µs; poller {poller_us:.3f} µs",
                f"{statistics.median(extra):+.1%} ({min(extra):+.1%}–{max(extra):+.1%})",
                f"{failed:.0f}",
            ]
        )
        targets.append(
            [
                f"W2 p={p} watched ≥ 95 % of plain",
                f"{med:.1%} ({lo:.1%}–{hi:.1%})",
                "met" if med >= TARGET else "not met",
            ]
        )
    header = [
        "workload",
        "plain events/s, median (min–max)",
        "watched events/s",
        "watched / plain, paired",
        "REST polling",
        "Prometheus",
        "TaskManager CPU / event, watched / plain",
        "JobManager process CPU / event (plain → watched)",
        "all CPU / event, watched vs plain",
        "failed polls",
    ]
    print(text_table(header, rows))
    print(text_table(["target (issue 20)", "measured", "status"], targets))
    load = f"load average {load_before[0]:.2f} before, {load_after[0]:.2f} after"
    print(f"checksums {'equal' if result['ok'] else 'DIFFERENT'}; {load}")
    if a.write_docs:
        m = machine()
        section = "\n".join(
            [
                SECTION_BEGIN,
                "## Watching a job: REST polling and Prometheus scrapes (issue 20)",
                "",
                f"Run: {dt.date.today().isoformat()} · `python benchmarks/service_overhead.py --write-docs`"
                f" (`make bench-service`) · N = {n:,} events · {repeat} rounds · machine: {m.get('cpu', '?')},"
                f" {m.get('ram', '?')}, {m.get('python', '?')} · {load} (other engineers' jobs shared the machine)",
                "",
                "W2 of the window benchmarks (1 s tumbling event-time windows per key, sum and count; the peers'"
                " generator and checksum), plain against *watched*: Flink's Prometheus reporter on in the JobManager"
                " and every TaskManager, and a poller process that every second (from the end of its previous poll,"
                " as the dashboard's refresh loop) GETs `/overview`, `/jobs/overview`, `/jobs/:id`,"
                " `/jobs/:id/checkpoints` and per vertex `/vertices/:vid`, `/subtasks/metrics?get=…`,"
                " `/watermarks`, `/backpressure` (a superset of the dashboard's job page), and scrapes and parses every"
                " `/metrics` endpoint every second. Events/s = N / in-job time; each round runs both, in alternating"
                " order, and the ratio is taken within the round (median, min–max over rounds). Checksums"
                f" {'equal' if result['ok'] else 'DIFFERENT'} to `ref.py`'s in every run.",
                "",
                md_table(header, rows),
                "",
                md_table(["target (issue 20)", "measured", "status"], targets),
                "",
                "Where the time goes: the CPU columns count work, which the machine's noise blurs less than the "
                "wall clock. What watching adds is about 1 % of a core in the JobManager (its REST answers, ~12 "
                "GETs a second) and about 1 % in the poller (its requests and parsing), *all CPU / event*; the "
                "TaskManagers read gauges they keep anyway, on the reporter's thread, once a second. The paired "
                "wall-clock median moves more than the target's 5 % from run to run on this shared 2-core VM: W2"
                " p=1 gave 1.002, 0.983, 0.929 and 1.032 in four runs on 2026-11-26 (the last a p=1-only run of "
                "8 rounds, `--parallelism 1 --repeat 8`, in which plain W2 alone ranged 195k–283k events/s with "
                "nothing else running), with the TaskManager's CPU / event watched vs plain at 1.001, 1.076 and "
                "0.967; W2 p=2 gave 0.999, 1.017 and, under a load average of 2.4–4.9 from other engineers' "
                "jobs, 0.759 (a REST-only p=2 run then measured the JobManager at 1 % and the poller at 0.5 % of"
                " a core). At p=2 the two TaskManagers keep both cores busy, so anything else that runs (a poll "
                "burst, other users' processes) takes a core from them while it lasts. The table above is the "
                "latest full run; a wall-clock figure here is only as good as the machine is quiet.",
                SECTION_END,
            ]
        )
        DOCS.write_text(splice_section(DOCS.read_text(), section, SECTION_BEGIN, SECTION_END))
        log(f"wrote {DOCS}")


if __name__ == "__main__":
    main()
