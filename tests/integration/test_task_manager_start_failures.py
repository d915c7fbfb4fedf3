"""TaskManager processes that end before they register (Flink's ``ActiveResourceManager``: a start failure) are
replaced; when they keep ending — ``resourcemanager.start-worker.max-failure-rate`` within a minute — the cluster's
start or the job waiting for their slots fails with the last one's exit code instead of hanging or restarting.

Deterministic, without timing: a ``sitecustomize`` module on the TaskManagers' ``PYTHONPATH`` (the MiniCluster hands
its children this process's ``sys.path``) ends chosen TaskManager processes — by their ``--tm-id``, ids are never
reused — before their interpreter has even imported strom, so before they could register.
"""

from __future__ import annotations

import json
import signal
import textwrap
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from failover import completed_checkpoints, kill_a_task_manager

from strom import Configuration, DataGeneratorSource, StreamExecutionEnvironment
from strom.config import ClusterOptions, RestartStrategyOptions, TaskManagerOptions
from strom.connectors.file_system import FileSink, JsonLinesEncoder
from strom.deploy.minicluster import MiniCluster
from strom.exceptions import JobExecutionError, TaskManagerStartError
from strom.runtime.execution_state import JobStatus

SITECUSTOMIZE = textwrap.dedent(
    """
    import os, signal, sys

    _args = list(getattr(sys, "orig_argv", []))
    if "strom.runtime.taskexecutor" in _args:
        _tm = next((a.split("=", 1)[1] for a in _args if a.startswith("--tm-id=")), "")
        _kill = os.environ.get("STROM_TEST_KILL_BEFORE_REGISTERING", "").split(",")
        _exit_from = int(os.environ.get("STROM_TEST_EXIT_FROM", "0") or 0)
        if _tm in _kill:
            open(os.path.join(os.environ["STROM_TEST_MARKS"], _tm), "w").close()
            os.kill(os.getpid(), signal.SIGKILL)
        if _exit_from and _tm.startswith("tm-") and int(_tm[3:]) >= _exit_from:
            print(f"test: TaskManager {_tm} cannot start: No module named 'missing_dependency'", file=sys.stderr)
            sys.stderr.flush()
            os._exit(3)
    """
)


@pytest.fixture
def end_task_managers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Path]:
    """``end_task_managers(kill=["tm-1"], exit_from=0)``: TaskManagers named in ``kill`` SIGKILL themselves before
    registering (each leaves a mark in the returned directory); with ``exit_from`` n, every TaskManager tm-<k>, k >= n,
    prints an error and exits with code 3."""
    hooks = tmp_path / "hooks"
    marks = tmp_path / "marks"
    hooks.mkdir()
    marks.mkdir()
    (hooks / "sitecustomize.py").write_text(SITECUSTOMIZE)
    monkeypatch.syspath_prepend(str(hooks))  # the TaskManagers' PYTHONPATH
    monkeypatch.setenv("STROM_TEST_MARKS", str(marks))

    def configure(kill: list[str] = [], exit_from: int = 0) -> Path:  # noqa: B006 (read only)
        monkeypatch.setenv("STROM_TEST_KILL_BEFORE_REGISTERING", ",".join(kill))
        monkeypatch.setenv("STROM_TEST_EXIT_FROM", str(exit_from))
        return marks

    return configure


COUNT = 20_000


def failover_env(attempts: int, **options: object) -> StreamExecutionEnvironment:
    """As ``failover.failover_env``: one slot per TaskManager, two of them, a lost one noticed within a second,
    checkpoints every 200 ms; plus ``options``."""
    config = Configuration(
        {
            TaskManagerOptions.NUM_TASK_SLOTS.key: 1,
            ClusterOptions.NUM_TASK_MANAGERS.key: 2,
            "heartbeat.interval": "250 ms",
            "heartbeat.timeout": "1 s",
            RestartStrategyOptions.RESTART_STRATEGY.key: "fixed-delay",
            RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS.key: attempts,
            RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY.key: 200,
            **options,
        }
    )
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(2)
    env.enable_checkpointing(200)
    return env


def event(i: int) -> tuple[int, int]:
    return (i % 5, i)


def committed(out: Path) -> list[tuple[Any, ...]]:
    rows: list[tuple[Any, ...]] = []
    for f in sorted(p for p in out.rglob("*") if p.is_file()):
        assert not f.name.startswith("."), f"an uncommitted part was left: {f}"
        rows.extend(tuple(json.loads(line)) for line in f.read_text().splitlines())
    return rows


def files_job(env: StreamExecutionEnvironment, out: Path) -> None:
    (
        env.from_source(DataGeneratorSource(event, COUNT, records_per_second=10_000), source_name="events")
        .uid("events")
        .sink_to(FileSink.for_row_format(str(out), JsonLinesEncoder()).build())
        .uid("files")
    )


@pytest.mark.timeout(120)
def test_a_first_task_manager_killed_before_registering_is_replaced_and_the_job_finishes_exactly_once(
    tmp_path: Path, end_task_managers: Callable[..., Path]
) -> None:
    marks = end_task_managers(kill=["tm-1"])
    env = failover_env(attempts=3)
    files_job(env, tmp_path / "out")
    client = env.execute_async("first TaskManager killed")
    result = client.get_job_execution_result()
    cluster = client._cluster
    assert isinstance(cluster, MiniCluster)
    assert (marks / "tm-1").exists()
    assert cluster._process_of["tm-1"].returncode == -signal.SIGKILL
    assert "tm-1" not in cluster._registered_pids and {"tm-2", "tm-3"} <= set(cluster._registered_pids)
    assert result.num_restarts == 0  # the job started on the replacement: nothing to fail over
    rows = committed(tmp_path / "out")
    assert len(rows) == COUNT and Counter(rows) == Counter(event(i) for i in range(COUNT))


@pytest.mark.timeout(150)
def test_a_replacement_killed_before_registering_is_replaced_and_the_job_finishes_exactly_once(
    tmp_path: Path, end_task_managers: Callable[..., Path]
) -> None:
    """A TaskManager is killed mid-job; its replacement (tm-3) dies before registering: another one (tm-4) is
    started and the job restores its checkpoint there. Without it the job waited for slot.request.timeout on every
    restart and failed for want of slots."""
    marks = end_task_managers(kill=["tm-3"])
    env = failover_env(attempts=3, **{ClusterOptions.SLOT_REQUEST_TIMEOUT.key: "15 s"})
    files_job(env, tmp_path / "out")
    client = env.execute_async("replacement killed")
    killed: list[int] = []

    def kill() -> None:
        completed_checkpoints(client, 2)
        if not client.get_job_status().is_globally_terminal:
            killed.append(kill_a_task_manager(client, seed=1))

    killer = threading.Thread(target=kill)
    killer.start()
    try:
        result = client.get_job_execution_result()
    finally:
        killer.join()
    assert killed, "the job ended before a TaskManager was killed"
    cluster = client._cluster
    assert isinstance(cluster, MiniCluster)
    assert (marks / "tm-3").exists() and cluster._process_of["tm-3"].returncode == -signal.SIGKILL
    assert "tm-4" in cluster._registered_pids
    assert result.num_restarts >= 1
    rows = committed(tmp_path / "out")
    assert len(rows) == COUNT and Counter(rows) == Counter(event(i) for i in range(COUNT))


@pytest.mark.timeout(60)
def test_task_managers_that_never_start_fail_the_cluster_start_with_their_exit_code(
    tmp_path: Path, end_task_managers: Callable[..., Path], capfd: pytest.CaptureFixture[str]
) -> None:
    end_task_managers(exit_from=1)
    config = Configuration(
        {ClusterOptions.START_WORKER_MAX_FAILURE_RATE.key: 3, TaskManagerOptions.NUM_TASK_SLOTS.key: 1}
    )
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(2)
    env.from_sequence(0, 9).add_sink(lambda v: None)
    with pytest.raises(
        TaskManagerStartError,
        match=r"got 3 that ended before registering within a minute "
        r"\(resourcemanager\.start-worker\.max-failure-rate: 3\), the last: TaskManager tm-\d \(pid \d+\) exited "
        r"with code 3; its error output is above .*hint: a TaskManager is `.* -m strom\.runtime\.taskexecutor`",
    ):
        env.execute("never starts")
    assert "No module named 'missing_dependency'" in capfd.readouterr().err


@pytest.mark.timeout(90)
def test_task_managers_that_never_start_fail_the_job_instead_of_restarting_it_forever(
    end_task_managers: Callable[..., Path],
) -> None:
    """The cluster started; a TaskManager is killed mid-job and no replacement ever registers. The restart strategy
    would restart forever: the job fails with the TaskManagers' exit code instead, no restart after it."""
    end_task_managers(exit_from=3)
    env = failover_env(attempts=1_000_000, **{ClusterOptions.START_WORKER_MAX_FAILURE_RATE.key: 4})
    env.from_sequence(0, 10**9).map(lambda x: x).rebalance().add_sink(lambda v: None)
    client = env.execute_async("replacements never start")
    completed_checkpoints(client, 1)
    kill_a_task_manager(client, seed=0)
    with pytest.raises(
        JobExecutionError, match=r"TaskManagerStartError: .*got [4-9] that ended before registering"
    ) as e:
        client.get_job_execution_result()
    assert "exited with code 3" in str(e.value)
    assert "allows no further restart" not in str(e.value)  # not the restart strategy's end: it was not asked


class AppendTo:
    """A sink that appends each record as a line to ``path`` (from the TaskManager processes)."""

    def __init__(self, path: Path) -> None:
        self.path = str(path)

    def __call__(self, value: int) -> None:
        with open(self.path, "a") as f:
            f.write(f"{value}\n")


@pytest.mark.timeout(120)
def test_a_task_manager_lost_while_no_job_runs_is_replaced_for_the_next_job(
    tmp_path: Path, end_task_managers: Callable[..., Path]
) -> None:
    """A registered TaskManager dies between jobs, and its replacement dies before registering: the next job still
    gets its slots and the right result."""
    end_task_managers(kill=["tm-3"])
    config = Configuration(
        {
            TaskManagerOptions.NUM_TASK_SLOTS.key: 1,
            RestartStrategyOptions.RESTART_STRATEGY.key: "none",
            "heartbeat.interval": "250 ms",
            "heartbeat.timeout": "1 s",
        }
    )
    cluster = MiniCluster(config, num_task_managers=2).start()
    try:
        assert cluster.dispatcher is not None
        victim = cluster._process_of["tm-2"]
        victim.send_signal(signal.SIGKILL)
        victim.wait(timeout=10)
        task_managers = cluster.dispatcher.resource_manager.slot_manager.task_managers
        deadline = time.monotonic() + 30
        while "tm-2" in task_managers:  # its connection closed: lost (a job now would not be given its slot)
            assert time.monotonic() < deadline, "expected tm-2 to be declared lost within 30 s"
            time.sleep(0.02)
        env = StreamExecutionEnvironment.get_execution_environment(config)
        env.set_parallelism(2)
        env.from_sequence(1, 1000).map(lambda x: x * 2).add_sink(AppendTo(tmp_path / "out.txt"))
        job_graph = env.get_job_graph("after a loss", clear=True)
        job_id = cluster.run(cluster.dispatcher.submit_job(job_graph))
        result = cluster.run(cluster.dispatcher.request_job_result(job_id), timeout=90)
        assert result.status is JobStatus.FINISHED, result.failure_text
        assert result.num_restarts == 0
        assert "tm-3" not in cluster._registered_pids and "tm-4" in cluster._registered_pids
    finally:
        cluster.close()
    lines = (tmp_path / "out.txt").read_text().split()
    assert sorted(map(int, lines)) == [2 * x for x in range(1, 1001)]
