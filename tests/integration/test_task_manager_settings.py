"""What a TaskManager process sets for its task threads, seen from inside a running job."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import psutil
import pytest
from processes import running_task_managers

from strom import Configuration, StreamExecutionEnvironment
from strom.exceptions import ConfigurationError


def _switch_intervals(conf: Configuration) -> set[tuple[int, float]]:
    env = StreamExecutionEnvironment.get_execution_environment(conf)
    env.set_parallelism(2)
    stream = env.from_sequence(0, 99).map(lambda _: (os.getpid(), sys.getswitchinterval()))
    with stream.execute_and_collect() as results:
        return set(results)


@pytest.mark.timeout(90)
def test_task_threads_hand_over_the_gil_every_millisecond_by_default() -> None:
    seen = _switch_intervals(Configuration())
    pids = {pid for pid, _ in seen}
    assert len(pids) == 2 and os.getpid() not in pids  # two TaskManager processes
    assert {interval for _, interval in seen} == {0.001}
    assert sys.getswitchinterval() == 0.005  # the client's interpreter is left alone


@pytest.mark.timeout(90)
def test_switch_interval_is_configurable_and_zero_keeps_pythons_own() -> None:
    assert {i for _, i in _switch_intervals(Configuration({"taskmanager.python.switch-interval": 0.5}))} == {0.0005}
    assert {i for _, i in _switch_intervals(Configuration({"taskmanager.python.switch-interval": 0}))} == {0.005}


@pytest.mark.timeout(60)
def test_a_negative_switch_interval_is_refused_before_any_process_starts() -> None:
    env = StreamExecutionEnvironment.get_execution_environment(
        Configuration({"taskmanager.python.switch-interval": -1})
    )
    env.from_sequence(0, 9).map(lambda x: x).add_sink(lambda v: None)
    with pytest.raises(ConfigurationError, match=r"taskmanager\.python\.switch-interval >= 0.*got -1"):
        env.execute("negative switch interval")
    assert not running_task_managers()  # zombies left by earlier tests are none of this test's business


@pytest.mark.timeout(60)
def test_the_check_above_is_not_tripped_by_a_zombie_child_of_someone_else() -> None:
    """Under load an earlier test's child may still be a zombie (exited, not yet waited for) here."""
    other = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        while psutil.Process(other.pid).status() != psutil.STATUS_ZOMBIE:  # exits at once; we do not wait yet
            time.sleep(0.01)
        test_a_negative_switch_interval_is_refused_before_any_process_starts()
    finally:
        other.wait(timeout=10)  # whoever starts a process reaps it
