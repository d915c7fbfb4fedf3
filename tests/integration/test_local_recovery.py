"""Local recovery (``state.backend.local-recovery: true``) on real TaskManagers: a restarted subtask restores from
its TaskManager's local copy of the checkpoint — after a task failure, and after its TaskManager process was killed
and started again with the same resource id — and the output stays exactly-once.

The job is the checkpointing tests' running sums (keyed ``reduce`` into an exactly-once ``FileSink``); each task
logs at INFO how many bytes it restored locally and remotely, which is what the tests read."""

from __future__ import annotations

import logging
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from failover import committed_rows, completed_checkpoints, kill_a_task_manager

from strom import (
    CheckpointListener,
    Configuration,
    DataGeneratorSource,
    FileSink,
    JsonLinesEncoder,
    MapFunction,
    StreamExecutionEnvironment,
)
from strom.connectors.file_system import RollingPolicy

KEY_SPAN = 10_000
ON_CHECKPOINT = RollingPolicy.on_checkpoint_rolling_policy()

RESTORED = re.compile(
    r"restored (\d+) bytes locally \((\d+) reads\) and (\d+) bytes remotely \((\d+) reads; (\d+) local"
)


class FailOnceAfterACheckpoint(MapFunction, CheckpointListener):
    """Raises once, in the subtask that sees the first record after a completed checkpoint (a marker file makes it
    once for the whole job, across attempts)."""

    def __init__(self, marker: str) -> None:
        self.marker = marker
        self.armed = False

    def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        self.armed = True

    def map(self, value: Any) -> Any:
        if self.armed:
            try:
                open(self.marker, "x").close()
            except FileExistsError:
                self.armed = False
            else:
                raise RuntimeError("failing once after a checkpoint")
        return value


def _env(tmp_path: Path, *, local_recovery: bool = True) -> StreamExecutionEnvironment:
    config = Configuration(
        {
            "state.backend.local-recovery": local_recovery,
            "process.working-dir": str(tmp_path / "work"),
            "taskmanager.numberOfTaskSlots": 1,
            "minicluster.number-of-taskmanagers": 2,
            "heartbeat.interval": "250 ms",
            "heartbeat.timeout": "1 s",
            "restart-strategy.type": "fixed-delay",
            "restart-strategy.fixed-delay.attempts": 5,
            "restart-strategy.fixed-delay.delay": 100,
            "logging.level": "INFO",
            "env.log.dir": str(tmp_path / "logs"),
        }
    )
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(2)
    env.enable_checkpointing(200)
    return env


def _job(env: StreamExecutionEnvironment, count: int, out: Path, marker: Path | None, rate: float) -> None:
    stream = env.from_source(DataGeneratorSource(event, count, rate), source_name="events").uid("events")
    if marker is not None:
        stream = stream.map(FailOnceAfterACheckpoint(str(marker))).uid("fail-once")
    (
        stream.map(lambda e: (e[0], e[1], e[1]))
        .key_by(lambda e: e[0])
        .reduce(lambda a, b: (b[0], b[1], a[2] + b[1]))
        .uid("sums")
        .sink_to(FileSink.for_row_format(str(out), JsonLinesEncoder()).with_rolling_policy(ON_CHECKPOINT).build())
        .uid("files")
    )


def event(i: int) -> tuple[int, int]:
    return (i // KEY_SPAN, i)


def expected_rows(count: int) -> list[tuple[int, int, int]]:
    sums: dict[int, int] = {}
    rows = []
    for i in range(count):
        k, v = event(i)
        sums[k] = sums.get(k, 0) + v
        rows.append((k, v, sums[k]))
    return rows


def _restores(text: str) -> list[tuple[int, ...]]:
    """(local bytes, local reads, remote bytes, remote reads, mismatches) of every restore logged in ``text``."""
    return [tuple(int(g) for g in m.groups()) for m in RESTORED.finditer(text)]


@pytest.mark.timeout(120)
def test_a_task_failure_restores_from_the_local_copy_exactly_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    count = 4 * KEY_SPAN
    out = tmp_path / "out"
    env = _env(tmp_path)
    _job(env, count, out, tmp_path / "failed", rate=20_000)
    with caplog.at_level(logging.INFO, logger="strom"):
        result = env.execute("local recovery after a task failure")
    assert (tmp_path / "failed").exists() and result.num_restarts >= 1
    restores = _restores(caplog.text)
    assert len(restores) >= 2, caplog.text[-3000:]  # both subtasks of the restarted job restored
    assert all(local_bytes > 0 and mismatches == 0 for local_bytes, _, _, _, mismatches in restores), restores
    assert not list((tmp_path / "work").rglob("jid_*")), "the job's end removes its local state"
    rows = committed_rows(out)
    assert Counter(rows) == Counter(expected_rows(count))


@pytest.mark.processes  # kills a TaskManager process and reads the TaskManagers' log files
@pytest.mark.timeout(180)
def test_a_task_manager_restarted_with_its_resource_id_restores_locally(tmp_path: Path) -> None:
    count = 10 * KEY_SPAN
    out = tmp_path / "out"
    env = _env(tmp_path)
    _job(env, count, out, None, rate=25_000)
    client = env.execute_async("local recovery after a TaskManager kill")
    completed_checkpoints(client, 2)
    kill_a_task_manager(client, seed=3)
    result = client.get_job_execution_result()
    assert result.num_restarts >= 1
    logs = {p.name: p.read_text() for p in (tmp_path / "logs").rglob("taskmanager-*.log")}
    replacement = {name: _restores(text) for name, text in logs.items() if "tm-3" in name}
    assert replacement, f"expected the replacement TaskManager tm-3's log; got {sorted(logs)}"
    (restores,) = replacement.values()
    assert restores and all(r[0] > 0 and r[4] == 0 for r in restores), restores  # it found the lost one's copies
    assert sorted(p.name for p in (tmp_path / "work").iterdir()) == ["tm_tm-1", "tm_tm-2"]  # tm-3 took tm-1's
    assert not list((tmp_path / "work").rglob("jid_*")), "the job's end removes its local state"
    rows = committed_rows(out)
    assert Counter(rows) == Counter(expected_rows(count))
