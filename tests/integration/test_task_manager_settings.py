"""What a TaskManager process sets for its task threads, seen from inside a running job."""

from __future__ import annotations

import os
import sys

import psutil
import pytest

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
    children = [" ".join(p.cmdline()) for p in psutil.Process().children(recursive=True)]
    assert not [c for c in children if "strom.runtime.taskexecutor" in c]
