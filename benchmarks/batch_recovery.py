"""Time a BATCH job loses to a TaskManager SIGKILL, with fine-grained recovery
(``jobmanager.execution.failover-strategy: region``) against a full restart (``full``), in paired rounds (issue 29,
"Measure").

The job: a bounded generator of ``--records`` → a map that burns ``--work`` µs of CPU per record → key_by → reduce
(sum) → a sink that writes each subtask's count and sum to ``sink-<subtask>.json`` (a re-run overwrites it, so the
output is exact under either strategy), at parallelism ``--parallelism`` on two one-slot TaskManagers: the sources
are one stage of ``--parallelism`` tasks run two at a time, the reduces the next. Each round runs, in an order that
rotates: the job without a kill, the job with a kill under ``region``, the job with a kill under ``full``. The kill:
once ``--kill-after`` of the stage's tasks (``--stage source`` or ``reduce``) FINISHED, the TaskManager that runs
the next of them is SIGKILLed (the MiniCluster starts a new one). Reported: job time (``execute()``) minus the same
round's no-kill job time, per strategy, and the TaskManagers' CPU time likewise (user + system of the reaped
children, the killed one included as far as the kernel counted it), medians over ``--rounds``; which tasks re-ran
(attempt numbers > 0) per run. The kill is found by the TaskManager's closed RPC connection (at once); the heartbeat
timeout is 30 s so that a loaded machine's starved event loops lose no TaskManager of their own; restart delay 100
ms.

    python benchmarks/batch_recovery.py --records 4000000 --work 20 --rounds 3  # ~60 s a job, quiet 2 cores
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import statistics
import tempfile
import threading
import time
from typing import Any

import cloudpickle

from strom import Configuration, DataGeneratorSource, StreamExecutionEnvironment
from strom.api.execution_mode import RuntimeExecutionMode
from strom.api.functions import MapFunction
from strom.api.sink import Sink, SinkWriter, SinkWriterContext
from strom.runtime.execution_state import ExecutionState

KEYS = 1000


def _event(i: int) -> tuple[int, int]:
    return (i % KEYS, 1)


def _add(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    return (a[0], a[1] + b[1])


class Burn(MapFunction):
    """Spends ``micros`` µs of CPU per record (a busy loop on the thread clock), the work a source stage does."""

    def __init__(self, micros: float) -> None:
        self.seconds = micros / 1e6

    def map(self, value: Any) -> Any:
        end = time.thread_time() + self.seconds
        while time.thread_time() < end:
            pass
        return value


class _SubtaskWriter(SinkWriter[Any]):
    def __init__(self, path: str) -> None:
        self.path = path
        self.records = self.total = 0

    def write(self, element: Any) -> None:
        self.records += 1
        self.total += element[1]

    def close(self) -> None:
        with open(self.path, "w") as f:
            json.dump({"records": self.records, "total": self.total}, f)


class SubtaskSink(Sink[Any]):
    def __init__(self, out_dir: str) -> None:
        self.out_dir = out_dir

    def create_writer(self, context: SinkWriterContext) -> SinkWriter[Any]:
        return _SubtaskWriter(os.path.join(self.out_dir, f"sink-{context.subtask_index}.json"))


def _stages(jm: Any) -> dict[str, list[Any]]:
    source, reduce = [[ev.current_execution for ev in ejv.task_vertices] for ejv in jm.graph.job_vertices.values()]
    return {"source": source, "reduce": reduce}


def _killer(client: Any, stage: str, after: int, done: dict[str, Any]) -> None:
    """Once ``after`` tasks of ``stage`` FINISHED, SIGKILLs the TaskManager of one that runs (the first found)."""
    deadline = time.monotonic() + 900
    while time.monotonic() < deadline and not done.get("ended"):
        jm = client._cluster.dispatcher.job_masters.get(client.get_job_id())
        if jm is not None:
            executions = _stages(jm)[stage]
            finished = sum(ex.state is ExecutionState.FINISHED for ex in executions)
            running = [ex for ex in executions if ex.state is ExecutionState.RUNNING and ex.slot is not None]
            if finished >= after and running:
                tm_id = running[0].slot.tm_id
                os.kill(jm.rm.slot_manager.task_managers[tm_id].pid, signal.SIGKILL)
                done["killed_at"] = time.perf_counter()
                return
        time.sleep(0.02)


def run(args: argparse.Namespace, strategy: str | None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="batch-recovery-") as out_dir:
        config = {
            "taskmanager.numberOfTaskSlots": 1,
            "minicluster.number-of-taskmanagers": 2,
            "heartbeat.interval": "1 s",
            "heartbeat.timeout": "30 s",  # a loaded machine starves event loops; the kill closes the connection
            "restart-strategy.type": "fixed-delay",
            "restart-strategy.fixed-delay.attempts": 10,
            "restart-strategy.fixed-delay.delay": 100,
            "jobmanager.execution.failover-strategy": strategy or "region",
        }
        env = StreamExecutionEnvironment.get_execution_environment(Configuration(config))
        env.set_parallelism(args.parallelism)
        env.set_runtime_mode(RuntimeExecutionMode.BATCH)
        (
            env.from_source(DataGeneratorSource(_event, args.records), source_name="events")
            .map(Burn(args.work))
            .key_by(lambda t: t[0])
            .reduce(_add)
            .sink_to(SubtaskSink(out_dir))
        )
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        client = env.execute_async(f"batch recovery {strategy or 'no kill'}")
        done: dict[str, Any] = {}
        killer = None
        if strategy is not None:
            killer = threading.Thread(target=_killer, args=(client, args.stage, args.kill_after, done), daemon=True)
            killer.start()
        result = client.get_job_execution_result()
        wall = time.perf_counter() - start
        done["ended"] = True
        if killer is not None:
            killer.join()
        jm = client._cluster.dispatcher.job_masters[client.get_job_id()]
        reran = {
            name: sorted(ex.vertex.subtask_index for ex in exs if ex.attempt_number > 0)
            for name, exs in _stages(jm).items()
        }
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        totals = {"records": 0, "total": 0}
        for name in os.listdir(out_dir):
            with open(os.path.join(out_dir, name)) as f:
                for k, v in json.load(f).items():
                    totals[k] += v
    if totals != {"records": KEYS, "total": args.records}:
        raise SystemExit(f"expected {KEYS} keys summing to {args.records}; got {totals} ({strategy})")
    if strategy is not None and "killed_at" not in done:
        raise SystemExit(f"the {args.stage} stage never had {args.kill_after} tasks finished and one running")
    return {
        "wall": wall,
        "cpu": after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime,
        "kill_at": done.get("killed_at", start) - start,
        "restarts": result.num_restarts,
        "reran": reran,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=4_000_000)
    parser.add_argument("--work", type=float, default=20.0, help="µs of CPU per record in the source stage")
    parser.add_argument("--parallelism", type=int, default=8)
    parser.add_argument("--stage", choices=("source", "reduce"), default="source")
    parser.add_argument("--kill-after", type=int, default=4, help="tasks of the stage FINISHED before the kill")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    cloudpickle.register_pickle_by_value(__import__(__name__))  # the TaskManagers cannot import this script
    results: dict[str, list[dict[str, Any]]] = {}
    order: list[str | None] = [None, "region", "full"]
    for r in range(args.rounds):
        for strategy in order[r % 3 :] + order[: r % 3]:
            res = run(args, strategy)
            results.setdefault(strategy or "no kill", []).append(res)
            print(
                f"round {r + 1}: {strategy or 'no kill'}: {res['wall']:.1f} s, {res['cpu']:.1f} s CPU, killed at "
                f"{res['kill_at']:.1f} s, {res['restarts']} restarts, re-ran {res['reran']}, "
                f"load {os.getloadavg()[0]:.1f}",
                flush=True,
            )
    base = results["no kill"]
    for strategy in ("region", "full"):
        lost = [k["wall"] - b["wall"] for k, b in zip(results[strategy], base, strict=True)]
        lost_cpu = [k["cpu"] - b["cpu"] for k, b in zip(results[strategy], base, strict=True)]
        print(
            f"{strategy}: time lost median {statistics.median(lost):.1f} s ({', '.join(f'{x:.1f}' for x in lost)}), "
            f"CPU lost median {statistics.median(lost_cpu):.1f} s ({', '.join(f'{x:.1f}' for x in lost_cpu)})"
        )
    print(
        f"no kill: median {statistics.median(b['wall'] for b in base):.1f} s, "
        f"{statistics.median(b['cpu'] for b in base):.1f} s CPU"
    )


if __name__ == "__main__":
    main()
