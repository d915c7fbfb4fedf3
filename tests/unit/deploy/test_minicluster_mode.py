"""``minicluster.taskmanager-mode``: processes by default, threads on request, anything else refused with a hint."""

from __future__ import annotations

import pytest

from strom import Configuration
from strom.deploy.minicluster import MiniCluster
from strom.deploy.prestarted_task_managers import PROCESS, THREAD, task_manager_mode
from strom.deploy.task_manager_thread import TaskManagerThread
from strom.exceptions import ConfigurationError
from strom.runtime.taskexecutor.runner import TaskManagerSpec


def test_processes_are_the_default_and_threads_are_chosen_by_the_option() -> None:
    assert task_manager_mode(Configuration()) == PROCESS
    assert task_manager_mode(Configuration({"minicluster.taskmanager-mode": "Thread"})) == THREAD
    assert MiniCluster(Configuration(), num_task_managers=1).task_manager_mode == PROCESS


def test_an_unknown_mode_is_refused_before_anything_starts() -> None:
    with pytest.raises(ConfigurationError) as info:
        MiniCluster(Configuration({"minicluster.taskmanager-mode": "fork"}), num_task_managers=1)
    message = str(info.value)
    assert "expected 'process' or 'thread' for minicluster.taskmanager-mode; got 'fork'" in message
    assert "hint: the default is 'process'" in message


def test_a_task_manager_thread_refuses_a_spec_that_owns_its_process() -> None:
    spec = TaskManagerSpec(tm_id="tm-1", launch_token="t", jm_address=("127.0.0.1", 1))
    with pytest.raises(ValueError, match="owns_process=False"):
        TaskManagerThread(spec, b"secret", on_exit=lambda _: None)
