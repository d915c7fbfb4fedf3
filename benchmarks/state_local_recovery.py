"""Recovery of large keyed state with and without local recovery (issue 28 §2, "Recovery of 1 GB").

    python benchmarks/state_local_recovery.py                  # 1 M keys × 1 KiB (≈ 1 GB) at p=2, 3 paired rounds
    python benchmarks/state_local_recovery.py --keys 200000    # smaller, when the machine is loaded
    python benchmarks/state_local_recovery.py --quick          # smoke run: 50 000 keys, 1 round
    python benchmarks/state_local_recovery.py --backend rocksdb  # the same on RocksDB (full checkpoints)

A KeyedProcessFunction keeps a distinct 1 KiB ``bytes`` value in a ValueState per key (``--backend``: the heap
backend by default, or RocksDB) and emits the
key; the source first writes every key once, then updates them again and again (unthrottled), so the job runs on
with the state at its full size. Two TaskManager processes with one slot each, aligned checkpoints every
``--interval`` ms into a local directory (``--checkpoint-dir``: any fsspec URI, e.g. an S3 bucket, where the
download that local recovery saves costs more). Once a checkpoint holding the whole state completed, one TaskManager
gets SIGKILL; the MiniCluster starts a replacement with the same resource id (its working directory, with the
local state copies). A map after the keyed function stamps (CLOCK_MONOTONIC) the first record of each restarted
subtask: *kill → first record* (the first restarted subtask) and *kill → all* (every restarted subtask processed one)
are reported per round, with ``state.backend.local-recovery`` false and true back to back (paired, their order
alternating between rounds). The restarted tasks' log lines say how much each read locally and remotely.
Not a timed test, nothing is asserted: the figures are printed.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from strom import (
    Configuration,
    DataGeneratorSource,
    JobClient,
    KeyedProcessFunction,
    MapFunction,
    RuntimeContext,
    Sink,
    SinkWriter,
    SinkWriterContext,
    StreamExecutionEnvironment,
    ValueStateDescriptor,
)

VALUE_BYTES = 1024


class KeyOf:
    """Record ``i`` → key ``i mod keys``: every key once, then over and over."""

    def __init__(self, keys: int) -> None:
        self.keys = keys

    def __call__(self, i: int) -> int:
        return i % self.keys


def identity(i: int) -> int:
    return i


class StoreBlob(KeyedProcessFunction[int, int, int]):
    """A distinct 1 KiB ValueState per key; emits the key."""

    def open(self, runtime_context: RuntimeContext) -> None:
        self.blob = runtime_context.get_state(ValueStateDescriptor("blob"))

    def process_element(self, value: int, ctx: KeyedProcessFunction.Context) -> Any:
        self.blob.update(value.to_bytes(8, "little") * (VALUE_BYTES // 8))
        yield value


class FirstRecordStamp(MapFunction[int, int]):
    """Writes ``first-s<subtask>-a<attempt>`` with the CLOCK_MONOTONIC time of the attempt's first record."""

    def __init__(self, out_dir: str) -> None:
        self.out_dir = out_dir
        self.pending = True
        self.name = ""

    def open(self, runtime_context: RuntimeContext) -> None:
        self.pending = True
        self.name = f"first-s{runtime_context.get_index_of_this_subtask()}-a{runtime_context.get_attempt_number()}"

    def map(self, value: int) -> int:
        if self.pending:
            self.pending = False
            tmp = os.path.join(self.out_dir, "." + self.name)
            with open(tmp, "w") as f:
                f.write(str(time.monotonic_ns()))
            os.replace(tmp, os.path.join(self.out_dir, self.name))
        return value


class _Discarding(SinkWriter[Any]):
    def write(self, element: Any) -> None:
        pass

    def write_batch(self, elements: list[Any]) -> None:
        pass


class DiscardingSink(Sink[Any]):
    def create_writer(self, context: SinkWriterContext) -> SinkWriter[Any]:
        return _Discarding()


@dataclass
class Round:
    local_recovery: bool
    state_mb: float = 0.0
    first_s: float | None = None
    all_s: float | None = None
    error: str = ""


def _wait(pred: Callable[[], bool], timeout_s: float, step: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(step)
    return pred()


def _restarted_stamps(out_dir: str, before: frozenset[str] = frozenset()) -> list[int]:
    """The stamps of restarted attempts, but those already there ``before`` (a restart before the kill)."""
    stamps = []
    for name in os.listdir(out_dir):
        if name.startswith("first-") and not name.endswith("-a0") and name not in before:
            with open(os.path.join(out_dir, name)) as f:
                stamps.append(int(f.read()))
    return sorted(stamps)


def _full_checkpoint(client: JobClient, least_bytes: int) -> int:
    done = [c for c in client.get_checkpoint_statistics() if c.status == "COMPLETED" and c.state_size >= least_bytes]
    return done[-1].state_size if done else 0


def run_round(a: argparse.Namespace, local_recovery: bool) -> Round:
    r = Round(local_recovery)
    out_dir = tempfile.mkdtemp(prefix="strom-localrec-bench-")
    config = Configuration(
        {
            "state.backend.local-recovery": local_recovery,
            "state.backend.type": a.backend,
            "taskmanager.numberOfTaskSlots": 1,
            "minicluster.number-of-taskmanagers": 2,
            "heartbeat.interval": "250 ms",
            "heartbeat.timeout": "10 s",  # a SIGKILL closes the connections: noticed at once
            "restart-strategy.type": "fixed-delay",
            "restart-strategy.fixed-delay.attempts": 3,
            "restart-strategy.fixed-delay.delay": 0,
            "execution.checkpointing.min-pause": f"{a.interval} ms",
            "logging.level": "INFO" if a.verbose else "WARNING",
        }
    )
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(2)
    env.enable_checkpointing(a.interval)
    env.get_checkpoint_config().set_checkpoint_storage(a.checkpoint_dir or os.path.join(out_dir, "checkpoints"))
    (
        env.from_source(DataGeneratorSource(identity, 10**12), source_name="keys")
        .map(KeyOf(a.keys))
        .key_by(identity)
        .process(StoreBlob())
        .map(FirstRecordStamp(out_dir))
        .sink_to(DiscardingSink())
    )
    client: JobClient | None = None
    victim = 0
    try:
        client = env.execute_async(f"local recovery {local_recovery}")
        c = client
        least = int(a.keys * VALUE_BYTES * 0.95)
        if not _wait(lambda: _full_checkpoint(c, least) > 0, a.timeout):
            raise RuntimeError(f"no checkpoint of ≥ {least / 1e6:.0f} MB completed within {a.timeout:.0f} s")
        r.state_mb = _full_checkpoint(c, least) / 1e6
        victim = c.live_task_manager_pids()[0]
        before = frozenset(os.listdir(out_dir))
        t_kill = time.monotonic_ns()
        os.kill(victim, signal.SIGKILL)
        victim = 0
        if not _wait(lambda: len(_restarted_stamps(out_dir, before)) >= 2, a.timeout):
            raise RuntimeError(f"the restarted subtasks processed no record within {a.timeout:.0f} s")
        stamps = _restarted_stamps(out_dir, before)
        r.first_s, r.all_s = (stamps[0] - t_kill) / 1e9, (stamps[-1] - t_kill) / 1e9
    except Exception as exc:
        r.error = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    finally:
        if victim:
            with contextlib.suppress(OSError):
                os.kill(victim, signal.SIGKILL)
        if client is not None:
            with contextlib.suppress(Exception):
                client.cancel()
            with contextlib.suppress(Exception):
                client.close()
        shutil.rmtree(out_dir, ignore_errors=True)
    return r


def _fmt(values: list[float]) -> str:
    if not values:
        return "—"
    return f"{statistics.median(values):.2f} s (" + ", ".join(f"{v:.2f}" for v in values) + ")"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--keys", type=int, default=1_000_000, help="keys of 1 KiB each (default 1 000 000 ≈ 1 GB)")
    p.add_argument("--rounds", type=int, default=3, help="paired rounds (default 3)")
    p.add_argument("--interval", type=int, default=2000, help="checkpoint interval and min pause, ms")
    p.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for the load and the recovery")
    p.add_argument(
        "--checkpoint-dir", default="", help="checkpoint directory URI (default: a local temporary directory)"
    )
    p.add_argument("--backend", default="hashmap", choices=["hashmap", "rocksdb"], help="state.backend.type")
    p.add_argument("--quick", action="store_true", help="50 000 keys, 1 round")
    p.add_argument("--verbose", action="store_true", help="TaskManagers log at INFO (the restore lines)")
    a = p.parse_args()
    if a.quick:
        a.keys, a.rounds = 50_000, 1
    print(
        f"# {a.backend}: {a.keys} keys × {VALUE_BYTES} B at p=2, {a.rounds} paired rounds, "
        f"load {os.getloadavg()[0]:.1f}"
    )
    rounds: list[Round] = []
    for i in range(a.rounds):
        for local in (False, True) if i % 2 == 0 else (True, False):
            r = run_round(a, local)
            rounds.append(r)
            print(
                f"round {i + 1} local-recovery={str(local).lower():5}: state {r.state_mb:.0f} MB, "
                f"kill → first record {r.first_s if r.first_s is not None else float('nan'):.2f} s, "
                f"kill → all {r.all_s if r.all_s is not None else float('nan'):.2f} s"
                + (f", error: {r.error}" if r.error else ""),
                flush=True,
            )
    for local in (False, True):
        ok = [r for r in rounds if r.local_recovery is local and not r.error]
        print(
            f"local-recovery={str(local).lower():5}: kill → first record {_fmt([r.first_s for r in ok if r.first_s])}"
            f"; kill → all {_fmt([r.all_s for r in ok if r.all_s])}"
        )


if __name__ == "__main__":
    main()
