"""Exactly-once into files: keyed running sums with checkpoints, a TaskManager killed mid-way.

    .venv/bin/python examples/exactly_once_files.py [output-dir]

A DataGeneratorSource (index → record, replayable from its checkpointed position) feeds running sums per
key into a FileSink; checkpoints every 200 ms make what it wrote durable (its part file stays in progress across
checkpoints and rolls by the rolling policy, as in Flink). Two seconds in, the example SIGKILLs one TaskManager
process: the job restarts from the latest checkpoint on a replacement TaskManager, which resumes the part file at
its checkpointed length, and the committed files hold every row exactly once.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path

from strom import (
    CheckpointingMode,
    Configuration,
    DataGeneratorSource,
    FileSink,
    JsonLinesEncoder,
    StreamExecutionEnvironment,
)

COUNT = 300_000


def event(i: int) -> tuple[int, int]:
    return (i % 100, i)


def main(out: Path) -> None:
    env = StreamExecutionEnvironment.get_execution_environment(
        Configuration(
            {
                "minicluster.number-of-taskmanagers": 2,
                "taskmanager.numberOfTaskSlots": 1,
                "heartbeat.timeout": "1 s",
                "restart-strategy.type": "fixed-delay",
                "restart-strategy.fixed-delay.attempts": 3,
                "restart-strategy.fixed-delay.delay": 200,
            }
        )
    )
    env.set_parallelism(2)
    env.enable_checkpointing(200, CheckpointingMode.EXACTLY_ONCE)
    (
        env.from_source(DataGeneratorSource(event, COUNT, records_per_second=50_000), source_name="events")
        .uid("events")
        .key_by(lambda e: e[0])
        .reduce(lambda a, b: (a[0], a[1] + b[1]))
        .uid("sums")
        .sink_to(FileSink.for_row_format(str(out), JsonLinesEncoder()).build())
        .uid("files")
    )
    client = env.execute_async("exactly-once files")

    def kill_one() -> None:
        time.sleep(2.0)
        pids = client.live_task_manager_pids()
        if pids and not client.get_job_status().is_globally_terminal:
            print(f"killing TaskManager process {pids[0]}")
            os.kill(pids[0], signal.SIGKILL)

    killer = threading.Thread(target=kill_one)
    killer.start()
    result = client.get_job_execution_result()
    killer.join()
    committed = [f for f in sorted(out.rglob("part-*")) if f.is_file()]  # in the sink's yyyy-MM-dd--HH buckets
    rows = [json.loads(line) for f in committed for line in f.open()]
    completed = result.checkpoint_counts.completed
    print(f"{len(rows)} rows committed for {COUNT} events; restarts: {result.num_restarts}; checkpoints: {completed}")
    final: dict[int, int] = {}
    for k, s in rows:  # running sums only grow: the largest per key is its total
        final[k] = max(final.get(k, 0), s)
    expected = {k: sum(range(k, COUNT, 100)) for k in range(100)}
    print("exactly once:", len(rows) == COUNT and final == expected)


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="strom-files-")))
