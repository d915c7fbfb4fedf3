"""Checkpoints and exactly-once recovery on real TaskManager processes, killed for real.

The jobs read a :class:`DataGeneratorSource` (index → record, replayable from its checkpointed position),
keep running sums per key and write ``(key, index, running sum)`` rows through the exactly-once
:class:`FileSink`. Keys are ``index // KEY_SPAN``: each key's indices lie in one source split, so its rows
come in index order and the whole committed output is deterministic — the failure-free output can be
computed here, and any lost or repeated record shows as a missing, extra or wrong row.
"""

from __future__ import annotations

import json
import os
import random
import signal
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from strom import (
    CheckpointedFunction,
    CheckpointingMode,
    CheckpointListener,
    Configuration,
    DataGeneratorSource,
    FileSink,
    JobStatus,
    JsonLinesEncoder,
    MapFunction,
    StreamExecutionEnvironment,
)

KEY_SPAN = 10_000


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


def committed_rows(directory: Path) -> list[tuple[int, int, int]]:
    """Rows of the files under final names (in-progress and pending files are hidden dot files)."""
    rows = []
    for f in sorted(directory.iterdir()):
        if f.name.startswith("."):
            continue
        with f.open() as fh:
            rows.extend(tuple(json.loads(line)) for line in fh)
    return rows


def running_sums_job(
    env: StreamExecutionEnvironment, count: int, out: Path, *, records_per_second: float | None = None
) -> None:
    (
        env.from_source(DataGeneratorSource(event, count, records_per_second), source_name="events")
        .uid("events")
        .map(lambda e: (e[0], e[1], e[1]))
        .key_by(lambda e: e[0])
        .reduce(lambda a, b: (b[0], b[1], a[2] + b[1]))
        .uid("sums")
        .sink_to(FileSink.for_row_format(str(out), JsonLinesEncoder()).build())
        .uid("files")
    )


def chaos_env(mode: CheckpointingMode) -> StreamExecutionEnvironment:
    config = Configuration(
        {
            "taskmanager.numberOfTaskSlots": 1,
            "minicluster.number-of-taskmanagers": 2,
            "heartbeat.interval": 0.25,
            "heartbeat.timeout": 1.0,
            "restart-strategy.type": "fixed-delay",
            "restart-strategy.fixed-delay.attempts": 20,
            "restart-strategy.fixed-delay.delay": 200,
        }
    )
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(2)
    env.enable_checkpointing(200, mode)
    return env


def _kill_task_managers(client: Any, kills: int, rng: random.Random, killed: list[int]) -> None:
    """Three times: wait a random moment while the job runs, then SIGKILL one TaskManager process."""
    for _ in range(kills):
        time.sleep(rng.uniform(1.0, 2.5))
        if client.get_job_status().is_globally_terminal:
            return
        pids = client.live_task_manager_pids()
        if not pids:
            return
        victim = rng.choice(pids)
        os.kill(victim, signal.SIGKILL)
        killed.append(victim)
        # let the job restart and make progress before the next kill
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and client.get_job_status() is not JobStatus.RUNNING:
            time.sleep(0.05)


@pytest.mark.slow
@pytest.mark.timeout(240)
@pytest.mark.parametrize("mode", [CheckpointingMode.EXACTLY_ONCE, CheckpointingMode.AT_LEAST_ONCE])
def test_chaos_three_task_manager_kills(tmp_path: Path, mode: CheckpointingMode) -> None:
    count = 1_000_000
    out = tmp_path / "out"
    env = chaos_env(mode)
    running_sums_job(env, count, out, records_per_second=100_000)
    client = env.execute_async("chaos")
    killed: list[int] = []
    killer = threading.Thread(target=_kill_task_managers, args=(client, 3, random.Random(7), killed))
    killer.start()
    try:
        result = client.get_job_execution_result()
    finally:
        killer.join()
    assert len(killed) == 3, "the job ended before three TaskManagers were killed"
    assert result.num_restarts >= 3
    rows = committed_rows(out)
    expected = expected_rows(count)
    if mode is CheckpointingMode.EXACTLY_ONCE:
        assert len(rows) == len(expected)
        assert Counter(rows) == Counter(expected)
    else:  # at least once: every event is in the output; replays may repeat some
        seen = {r[1] for r in rows}
        missing = [i for i in range(count) if i not in seen]
        assert not missing, f"{len(missing)} events lost, e.g. {missing[:5]}"
    assert any(c.status == "COMPLETED" for c in result.checkpoints)


class Noting(MapFunction, CheckpointedFunction, CheckpointListener):
    """Counts records in operator state; notes every completed checkpoint id in a file; stalls in the
    snapshot of checkpoint 2 far past the checkpoint timeout (a task that does not acknowledge)."""

    def __init__(self, notes: str) -> None:
        self.notes = notes
        self.count = 0

    def initialize_state(self, context: Any) -> None:
        from strom import ListStateDescriptor

        self.state = context.get_operator_state_store().get_list_state(ListStateDescriptor("count"))

    def snapshot_state(self, context: Any) -> None:
        if context.checkpoint_id == 2:
            time.sleep(1.5)
        self.state.update([self.count])

    def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        with open(self.notes, "a") as f:
            f.write(f"{checkpoint_id}\n")

    def map(self, value: int) -> int:
        self.count += 1
        return value


@pytest.mark.timeout(90)
def test_checkpoint_that_is_never_acknowledged_times_out_and_the_next_completes(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    env.enable_checkpointing(100)
    cfg = env.get_checkpoint_config()
    cfg.set_checkpoint_timeout(500)
    cfg.set_tolerable_checkpoint_failure_number(10)
    (
        env.from_source(DataGeneratorSource(lambda i: i, 40_000, records_per_second=10_000))
        .map(Noting(str(notes)))
        .name("noting")
        .sink_to(FileSink.for_row_format(str(tmp_path / "out"), JsonLinesEncoder()).build())
    )
    result = env.execute("stalling checkpoint")
    assert result.num_restarts == 0
    stats = {c.checkpoint_id: c for c in result.checkpoints}
    assert stats[2].status == "FAILED" and "expired" in stats[2].failure_reason
    completed = [c for c in sorted(stats) if stats[c].status == "COMPLETED"]
    assert any(c > 2 for c in completed), stats
    seen = [int(x) for x in notes.read_text().split()]
    assert seen == sorted(set(seen)), f"each completed id once, in order; got {seen}"
    assert 2 not in seen
    assert set(seen) <= set(completed)
    assert sorted(committed_rows_ints(tmp_path / "out")) == list(range(40_000))


def committed_rows_ints(directory: Path) -> list[int]:
    out = []
    for f in sorted(directory.iterdir()):
        if not f.name.startswith("."):
            out.extend(json.loads(line) for line in f.read_text().splitlines())
    return out


@pytest.mark.slow
@pytest.mark.timeout(180)
@pytest.mark.parametrize("new_parallelism", [3, 1])
def test_savepoint_at_parallelism_2_restores_at_another_parallelism(tmp_path: Path, new_parallelism: int) -> None:
    count = 200_000
    out = tmp_path / "out"
    savepoints = tmp_path / "savepoints"

    env = StreamExecutionEnvironment.get_execution_environment(Configuration({"taskmanager.numberOfTaskSlots": 2}))
    env.set_parallelism(2)
    env.enable_checkpointing(200)
    running_sums_job(env, count, out, records_per_second=50_000)
    client = env.execute_async("before the savepoint")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and (not out.exists() or len(committed_rows(out)) < 20_000):
        time.sleep(0.1)
    savepoint = client.stop_with_savepoint(str(savepoints))
    first = committed_rows(out)
    assert 0 < len(first) < count, "the savepoint should be taken mid-way"

    env2 = StreamExecutionEnvironment.get_execution_environment(Configuration({"taskmanager.numberOfTaskSlots": 3}))
    env2.set_parallelism(new_parallelism)
    env2.enable_checkpointing(200)
    running_sums_job(env2, count, out)
    result = env2.execute("after the savepoint", savepoint_path=savepoint)
    assert result.num_restarts == 0
    rows = committed_rows(out)
    assert Counter(rows) == Counter(expected_rows(count))
