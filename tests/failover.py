"""Helpers of the tests that kill TaskManagers mid-job: wait for completed checkpoints, kill one TaskManager,
read what a ``FileSink`` committed. Importable from every test directory (``pythonpath`` in pyproject.toml)."""

from __future__ import annotations

import json
import os
import random
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def completed_checkpoints(
    client: Any, at_least: int = 1, *, timeout_s: float = 60.0, where: Callable[[Any], bool] = lambda c: True
) -> list[Any]:
    """Waits until ``at_least`` checkpoints (those ``where`` accepts) completed, and returns them; fails the
    test when the job ends or ``timeout_s`` passes first."""
    deadline = time.monotonic() + timeout_s
    done: list[Any] = []
    while time.monotonic() < deadline:
        done = [c for c in client.get_checkpoint_statistics() if c.status == "COMPLETED" and where(c)]
        if len(done) >= at_least or client.get_job_status().is_globally_terminal:
            break
        time.sleep(0.02)
    assert len(done) >= at_least, f"expected {at_least} completed checkpoint(s) before the kill; got {len(done)}"
    return done


def kill_a_task_manager(client: Any, seed: int) -> int:
    """SIGKILLs one of the job's live TaskManager processes (chosen by ``seed``) and returns its pid."""
    victim = random.Random(seed).choice(client.live_task_manager_pids())
    os.kill(victim, signal.SIGKILL)
    return int(victim)


def committed_rows(directory: Path) -> list[tuple[Any, ...]]:
    """The JSON-lines rows of the files a ``FileSink`` committed, in any bucket directory: those under final names
    (in-progress and pending files are hidden dot files)."""
    return [tuple(json.loads(line)) for f in committed_files(directory) for line in f.read_text().splitlines()]


def committed_files(directory: Path) -> list[Path]:
    """The files a ``FileSink`` committed under ``directory``, in its buckets (by default Flink's
    ``yyyy-MM-dd--HH`` directories, more than one when a job runs across the hour), in name order."""
    return sorted(
        f
        for f in directory.rglob("*")
        if f.is_file() and not any(p.startswith(".") for p in f.relative_to(directory).parts)
    )


def _completed_ids(client: Any) -> set[int]:
    return {c.checkpoint_id for c in client.get_checkpoint_statistics() if c.status == "COMPLETED"}


def kill_task_managers(client: Any, kills: int, rng: random.Random, killed: list[int]) -> None:
    """Three times: once the (restarted) job runs fully again — a new checkpoint completed, which takes every
    task RUNNING — wait a random moment, then SIGKILL one TaskManager process."""
    seen: set[int] = set()
    for _ in range(kills):
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not (_completed_ids(client) - seen):
            if client.get_job_status().is_globally_terminal:
                return
            time.sleep(0.02)
        time.sleep(rng.uniform(0.1, 0.8))
        if client.get_job_status().is_globally_terminal:
            return
        seen = _completed_ids(client)
        deadline = time.monotonic() + 10  # the restarted attempts' first metrics come with their next heartbeat
        while not (pids := _pids_running_tasks(client)):
            if client.get_job_status().is_globally_terminal or time.monotonic() > deadline:
                return
            time.sleep(0.02)
        victim = rng.choice(pids)
        os.kill(victim, signal.SIGKILL)
        killed.append(victim)


def _pids_running_tasks(client: Any) -> list[int]:
    """The live TaskManagers that run a subtask now: killing one that hosts only finished subtasks (a source that
    ended) fails nothing over."""
    live = set(client.live_task_manager_pids())
    registered = client._cluster.dispatcher.resource_manager.slot_manager.task_managers
    running = {m.task_manager_id for m in client.get_metrics() if m.state == "RUNNING"}
    return sorted({reg.pid for tm_id, reg in list(registered.items()) if tm_id in running} & live)


def failover_env(parallelism: int = 2, interval_ms: int = 200, attempts: int = 20) -> Any:
    """An environment for jobs whose TaskManagers get killed: one slot per TaskManager and one TaskManager per
    subtask (a kill takes one subtask), a lost TaskManager noticed within a second, a bounded fixed-delay restart
    strategy, checkpoints every ``interval_ms``."""
    from strom import Configuration, StreamExecutionEnvironment

    config = Configuration(
        {
            "taskmanager.numberOfTaskSlots": 1,
            "minicluster.number-of-taskmanagers": parallelism,
            "heartbeat.interval": "250 ms",
            "heartbeat.timeout": "1 s",
            "restart-strategy.type": "fixed-delay",
            "restart-strategy.fixed-delay.attempts": attempts,
            "restart-strategy.fixed-delay.delay": 200,
        }
    )
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(parallelism)
    env.enable_checkpointing(interval_ms)
    return env


def result_with_kills(client: Any, kills: int, seed: int) -> tuple[Any, list[int]]:
    """The job's result, with ``kills`` TaskManagers SIGKILLed meanwhile (:func:`kill_task_managers`, in a
    thread); also the killed pids."""
    import threading

    killed: list[int] = []
    killer = threading.Thread(target=kill_task_managers, args=(client, kills, random.Random(seed), killed))
    killer.start()
    try:
        return client.get_job_execution_result(), killed
    finally:
        killer.join()
