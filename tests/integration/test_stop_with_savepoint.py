"""Stop-with-savepoint when a task cannot be stopped: its TaskManager dies while the job stops after the savepoint.

The savepoint is taken; the job the user stopped ends CANCELED — it is not failed over into a job that runs on —
and the savepoint stays for a resume.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from failover import completed_checkpoints, failover_env

from strom import DataGeneratorSource
from strom.api.functions import RuntimeContext, SinkFunction
from strom.runtime.execution_state import JobStatus


class SlowToClose(SinkFunction[Any]):
    """Subtask 0 announces its close (with its TaskManager's pid) and then hangs in it, as user code can."""

    def __init__(self, markers: str) -> None:
        self.markers = markers
        self.index = -1

    def open(self, runtime_context: RuntimeContext) -> None:
        self.index = runtime_context.get_index_of_this_subtask()

    def invoke(self, value: Any, context: Any) -> None:
        pass

    def close(self) -> None:
        if self.index != 0:
            return
        Path(self.markers, f"closing-{os.getpid()}").touch()
        deadline = time.monotonic() + 120  # its TaskManager is killed long before
        while time.monotonic() < deadline:
            time.sleep(0.05)


@pytest.mark.processes  # kills the TaskManager of a task by its pid
@pytest.mark.timeout(180)
def test_a_task_manager_lost_while_the_job_stops_ends_it_canceled_and_keeps_the_savepoint(tmp_path: Path) -> None:
    markers = tmp_path / "markers"
    markers.mkdir()
    env = failover_env(parallelism=2)  # restarts allowed: the job must not be failed over after the stop
    (
        env.from_source(DataGeneratorSource(lambda i: (i % 5, i), 10**12, records_per_second=2000), source_name="gen")
        .uid("gen")
        .key_by(lambda e: e[0])
        .add_sink(SlowToClose(str(markers)))
        .uid("slow to close")
    )
    client = env.execute_async("stopped")
    try:
        completed_checkpoints(client, 1)
        outcome: dict[str, Any] = {}

        def stop() -> None:
            try:
                outcome["savepoint"] = client.stop_with_savepoint(str(tmp_path / "savepoints"))
            except BaseException as exc:  # reported below
                outcome["error"] = exc

        stopper = threading.Thread(target=stop)
        stopper.start()
        deadline = time.monotonic() + 60
        while not (closing := list(markers.glob("closing-*"))):
            assert time.monotonic() < deadline, "expected the sink's subtask 0 to be stopped within 60 s"
            time.sleep(0.02)
        os.kill(int(closing[0].name.split("-")[1]), signal.SIGKILL)  # its TaskManager, while it stops
        stopper.join(timeout=90)
        assert not stopper.is_alive(), "the stop did not return"
        assert "error" not in outcome, outcome.get("error")
        assert (Path(outcome["savepoint"]) / "_metadata").exists()
        assert client.get_job_status() is JobStatus.CANCELED
        assert client._result is not None and client._result.num_restarts == 0  # not failed over
    finally:
        client.close()
