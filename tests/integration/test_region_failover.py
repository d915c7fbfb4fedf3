"""Region failover (``jobmanager.execution.failover-strategy: region``, Flink's default) on real TaskManager
processes: a p=4 forward-only pipeline is four pipelined regions, so a failing subtask restarts only its own region
— the other three subtasks keep their first attempts (through the REST API) — and the exactly-once FileSink's
committed output is exactly that of an uninterrupted run; a SIGKILLed TaskManager restarts only the region it
hosted while the others keep producing."""

from __future__ import annotations

import json
import threading
import time
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from failover import committed_rows, completed_checkpoints, failover_env

from strom import DataGeneratorSource, StreamExecutionEnvironment
from strom.api.checkpoint import CheckpointListener
from strom.api.functions import MapFunction
from strom.client.job_client import JobClient
from strom.connectors.file_system import FileSink, JsonLinesEncoder

COUNT = 24_000
FAILING_SUBTASK = 2


def event(i: int) -> tuple[int, int]:
    return (i % 4, i)


class FailOnceAfterACheckpoint(MapFunction, CheckpointListener):
    """Subtask 2 (or each of ``subtasks``) raises once, on its first record after a checkpoint covering its records
    completed (a marker file per subtask keeps its restarted attempt from failing again)."""

    def __init__(self, marker: Path, subtasks: tuple[int, ...] = (FAILING_SUBTASK,)) -> None:
        self.marker = marker
        self.subtasks = subtasks
        self.seen = 0
        self.checkpointed = False

    def open(self, runtime_context: Any) -> None:
        self.subtask = runtime_context.get_index_of_this_subtask()
        self.marker_file = self.marker if self.subtasks == (FAILING_SUBTASK,) else self.marker / str(self.subtask)

    def map(self, value: tuple[int, int]) -> tuple[int, int]:
        self.seen += 1
        if self.subtask in self.subtasks and self.checkpointed and not self.marker_file.exists():
            self.marker_file.write_text("failed once")
            raise RuntimeError(f"failing on purpose, once, in subtask {self.subtask}")
        return value

    def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        if self.seen:
            self.checkpointed = True


def _env(*, kills: bool = False) -> StreamExecutionEnvironment:
    env: StreamExecutionEnvironment = failover_env(parallelism=4, attempts=5)
    env.disable_operator_chaining()  # source -> map -> sink: three vertices of 4 subtasks on forward edges
    if not kills:  # no TaskManager dies here: a loaded machine must not lose one to a late heartbeat either
        env.get_configuration().set_string("heartbeat.timeout", "60 s")
    return env


def _pipeline(env: StreamExecutionEnvironment, out: Path, records_per_second: float, map_fn: Any) -> None:
    (
        env.from_source(DataGeneratorSource(event, COUNT, records_per_second=records_per_second), source_name="events")
        .uid("events")
        .map(map_fn)
        .uid("map")
        .sink_to(FileSink.for_row_format(str(out), JsonLinesEncoder()).build())
        .uid("files")
    )


def _get(client: JobClient, path: str) -> Any:
    req = urllib.request.Request(client.get_rest_url() + path)
    req.add_header("Authorization", f"Bearer {client.get_rest_token()}")
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.loads(resp.read())


def _attempts(client: JobClient) -> dict[tuple[str, int], tuple[int, str]]:
    """(vertex name, subtask) -> (attempt number, status), from ``GET /jobs/:jobid/vertices/:vertexid``."""
    job = client.get_job_id()
    out = {}
    for v in _get(client, f"/jobs/{job}")["vertices"]:
        for s in _get(client, f"/jobs/{job}/vertices/{v['id']}")["subtasks"]:
            out[(v["name"], s["subtask"])] = (s["attempt"], s["status"])
    return out


def _expected_rows() -> Counter[tuple[int, int]]:
    return Counter(event(i) for i in range(COUNT))


@pytest.mark.timeout(180)
def test_a_failing_subtask_restarts_only_its_region_exactly_once(tmp_path: Path) -> None:
    env = _env()
    out = tmp_path / "out"
    _pipeline(env, out, 6_000, FailOnceAfterACheckpoint(tmp_path / "failed"))
    client = env.execute_async("region failover")
    seen: list[dict[tuple[str, int], tuple[int, str]]] = []

    def restarted() -> bool:
        attempts = _attempts(client)
        if any(a == 1 and st == "RUNNING" for (_, i), (a, st) in attempts.items() if i == FAILING_SUBTASK):
            seen.append(attempts)
            return True
        return client.get_job_status().is_globally_terminal

    deadline = time.monotonic() + 120
    while not restarted() and time.monotonic() < deadline:
        time.sleep(0.1)
    result = client.get_job_execution_result()
    assert (tmp_path / "failed").exists(), "subtask 2 never failed"
    assert seen, "the failed region was not seen running again before the job ended"
    attempts = seen[-1]
    assert len(attempts) == 12
    for (name, subtask), (attempt, _) in attempts.items():
        assert attempt == (1 if subtask == FAILING_SUBTASK else 0), (name, subtask, attempts)
    assert result.num_restarts == 1
    # checkpoints go on for the whole job after the region restart: one completed that every subtask acknowledged
    failed_at_ms = (tmp_path / "failed").stat().st_mtime * 1000
    after = [c for c in result.checkpoints if c.status == "COMPLETED" and c.trigger_timestamp_ms > failed_at_ms]
    assert after, [(c.checkpoint_id, c.status, c.failure_reason) for c in result.checkpoints]
    assert len(after[0].subtasks) == 12, sorted(after[0].subtasks)
    rows = Counter(tuple(r) for r in committed_rows(out))
    assert rows == _expected_rows()
    # the exception history names the failed subtask and the restarted region
    jm = client._cluster.dispatcher.job_masters[client.get_job_id()]  # type: ignore[attr-defined]
    (entry,) = jm.exception_history
    assert entry.task_name == "Map (3/4)"
    assert "failing on purpose, once" in entry.text
    assert sorted(entry.restarted_tasks) == ["Map (3/4)", "Sink: Writer (3/4)", "Source: events (3/4)"]
    # and through the end: only subtask 2 of each vertex ever had a second attempt
    final = {(r["job_vertex_id"], r["subtask_index"]): r["attempt_number"] for r in jm.execution_snapshot()}
    assert len(final) == 12
    assert all(a == (1 if i == FAILING_SUBTASK else 0) for (_, i), a in final.items()), final


@pytest.mark.timeout(180)
def test_full_restarts_every_subtask(tmp_path: Path) -> None:
    env = _env()
    env.get_configuration().set_string("jobmanager.execution.failover-strategy", "full")
    out = tmp_path / "out"
    _pipeline(env, out, 6_000, FailOnceAfterACheckpoint(tmp_path / "failed"))
    client = env.execute_async("full failover")
    result = client.get_job_execution_result()
    assert (tmp_path / "failed").exists(), "subtask 2 never failed"
    assert result.num_restarts == 1
    jm = client._cluster.dispatcher.job_masters[client.get_job_id()]  # type: ignore[attr-defined]
    assert sorted(r["attempt_number"] for r in jm.execution_snapshot()) == [1] * 12
    (entry,) = jm.exception_history
    assert entry.task_name == "Map (3/4)" and entry.restarted_tasks == ()
    assert Counter(tuple(r) for r in committed_rows(out)) == _expected_rows()


@pytest.mark.timeout(180)
def test_two_failing_regions_restart_each_on_its_own_and_count_twice(tmp_path: Path) -> None:
    env = _env()
    out = tmp_path / "out"
    (tmp_path / "failed").mkdir()
    _pipeline(env, out, 6_000, FailOnceAfterACheckpoint(tmp_path / "failed", subtasks=(0, 3)))
    client = env.execute_async("two region failovers")
    result = client.get_job_execution_result()
    assert sorted(p.name for p in (tmp_path / "failed").iterdir()) == ["0", "3"]
    assert result.num_restarts == 2  # the restart strategy is told of each failure (Flink's ExecutionFailureHandler)
    jm = client._cluster.dispatcher.job_masters[client.get_job_id()]  # type: ignore[attr-defined]
    final = {(r["job_vertex_id"], r["subtask_index"]): r["attempt_number"] for r in jm.execution_snapshot()}
    assert all(a == (1 if i in (0, 3) else 0) for (_, i), a in final.items()), final
    assert sorted(e.task_name for e in jm.exception_history) == ["Map (1/4)", "Map (4/4)"]
    for e in jm.exception_history:
        assert sorted(t[-5:] for t in e.restarted_tasks) == [e.task_name[-5:]] * 3
    assert Counter(tuple(r) for r in committed_rows(out)) == _expected_rows()


KILLED_SUBTASK = 1


def _sink_records(client: JobClient) -> dict[int, tuple[int, float]]:
    """Sink subtask -> (attempt number, numRecordsIn) of the running sink subtasks."""
    return {
        m.subtask_index: (m.attempt_number, m.metrics.get("numRecordsIn", 0.0))
        for m in client.get_metrics()
        if m.task_name.startswith("Sink") and m.state == "RUNNING"
    }


def _kill_region_of(client: JobClient, subtask: int, progress: dict[str, Any]) -> None:
    """SIGKILLs the TaskManager running ``subtask`` (its region) after two checkpoints; records the other sink
    subtasks' input counts at the kill and when the killed region runs again."""
    import os
    import signal

    completed_checkpoints(client, 2)
    registered = client._cluster.dispatcher.resource_manager.slot_manager.task_managers  # type: ignore[attr-defined]
    (tm_id,) = {m.task_manager_id for m in client.get_metrics() if m.subtask_index == subtask}
    progress["before"] = _sink_records(client)
    os.kill(registered[tm_id].pid, signal.SIGKILL)
    progress["killed"] = registered[tm_id].pid
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not client.get_job_status().is_globally_terminal:
        now = _sink_records(client)
        if now.get(subtask, (0, 0.0))[0] == 1:
            progress["back"] = now
            progress["exceptions"] = _get(client, f"/jobs/{client.get_job_id()}/exceptions")
            return
        time.sleep(0.05)


@pytest.mark.processes  # kills a TaskManager
@pytest.mark.timeout(180)
def test_a_killed_task_manager_restarts_only_its_region_while_the_others_produce(tmp_path: Path) -> None:
    env = _env(kills=True)
    out = tmp_path / "out"
    _pipeline(env, out, 4_000, lambda v: v)
    client = env.execute_async("region failover with a kill")
    progress: dict[str, Any] = {}
    killer = threading.Thread(target=_kill_region_of, args=(client, KILLED_SUBTASK, progress))
    killer.start()
    try:
        result = client.get_job_execution_result()
    finally:
        killer.join()
    assert "killed" in progress, "the job ended before a TaskManager was killed"
    assert "back" in progress, "the killed region did not run again before the job ended"
    before, back = progress["before"], progress["back"]
    for i in range(4):
        if i != KILLED_SUBTASK:  # the other regions kept their attempts and kept producing meanwhile
            assert back[i][0] == 0 and back[i][1] > before[i][1], (i, before, back)
    assert result.num_restarts == 1
    jm = client._cluster.dispatcher.job_masters[client.get_job_id()]  # type: ignore[attr-defined]
    final = {(r["job_vertex_id"], r["subtask_index"]): r["attempt_number"] for r in jm.execution_snapshot()}
    assert all(a == (1 if i == KILLED_SUBTASK else 0) for (_, i), a in final.items()), final
    (entry,) = jm.exception_history
    assert str(progress["killed"]) in entry.text
    # the root names the first lost subtask of the region, the other two of it are its concurrent exceptions
    (rest,) = progress["exceptions"]["exceptionHistory"]["entries"]
    assert rest["taskName"] == entry.task_name and rest["taskName"].endswith("(2/4)")
    assert sorted(c["taskName"] for c in rest["concurrentExceptions"]) == sorted(
        {"Map (2/4)", "Sink: Writer (2/4)", "Source: events (2/4)"} - {entry.task_name}
    )
    assert sorted(entry.restarted_tasks) == ["Map (2/4)", "Sink: Writer (2/4)", "Source: events (2/4)"]
    assert Counter(tuple(r) for r in committed_rows(out)) == _expected_rows()
