"""The start-up split of a job: its phases from the client's stamps and the JobMaster's "every task RUNNING"."""

from __future__ import annotations

import os
import time
from types import SimpleNamespace
from typing import Any

import pytest

from strom.client import startup_split
from strom.client.startup_split import ClientStamps, StartupSplit, process_start_time
from strom.runtime.execution_state import ExecutionState
from strom.runtime.jobmaster.job_result import all_running_ms

STAMPS = ClientStamps(submitting=100.5, cluster_started=100.9, submitted=100.92, ended=101.0, closed=101.02)


def test_phases_follow_the_stamps(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(startup_split, "_program_started", 100.2)
    split = StartupSplit.of(STAMPS, all_running=100.95, process_start=100.0)
    assert split.interpreter == pytest.approx(0.2)
    assert split.program == pytest.approx(0.3)
    assert split.cluster == pytest.approx(0.4)
    assert split.deploy == pytest.approx(0.05)
    assert split.run == pytest.approx(0.05)
    assert split.shutdown == pytest.approx(0.02)
    assert split.total == pytest.approx(1.02)
    text = split.describe()
    assert text.startswith("interpreter and strom's imports 0.200 s · program 0.300 s · cluster 0.400 s")
    assert text.endswith("total 1.020 s")


def test_without_strom_run_the_program_counts_from_the_process_start(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(startup_split, "_program_started", None)
    split = StartupSplit.of(STAMPS, all_running=100.95, process_start=100.0)
    assert split.interpreter is None
    assert split.program == pytest.approx(0.5)
    assert split.describe().startswith("program 0.500 s")


def test_a_job_whose_tasks_never_all_ran_deploys_until_its_end(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(startup_split, "_program_started", None)
    split = StartupSplit.of(STAMPS, all_running=0.0, process_start=None)
    assert split.deploy == pytest.approx(0.1)
    assert split.run == 0.0


def test_the_process_start_is_before_now() -> None:
    started = process_start_time()
    if not os.path.exists("/proc/self/stat"):
        assert started is None
        return
    assert started is not None
    assert time.time() - 3600 * 24 < started <= time.time() + 0.02


def _execution(**states: int) -> Any:
    return SimpleNamespace(state_timestamps={ExecutionState[name]: t for name, t in states.items()})


def test_every_task_running_is_the_last_to_go_running() -> None:
    assert all_running_ms([_execution(CREATED=1, RUNNING=10), _execution(CREATED=1, RUNNING=12, FINISHED=13)]) == 12
    assert all_running_ms([_execution(CREATED=1, RUNNING=10), _execution(CREATED=1)]) == 0
    assert all_running_ms([]) == 0
