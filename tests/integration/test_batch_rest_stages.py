"""The REST view of a BATCH job's stages (Flink's REST has no stage list: ``/jobs/:jobid`` shows each vertex's
aggregate state, and its ``tasks`` counts per state, as the stages run). A job of two stages, four tasks each, on
two one-slot TaskManagers: while the first stage runs, its vertex is RUNNING and the second's CREATED; once the
first is FINISHED the second runs; at the end both are FINISHED. Polled over real HTTP on a MiniCluster."""

from __future__ import annotations

import itertools
import json
import time
import urllib.request
from typing import Any

import pytest

from strom import Configuration, DataGeneratorSource, StreamExecutionEnvironment
from strom.api.execution_mode import RuntimeExecutionMode

pytestmark = pytest.mark.processes

PARALLELISM = 4


def _slowly(v: int) -> int:
    time.sleep(0.002)
    return v


def _get(url: str, path: str) -> Any:
    with urllib.request.urlopen(url + path, timeout=30) as resp:
        return json.loads(resp.read())


@pytest.mark.timeout(180)
def test_job_vertices_show_created_running_finished_stage_by_stage() -> None:
    env = StreamExecutionEnvironment.get_execution_environment(
        Configuration({"taskmanager.numberOfTaskSlots": 1, "minicluster.number-of-taskmanagers": 2})
    )
    env.set_parallelism(PARALLELISM)
    env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    (
        env.from_source(DataGeneratorSource(lambda i: i, 1200), source_name="numbers")
        .map(_slowly)
        .name("first stage")
        .key_by(lambda v: v % 10)
        .map(_slowly)
        .name("second stage")
        .add_sink(lambda _: None)
    )
    client = env.execute_async("batch stages")
    seen: list[tuple[str, str]] = []
    counts: list[dict[str, int]] = []
    try:
        url, job_id = client.get_rest_url(), client.get_job_id()
        deadline = time.monotonic() + 150
        while True:
            job = _get(url, f"/jobs/{job_id}")
            first, second = job["vertices"]
            assert [first["name"].endswith("first stage"), second["name"].startswith("second stage")] == [True, True]
            if not seen or seen[-1] != (first["status"], second["status"]):
                seen.append((first["status"], second["status"]))
            counts.append(first["tasks"])
            if job["state"] == "FINISHED":
                break
            assert job["state"] == "RUNNING" and time.monotonic() < deadline, job["state"]
            time.sleep(0.05)
    finally:
        client.close()
    assert ("RUNNING", "CREATED") in seen, seen
    assert ("FINISHED", "RUNNING") in seen, seen
    assert seen[-1] == ("FINISHED", "FINISHED"), seen
    # the second stage never runs before the first is done, and a finished stage stays finished
    for (s1, s2), (later1, _) in itertools.pairwise(seen):
        assert s2 == "CREATED" or s1 == "FINISHED", seen
        assert s1 != "FINISHED" or later1 == "FINISHED", seen
    # two slots: the first stage's four tasks never all run at once, and some wait while others run
    assert all(c.get("RUNNING", 0) + c.get("INITIALIZING", 0) + c.get("DEPLOYING", 0) <= 2 for c in counts), counts
    assert any(c.get("RUNNING", 0) and c.get("CREATED", 0) + c.get("SCHEDULED", 0) for c in counts), counts
