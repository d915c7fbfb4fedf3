"""BATCH execution as Flink runs it, on TaskManager processes: blocking (sort-merge) exchanges, pipelined regions
scheduled stage after stage, fine-grained recovery.

The job: a bounded source of parallelism 8 → keyBy → reduce → map → FileSink, on a cluster of 2 one-slot
TaskManagers. Its two stages (the sources; reduce → map → sink chained) each have 8 tasks, which run two at a time:
every task of the second stage is deployed after the last source finished. A task of the second stage that fails
re-runs alone, reading its producers' persisted partitions; a TaskManager killed after the first stage takes the
partitions of the sources it ran with it, and only those sources run again."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from failover import committed_rows

from strom import Configuration, DataGeneratorSource, StreamExecutionEnvironment
from strom.api.execution_mode import RuntimeExecutionMode
from strom.api.functions import MapFunction
from strom.client.job_client import JobClient
from strom.connectors.file_system import FileSink, JsonLinesEncoder
from strom.runtime.execution_state import ExecutionState

pytestmark = pytest.mark.processes  # the stages' tasks in TaskManager processes; one test kills one

COUNT = 40_000
KEYS = 40
PARALLELISM = 8


def event(i: int) -> tuple[int, int]:
    return (i % KEYS, 1)


def _add(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    return (a[0], a[1] + b[1])


class FailOnce(MapFunction):
    """Subtask ``subtask`` raises on its first record, once (a marker file keeps its next attempt from failing)."""

    def __init__(self, marker: Path, subtask: int) -> None:
        self.marker = marker
        self.subtask = subtask

    def open(self, runtime_context: Any) -> None:
        self.index = runtime_context.get_index_of_this_subtask()

    def map(self, value: tuple[int, int]) -> tuple[int, int]:
        if self.index == self.subtask and not self.marker.exists():
            self.marker.write_text("failed once")
            raise RuntimeError(f"failing on purpose, once, in subtask {self.index}")
        return value


class WaitForGate(MapFunction):
    """Opens only once ``gate`` exists: the second stage holds until the test has killed a TaskManager."""

    def __init__(self, gate: Path) -> None:
        self.gate = gate

    def open(self, runtime_context: Any) -> None:
        deadline = time.monotonic() + 60
        while not self.gate.exists() and time.monotonic() < deadline:
            time.sleep(0.02)

    def map(self, value: tuple[int, int]) -> tuple[int, int]:
        return value


def _env() -> StreamExecutionEnvironment:
    config = Configuration(
        {
            "taskmanager.numberOfTaskSlots": 1,
            "minicluster.number-of-taskmanagers": 2,
            "heartbeat.interval": "250 ms",
            "heartbeat.timeout": "2 s",
            "restart-strategy.type": "fixed-delay",
            "restart-strategy.fixed-delay.attempts": 10,
            "restart-strategy.fixed-delay.delay": 100,
            # a small sort buffer: the sources' partitions spill into several regions of their files
            "taskmanager.network.sort-shuffle.min-buffers": 4,
            "taskmanager.memory.segment-size": "4 kb",
        }
    )
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(PARALLELISM)
    env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    return env


def _submit(env: StreamExecutionEnvironment, out: Path, map_fn: Any) -> JobClient:
    (
        env.from_source(DataGeneratorSource(event, COUNT), source_name="events")
        .key_by(lambda t: t[0])
        .reduce(_add)
        .map(map_fn)
        .sink_to(FileSink.for_row_format(str(out), JsonLinesEncoder()).build())
    )
    return env.execute_async("batch stages")


def _job_master(client: JobClient) -> Any:
    return client._cluster.dispatcher.job_masters[client.get_job_id()]  # type: ignore[attr-defined]


def _stages(jm: Any) -> tuple[list[Any], list[Any]]:
    """The current executions of the sources and of the second stage."""
    source, second = [[ev.current_execution for ev in ejv.task_vertices] for ejv in jm.graph.job_vertices.values()]
    return source, second


def _expected() -> Counter[tuple[int, int]]:
    return Counter((k, COUNT // KEYS) for k in range(KEYS))


def _attempts(jm: Any) -> dict[tuple[str, int], int]:
    return {(r["job_vertex_id"], r["subtask_index"]): r["attempt_number"] for r in jm.execution_snapshot()}


def _max_concurrent(executions: list[Any]) -> int:
    """Most executions deployed at once, from their state timestamps (the JobMaster's records, not the test's
    clock): each holds its slot from DEPLOYING to FINISHED; one that ends in the millisecond another starts does not
    overlap it."""
    events = []
    for ex in executions:
        events.append((ex.state_timestamps[ExecutionState.DEPLOYING], 1))
        events.append((ex.state_timestamps[ExecutionState.FINISHED], -1))
    running = peak = 0
    for _, delta in sorted(events):
        running += delta
        peak = max(peak, running)
    return peak


@pytest.mark.timeout(180)
def test_a_batch_job_runs_stage_after_stage_on_two_slots_with_exact_output(tmp_path: Path) -> None:
    client = _submit(_env(), tmp_path / "out", lambda v: v)
    result = client.get_job_execution_result()
    jm = _job_master(client)
    sources, second = _stages(jm)
    assert len(sources) == len(second) == PARALLELISM
    assert len({ex.slot.allocation_id for ex in sources + second}) == 2  # the two slots, each used by 8 tasks
    # blocking exchanges: every task of the second stage was deployed after the last source finished
    last_source_finished = max(ex.state_timestamps[ExecutionState.FINISHED] for ex in sources)
    first_second_deployed = min(ex.state_timestamps[ExecutionState.DEPLOYING] for ex in second)
    assert first_second_deployed >= last_source_finished
    # two slots: never more than two tasks at once, and the regions were deployed stage by stage
    assert _max_concurrent(sources + second) <= 2
    regions = jm.graph.pipelined_regions
    order = [regions.regions[r] for r in jm.scheduler.region_scheduler.deployments]
    assert len(order) == 2 * PARALLELISM
    source_vertex = sources[0].vertex.job_vertex.job_vertex.id
    assert all(vid == source_vertex for region in order[:PARALLELISM] for vid, _ in region)
    assert all(a == 0 for a in _attempts(jm).values())
    assert result.num_restarts == 0
    assert Counter(tuple(r) for r in committed_rows(tmp_path / "out")) == _expected()
    # the partition files are gone with the job
    assert not [p for p in Path(os.environ.get("TMPDIR", "/tmp")).glob("strom-shuffle-*/" + jm.job_id)]


@pytest.mark.timeout(180)
def test_a_failing_task_of_the_second_stage_re_runs_alone_from_persisted_partitions(tmp_path: Path) -> None:
    failing = 3
    client = _submit(_env(), tmp_path / "out", FailOnce(tmp_path / "failed", failing))
    result = client.get_job_execution_result()
    assert (tmp_path / "failed").exists(), "the task never failed"
    jm = _job_master(client)
    _, second = _stages(jm)
    second_vertex = second[0].vertex.job_vertex.job_vertex.id
    attempts = _attempts(jm)
    assert len(attempts) == 2 * PARALLELISM
    for (vid, i), attempt in attempts.items():  # the sources did not run again: their files were read twice
        assert attempt == (1 if (vid, i) == (second_vertex, failing) else 0), attempts
    assert result.num_restarts == 1
    (entry,) = jm.exception_history
    assert "failing on purpose, once" in entry.text
    assert [name.split(" (")[1] for name in entry.restarted_tasks] == [f"{failing + 1}/{PARALLELISM})"]
    assert Counter(tuple(r) for r in committed_rows(tmp_path / "out")) == _expected()


def _kill_after_the_first_stage(client: JobClient, gate: Path, progress: dict[str, Any]) -> None:
    """Once every source FINISHED, SIGKILLs the TaskManager that ran source 0 and records which sources ran there;
    then opens the gate of the second stage."""
    try:
        deadline = time.monotonic() + 60
        jm = None
        while time.monotonic() < deadline:
            jm = client._cluster.dispatcher.job_masters.get(client.get_job_id())  # type: ignore[attr-defined]
            if jm is not None and all(ex.state is ExecutionState.FINISHED for ex in _stages(jm)[0]):
                break
            time.sleep(0.01)
        else:
            return
        sources = _stages(jm)[0]
        tm_id = sources[0].slot.tm_id
        progress["on_killed"] = {ex.vertex.subtask_index for ex in sources if ex.slot.tm_id == tm_id}
        pid = jm.rm.slot_manager.task_managers[tm_id].pid
        os.kill(pid, signal.SIGKILL)
        progress["killed"] = pid
    finally:
        gate.write_text("open")


@pytest.mark.timeout(180)
def test_a_task_manager_killed_after_the_first_stage_has_only_its_lost_partitions_recomputed(tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    client = _submit(_env(), tmp_path / "out", WaitForGate(gate))
    progress: dict[str, Any] = {}
    killer = threading.Thread(target=_kill_after_the_first_stage, args=(client, gate, progress))
    killer.start()
    try:
        client.get_job_execution_result()
    finally:
        killer.join()
    assert "killed" in progress, "the first stage never finished"
    on_killed = progress["on_killed"]
    assert 0 < len(on_killed) < PARALLELISM
    jm = _job_master(client)
    sources, _ = _stages(jm)
    for ex in sources:  # only the sources whose partitions were lost ran again
        assert (ex.attempt_number > 0) == (ex.vertex.subtask_index in on_killed), (
            ex.vertex.subtask_index,
            ex.attempt_number,
            on_killed,
        )
    assert Counter(tuple(r) for r in committed_rows(tmp_path / "out")) == _expected()


@pytest.mark.timeout(180)
def test_a_failing_task_of_the_first_stage_re_runs_alone_while_the_other_sources_keep_their_partitions(
    tmp_path: Path,
) -> None:
    env = _env()
    failing = 2
    (
        env.from_source(DataGeneratorSource(event, COUNT), source_name="events")
        .map(FailOnce(tmp_path / "failed", failing))  # chained to the source: the first stage fails
        .key_by(lambda t: t[0])
        .reduce(_add)
        .sink_to(FileSink.for_row_format(str(tmp_path / "out"), JsonLinesEncoder()).build())
    )
    client = env.execute_async("batch stages, a source failing")
    client.get_job_execution_result()
    assert (tmp_path / "failed").exists(), "the task never failed"
    sources, second = _stages(_job_master(client))
    for ex in sources:  # the other sources' partitions were read as they were: they ran once
        assert ex.attempt_number == (1 if ex.vertex.subtask_index == failing else 0), ex.vertex.name
    # the second stage waited for the re-run source: none of its tasks was deployed before that source finished
    rerun_finished = sources[failing].state_timestamps[ExecutionState.FINISHED]
    assert all(ex.state_timestamps[ExecutionState.DEPLOYING] >= rerun_finished for ex in second)
    assert Counter(tuple(r) for r in committed_rows(tmp_path / "out")) == _expected()
