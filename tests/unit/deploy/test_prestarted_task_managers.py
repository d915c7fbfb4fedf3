"""TaskManager processes started before their cluster's JobManager (issue 33, start-up): who they are from the start,
the rest of their command line on stdin, and nothing left behind when the cluster does not take them."""

from __future__ import annotations

import subprocess
import sys

import pytest

from strom import StreamExecutionEnvironment
from strom.config import Configuration
from strom.deploy.prestarted_task_managers import PrestartedTaskManagers, task_manager_id
from strom.runtime.taskexecutor import COMMAND_LINE_ON_STDIN


def test_they_are_the_clusters_first_task_managers_by_id() -> None:
    spares = PrestartedTaskManagers(2)
    try:
        first, second = spares.take("tm-1"), spares.take(task_manager_id(2))
        assert first is not None and second is not None
        assert "--tm-id=tm-1" in first.args and COMMAND_LINE_ON_STDIN in first.args
        assert spares.take("tm-1") is None and spares.take("tm-3") is None
        for proc in (first, second):  # taken: its owner ends it (here: its stdin closes before a command line came)
            assert proc.stdin is not None
            proc.stdin.close()
            assert proc.wait(timeout=60) == 0
    finally:
        spares.close()


def test_those_not_taken_end_when_closed() -> None:
    spares = PrestartedTaskManagers(2)
    procs = list(spares._waiting.values())
    spares.close()  # ended at once, even while still importing: none of them is a TaskManager yet
    assert all(p.returncode is not None for p in procs)
    spares.close()  # idempotent


def test_a_malformed_command_line_on_stdin_is_refused() -> None:
    cmd = [sys.executable, "-m", "strom.runtime.taskexecutor", "--tm-id=tm-1", COMMAND_LINE_ON_STDIN]
    done = subprocess.run(cmd, input=b'{"not": "a list"}\n', capture_output=True, timeout=60)
    assert done.returncode == 2
    assert b"expected its command line (a JSON list of strings) on stdin" in done.stderr


@pytest.mark.processes
@pytest.mark.timeout(120)
def test_a_local_job_runs_on_the_prestarted_processes() -> None:
    env = StreamExecutionEnvironment.get_execution_environment(Configuration({"parallelism.default": 2}))
    env.from_collection(list(range(10))).map(lambda x: x * 2).add_sink(lambda v: None)
    client = env.execute_async("prestarted")
    result = client.get_job_execution_result()
    pids = client.task_manager_pids()
    assert len(pids) == 2
    assert set(result.task_pids.values()) <= set(pids)
    processes = client._cluster.processes  # type: ignore[attr-defined]  # a MiniCluster's
    assert all(COMMAND_LINE_ON_STDIN in p.args for p in processes), [p.args for p in processes]
