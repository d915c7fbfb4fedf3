"""The JobMaster keeps the newest ``web.exception-history-size`` failures (Flink's 16), whatever the job's age
(issue 31 §1: its memory must not grow with every failure of a long-running job)."""

from __future__ import annotations

import asyncio

from strom import Configuration, StreamExecutionEnvironment
from strom.runtime.jobmaster.jobmaster import JobMaster
from strom.runtime.resourcemanager.resource_manager import ResourceManager


def _history_after(failures: int, configuration: Configuration) -> list[str]:
    env = StreamExecutionEnvironment.get_execution_environment(configuration)
    env.from_sequence(0, 10).add_sink(lambda v: None)
    job_graph = env.get_job_graph()

    async def run() -> list[str]:
        rm = ResourceManager(secret=b"s" * 32, heartbeat_interval=1.0, heartbeat_timeout=5.0)
        jm = JobMaster(job_graph, rm, slot_timeout=1.0)
        for i in range(failures):
            jm._record_exception(f"failure {i}", ValueError(str(i)), None)
        jm.task_group.close()
        jm.task_group.cancel()
        return [e.text for e in jm.exception_history]

    names = asyncio.run(asyncio.wait_for(run(), 30))
    return names


def test_the_newest_failures_are_kept_and_no_more() -> None:
    assert len(_history_after(100, Configuration())) == 16
    kept = _history_after(5, Configuration({"web.exception-history-size": 2}))
    assert [text.splitlines()[0] for text in kept] == ["failure 3", "failure 4"]
