"""Flink's REST API on a real MiniCluster (TaskManager processes), over real HTTP.

Every path is read from a running job and its body checked field by field against the shapes of Flink's
``docs/static/generated/rest_v1_dispatcher.yml`` (and, where Flink 2.x changed them, its ``rest/messages``
classes) — the schema table of ``tests/rest_schemas.py``, shared with the standalone cluster's tests. Then the
calls that change a job: a savepoint polled until COMPLETED, stop with a savepoint, cancel with PATCH; 401 without
the token, 404 for unknown ids.
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from rest_schemas import EXECUTION_STATES, JOB_STATES, check, is_hex32

from strom import DataGeneratorSource, StreamExecutionEnvironment
from strom.client.job_client import JobClient

DURATION_STATES = {"CREATED", "SCHEDULED", "DEPLOYING", "INITIALIZING", "RUNNING"}
AGGREGATED_METRICS = {
    "read-bytes",
    "write-bytes",
    "read-records",
    "write-records",
    "accumulated-backpressured-time",
    "accumulated-busy-time",
    "accumulated-idle-time",
}
JVM_METRICS = (
    "Status.JVM.Memory.Heap.Used",
    "Status.JVM.Memory.Heap.Max",
    "Status.JVM.CPU.Load",
    "Status.JVM.CPU.Time",
    "Status.JVM.Threads.Count",
)


class Rest:
    def __init__(self, client: JobClient) -> None:
        self.url = client.get_rest_url()
        self.token = client.get_rest_token()
        self.job_id = client.get_job_id()

    def call(self, method: str, path: str, body: Any = None, *, token: str | None = "") -> tuple[int, Any]:
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path, data=data, method=method)
        if data is not None:
            req.add_header("Content-Type", "application/json")
        if token is not None:
            req.add_header("Authorization", f"Bearer {token or self.token}")
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                return resp.status, json.loads(resp.read() or b"null")
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read() or b"null")

    def get(self, path: str) -> Any:
        status, body = self.call("GET", path, token=None)
        assert status == 200, (path, status, body)
        return body


def wait_for(what: str, predicate: Callable[[], Any], timeout: float = 90.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


def endless_job(name: str, *, parallelism: int = 2) -> JobClient:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(parallelism)
    env.enable_checkpointing(200)
    (
        env.from_source(
            DataGeneratorSource(lambda i: (i % 7, 1), 10**12, records_per_second=500), source_name="numbers"
        )
        .uid("numbers")
        .key_by(lambda e: e[0])
        .reduce(lambda a, b: (a[0], a[1] + b[1]))
        .uid("sums")
        .add_sink(lambda _: None)
    )
    return env.execute_async(name)


@pytest.fixture
def job() -> Iterator[Rest]:
    client = endless_job("rest-reads")
    try:
        rest = Rest(client)
        # running, a completed checkpoint, and every subtask's metrics reported
        wait_for("a completed checkpoint", lambda: rest.get(f"/jobs/{rest.job_id}/checkpoints")["counts"]["completed"])
        wait_for(
            "metrics of every subtask",
            lambda: (
                all(v["metrics"]["read-records-complete"] for v in rest.get(f"/jobs/{rest.job_id}")["vertices"])
                and len(client.get_metrics()) == 4
            ),
        )
        yield rest
    finally:
        client.close()


def check_the_server_binds_loopback_on_a_free_port(job: Rest) -> None:
    parsed = urllib.parse.urlparse(job.url)
    assert parsed.hostname == "127.0.0.1"
    assert parsed.port and parsed.port != 8081  # the MiniCluster takes an ephemeral port unless rest.port is set
    assert is_hex32(job.job_id)


def check_cluster_paths_have_flinks_shapes(job: Rest) -> None:
    config = job.get("/config")
    check(config, "DashboardConfiguration")
    check(config["features"], "Features")
    overview = job.get("/overview")
    check(overview, "ClusterOverviewWithVersion")
    assert overview["taskmanagers"] == 2 and overview["slots-total"] == 2 and overview["jobs-running"] >= 1
    jobs = job.get("/jobs")
    assert job.job_id in [j["id"] for j in jobs["jobs"]]
    for entry in jobs["jobs"]:
        check(entry, "JobIdWithStatus")
    overview_jobs = job.get("/jobs/overview")["jobs"]
    mine = next(j for j in overview_jobs if j["jid"] == job.job_id)
    check(mine, "JobDetails")
    assert mine["state"] == "RUNNING" and mine["name"] == "rest-reads"
    assert mine["tasks"]["total"] == 4 and mine["tasks"]["running"] == 4
    assert job.get("/v1/overview")["taskmanagers"] == 2  # Flink serves /v1/ too
    # Flink 2.x's applications (its dashboard's landing page): each strom job is a single-job application
    apps = job.get("/applications/overview")["applications"]
    mine_app = next(a for a in apps if a["id"] == job.job_id)
    assert mine_app["status"] == "RUNNING" and mine_app["jobs"] == {"RUNNING": 1} and mine_app["name"] == "rest-reads"
    app = job.get(f"/applications/{job.job_id}")
    assert app["status"] == "RUNNING" and [j["jid"] for j in app["jobs"]] == [job.job_id]
    assert job.get(f"/applications/{job.job_id}/exceptions") == {"exceptionHistory": {"entries": []}}
    # the JobManager process's own figures under Flink's Status.JVM names, and its thread dump
    jm_metrics = {m["id"]: float(m["value"]) for m in job.get("/jobmanager/metrics?get=" + ",".join(JVM_METRICS))}
    assert set(jm_metrics) == set(JVM_METRICS) and jm_metrics["Status.JVM.Memory.Heap.Used"] > 0
    assert any(m["id"].startswith("Status.JVM.GarbageCollector.") for m in job.get("/jobmanager/metrics"))
    dump = job.get("/jobmanager/thread-dump")["threadInfos"]
    assert dump and all(set(t) == {"threadName", "stringifiedThreadInfo"} for t in dump)


def check_job_details_and_plan(job: Rest) -> None:
    details = job.get(f"/jobs/{job.job_id}")
    check(details, "JobDetailsInfo")
    assert details["state"] == "RUNNING" and details["job-type"] == "STREAMING"
    assert set(details["timestamps"]) == JOB_STATES and set(details["status-counts"]) == EXECUTION_STATES
    assert [v["name"] for v in details["vertices"]] == ["Source: numbers", "Keyed Reduce -> Sink: Unnamed"]
    for v in details["vertices"]:
        check(v, "JobDetailsVertexInfo")
        check(v["metrics"], "IOMetricsInfo")
        assert is_hex32(v["id"]) and v["status"] == "RUNNING" and v["parallelism"] == 2
        assert v["tasks"]["RUNNING"] == 2 and set(v["tasks"]) == EXECUTION_STATES
    source, reduce = details["vertices"]
    assert source["metrics"]["write-records"] > 0 and reduce["metrics"]["read-records"] > 0
    plan = job.get(f"/jobs/{job.job_id}/plan")["plan"]
    assert plan == details["plan"]
    check(plan, "Plan")
    for node in plan["nodes"]:
        check(node, "PlanNode")
    (edge,) = plan["nodes"][1]["inputs"]
    check(edge, "PlanInput")
    assert edge["id"] == source["id"] and edge["ship_strategy"] == "HASH"
    config = job.get(f"/jobs/{job.job_id}/config")
    assert config["jid"] == job.job_id and config["name"] == "rest-reads"
    assert config["execution-config"]["job-parallelism"] == 2 and config["execution-config"]["user-config"] == {}
    assert source["start-time"] > 0 and source["start-time"] >= details["start-time"]


def check_checkpoint_paths(job: Rest) -> None:
    stats = job.get(f"/jobs/{job.job_id}/checkpoints")
    check(stats, "CheckpointingStatistics")
    check(stats["counts"], "Counts")
    for name in ("checkpointed_size", "state_size", "end_to_end_duration", "persisted_data"):
        check(stats["summary"][name], "StatsSummaryDto")
    latest = stats["latest"]["completed"]
    check(latest, "CheckpointStatistics")
    check(latest, "CompletedCheckpointStatistics")
    assert latest["className"] == "completed" and latest["checkpoint_type"] == "CHECKPOINT"
    assert latest["num_acknowledged_subtasks"] == latest["num_subtasks"] == 4
    assert os.path.exists(os.path.join(latest["external_path"], "_metadata")) or latest["discarded"]
    for entry in stats["history"]:
        check(entry, "CheckpointStatistics")
    details = job.get(f"/jobs/{job.job_id}/checkpoints/details/{latest['id']}")
    check(details, "CheckpointStatistics")
    vertex_ids = {v["id"] for v in job.get(f"/jobs/{job.job_id}")["vertices"]}
    assert set(details["tasks"]) == vertex_ids
    for task in details["tasks"].values():
        check(task, "TaskCheckpointStatistics")
        assert task["num_acknowledged_subtasks"] == 2
    for vid in vertex_ids:
        per_subtask = job.get(f"/jobs/{job.job_id}/checkpoints/details/{latest['id']}/subtasks/{vid}")
        check(per_subtask, "TaskCheckpointStatistics")
        assert [s["index"] for s in per_subtask["subtasks"]] == [0, 1]
        assert all(s["status"] == "completed" for s in per_subtask["subtasks"])
        check(per_subtask["summary"]["state_size"], "StatsSummaryDto")
    config = job.get(f"/jobs/{job.job_id}/checkpoints/config")
    check(config, "CheckpointConfigInfo")
    check(config["externalization"], "ExternalizedCheckpointInfo")
    assert config["mode"] == "exactly_once" and config["interval"] == 200 and config["state_backend"] == "hashmap"


def check_vertex_paths(job: Rest) -> None:
    _, reduce = job.get(f"/jobs/{job.job_id}")["vertices"]
    base = f"/jobs/{job.job_id}/vertices/{reduce['id']}"
    details = job.get(base)
    check(details, "JobVertexDetailsInfo")
    assert [s["subtask"] for s in details["subtasks"]] == [0, 1]
    for s in details["subtasks"]:
        check(s, "SubtaskExecutionAttemptDetailsInfo")
        check(s["metrics"], "IOMetricsInfo")
        assert s["status"] == "RUNNING" and s["taskmanager-id"].startswith("tm-")
        durations = s["status-duration"]
        assert set(durations) == DURATION_STATES and durations["RUNNING"] > 0 and durations["DEPLOYING"] >= 0
        assert s["start-time"] > 0 and s["duration"] > 0
    aggregated = details["aggregated"]
    assert set(aggregated["status-duration"]) == DURATION_STATES
    assert set(aggregated["metrics"]) == AGGREGATED_METRICS
    for stats in (*aggregated["status-duration"].values(), *aggregated["metrics"].values()):
        assert set(stats) == {"min", "max", "avg", "sum", "median", "p25", "p75", "p95"}
    assert aggregated["status-duration"]["RUNNING"]["min"] > 0
    assert aggregated["metrics"]["read-records"]["sum"] > 0
    tms = job.get(base + "/taskmanagers")
    assert tms["id"] == reduce["id"] and sorted(t["taskmanager-id"] for t in tms["taskmanagers"]) == ["tm-1", "tm-2"]
    for t in tms["taskmanagers"]:
        check(t["metrics"], "IOMetricsInfo")
        assert t["status"] == "RUNNING" and t["status-counts"]["RUNNING"] == 1
    assert job.get(base + "/accumulators") == {"id": reduce["id"], "user-accumulators": []}
    times = job.get(base + "/subtasktimes")["subtasks"]
    assert [t["subtask"] for t in times] == [0, 1] and all(t["timestamps"]["RUNNING"] > 0 for t in times)
    assert [s["subtask"] for s in job.get(base + "/subtasks/accumulators")["subtasks"]] == [0, 1]
    graph = job.get(base + "/flamegraph?type=FULL")
    assert graph["endTimestamp"] > 0 and graph["data"]["name"] == "root" and graph["data"]["value"] > 0
    assert job.get(base + "/flamegraph?type=on_cpu&subtaskindex=1")["data"]["name"] == "root"
    ids = [m["id"] for m in job.get(base + "/metrics")]
    assert "0.numRecordsIn" in ids and "1.backPressuredTimeMsPerSecond" in ids
    (metric,) = job.get(base + "/metrics?get=0.numRecordsIn,0.noSuchMetric")
    check(metric, "Metric")
    assert metric["id"] == "0.numRecordsIn" and float(metric["value"]) > 0
    assert {"id": "numRecordsIn"} in job.get(base + "/subtasks/metrics")
    (agg,) = job.get(base + "/subtasks/metrics?get=numRecordsIn")
    check(agg, "AggregatedMetric")
    assert agg["sum"] >= agg["max"] >= agg["min"] >= 0
    (only,) = job.get(base + "/subtasks/metrics?get=numRecordsIn&agg=max&subtasks=1")
    assert set(only) == {"id", "max"}
    bp = job.get(base + "/backpressure")
    check(bp, "JobVertexBackPressureInfo")
    assert bp["status"] == "ok" and bp["backpressureLevel"] in ("ok", "low", "high")
    assert bp["backpressure-level"] == bp["backpressureLevel"]  # the spelling Flink's dashboard reads
    for s in bp["subtasks"]:
        check(s, "SubtaskBackPressureInfo")
        assert s["backpressure-level"] == s["backpressureLevel"]
    watermarks = job.get(base + "/watermarks")
    assert isinstance(watermarks, list)  # <subtask>.currentInputWatermark where a task reports it
    for w in watermarks:
        check(w, "Metric")


def check_task_manager_paths(job: Rest) -> None:
    tms = job.get("/taskmanagers")["taskmanagers"]
    assert len(tms) == 2
    for tm in tms:
        check(tm, "TaskManagerInfo")
        assert tm["slotsNumber"] == 1 and tm["freeSlots"] == 0 and tm["timeSinceLastHeartbeat"] > 0
        assert tm["assignedTasks"] == 2  # a source and a reduce subtask share each TaskManager's slot
        hardware = tm["hardware"]  # what the TaskManager process reports of its machine (Flink's "unknown" is -1)
        assert 1 <= hardware["cpuCores"] <= (os.cpu_count() or 1)
        assert 0 < hardware["freeMemory"] <= hardware["physicalMemory"]
    details = job.get(f"/taskmanagers/{tms[0]['id']}")
    check(details, "TaskManagerInfo")
    check(details, "TaskManagerDetailsInfo")
    assert details["allocatedSlots"] == [{"jobId": job.job_id, "assignedTasks": 2, "resource": {"cpuCores": 1.0}}]
    assert set(details["memoryConfiguration"]) >= {"frameworkHeap", "taskHeap", "managedMemory", "jvmMetaspace"}
    assert details["metrics"]["heapUsed"] > 0 and details["metrics"]["garbageCollectors"]
    # the TaskManager process's own figures (its RSS, not the JobManager's), under Flink's Status.JVM names
    tm_metrics = job.get(f"/taskmanagers/{tms[0]['id']}/metrics?get=" + ",".join(JVM_METRICS))
    assert {m["id"] for m in tm_metrics} == set(JVM_METRICS)
    dump = job.get(f"/taskmanagers/{tms[0]['id']}/thread-dump")["threadInfos"]
    assert any(t["threadName"].startswith("Keyed Reduce") for t in dump)
    logs = job.get(f"/taskmanagers/{tms[0]['id']}/logs")
    check(logs, "LogListInfo")
    assert [f["name"] for f in logs["logs"]] == [f"taskmanager-{tms[0]['id']}.log"]  # test_task_manager_logs.py


def check_exceptions_of_a_running_job_are_empty(job: Rest) -> None:
    body = job.get(f"/jobs/{job.job_id}/exceptions")
    check(body, "JobExceptionsInfoWithHistory")
    check(body["exceptionHistory"], "JobExceptionHistory")
    assert body["exceptionHistory"]["entries"] == []


def check_unknown_ids_answer_404_in_flinks_shape(job: Rest) -> None:
    other = "0" * 32
    _, reduce = job.get(f"/jobs/{job.job_id}")["vertices"]
    for path in (
        f"/jobs/{other}",
        f"/jobs/{other}/checkpoints",
        f"/jobs/{job.job_id}/vertices/{other}",
        f"/jobs/{job.job_id}/vertices/{other}/backpressure",
        f"/jobs/{job.job_id}/checkpoints/details/999999",
        f"/jobs/{job.job_id}/savepoints/{other}",
        "/taskmanagers/tm-999",
        "/no/such/path",
    ):
        status, body = job.call("GET", path, token=None)
        assert status == 404, (path, status, body)
        check(body, "ErrorResponseBody")
        assert body["errors"] and all(isinstance(e, str) for e in body["errors"])
    for path in ("overview", "summary", "history", "config", "details/1"):  # as Flink without its adaptive scheduler
        status, body = job.call("GET", f"/jobs/{job.job_id}/rescales/{path}", token=None)
        assert status == 404 and ("Adaptive" in body["errors"][0] or "AdaptiveScheduler" in body["errors"][0])
    status, body = job.call("GET", "/jobs/not-a-job-id", token=None)
    assert status == 400 and body["errors"]
    status, body = job.call("PATCH", f"/jobs/{other}?mode=cancel")
    assert status == 404 and body["errors"]
    assert reduce["status"] == "RUNNING"


def check_mutating_calls_need_the_token(job: Rest) -> None:
    for token in (None, "wrong-token", job.token[:-1] + ("0" if job.token[-1] != "0" else "1")):
        for method, path, body in (
            ("PATCH", f"/jobs/{job.job_id}?mode=cancel", None),
            ("POST", f"/jobs/{job.job_id}/savepoints", {"target-directory": "/tmp/never"}),
            ("POST", f"/jobs/{job.job_id}/stop", {"targetDirectory": "/tmp/never"}),
        ):
            status, answer = job.call(method, path, body, token=token)
            assert status == 401, (method, path, token, status, answer)
            check(answer, "ErrorResponseBody")
    assert job.get(f"/jobs/{job.job_id}")["state"] == "RUNNING"


def check_savepoint_is_triggered_and_polled_until_completed(job: Rest, target: str) -> None:
    status, body = job.call("POST", f"/jobs/{job.job_id}/savepoints", {"target-directory": target, "cancel-job": False})
    assert status == 202, body
    check(body, "TriggerResponse")
    trigger = body["request-id"]
    assert is_hex32(trigger)

    def completed() -> Any:
        result = job.get(f"/jobs/{job.job_id}/savepoints/{trigger}")
        assert result["status"]["id"] in ("IN_PROGRESS", "COMPLETED")
        return result if result["status"]["id"] == "COMPLETED" else None

    result = wait_for("the savepoint", completed)
    location = result["operation"]["location"]
    assert location.startswith(target) and os.path.exists(os.path.join(location, "_metadata"))
    savepoint = wait_for(
        "the savepoint in the statistics", lambda: job.get(f"/jobs/{job.job_id}/checkpoints")["latest"]["savepoint"]
    )
    assert savepoint["is_savepoint"] and savepoint["checkpoint_type"] == "SAVEPOINT"
    assert savepoint["external_path"] == location
    status, body = job.call("POST", f"/jobs/{job.job_id}/savepoints", {"cancel-job": False})
    assert status == 400 and body["errors"]  # no target directory
    assert job.get(f"/jobs/{job.job_id}")["state"] == "RUNNING"


@pytest.mark.processes  # reads a TaskManager process's log files through REST
@pytest.mark.timeout(240)
def test_every_read_path_of_a_running_job(job: Rest) -> None:
    check_the_server_binds_loopback_on_a_free_port(job)
    check_cluster_paths_have_flinks_shapes(job)
    check_job_details_and_plan(job)
    check_checkpoint_paths(job)
    check_vertex_paths(job)
    check_task_manager_paths(job)
    check_exceptions_of_a_running_job_are_empty(job)


@pytest.mark.timeout(240)
def test_savepoint_token_and_unknown_ids(job: Rest, tmp_path: Any) -> None:
    check_unknown_ids_answer_404_in_flinks_shape(job)
    check_mutating_calls_need_the_token(job)
    check_savepoint_is_triggered_and_polled_until_completed(job, str(tmp_path))


@pytest.mark.timeout(240)
def test_stop_with_savepoint_and_cancel(tmp_path: Any) -> None:
    stopped, cancelled = endless_job("rest-stop", parallelism=1), endless_job("rest-cancel", parallelism=1)
    try:
        stop, cancel = Rest(stopped), Rest(cancelled)
        wait_for("a checkpoint", lambda: stop.get(f"/jobs/{stop.job_id}/checkpoints")["counts"]["completed"])
        status, body = stop.call(
            "POST", f"/jobs/{stop.job_id}/stop", {"targetDirectory": str(tmp_path), "drain": False}
        )
        assert status == 202, body
        trigger = body["request-id"]
        result = wait_for(
            "the stop",
            lambda: (r := stop.get(f"/jobs/{stop.job_id}/savepoints/{trigger}"))["status"]["id"] == "COMPLETED" and r,
        )
        assert os.path.exists(os.path.join(result["operation"]["location"], "_metadata"))
        # as Flink's stop without drain: the job and each of its vertices FINISHED
        wait_for("the stopped job's end", lambda: stop.get(f"/jobs/{stop.job_id}")["state"] == "FINISHED")
        assert all(v["status"] == "FINISHED" for v in stop.get(f"/jobs/{stop.job_id}")["vertices"])

        wait_for("the other job running", lambda: cancel.get(f"/jobs/{cancel.job_id}")["state"] == "RUNNING")
        status, body = cancel.call("PATCH", f"/jobs/{cancel.job_id}?mode=cancel")
        assert status == 202 and body == {}
        wait_for("the cancelled job's end", lambda: cancel.get(f"/jobs/{cancel.job_id}")["state"] == "CANCELED")
        details = cancel.get(f"/jobs/{cancel.job_id}")
        assert details["end-time"] >= details["start-time"] > 0
        assert all(v["status"] == "CANCELED" for v in details["vertices"])
    finally:
        stopped.close()
        cancelled.close()


class Boom(Exception):
    pass


def fail_at_500(value: int) -> int:
    if value == 500:
        raise Boom(f"bad record {value}")
    return value


@pytest.mark.timeout(180)
def test_exceptions_carry_the_python_traceback() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    env.from_source(DataGeneratorSource(lambda i: i, 10**9, records_per_second=1000), source_name="numbers").map(
        fail_at_500
    ).name("explode").add_sink(lambda _: None)
    client = env.execute_async("rest-fails")
    try:
        rest = Rest(client)
        wait_for("the failure", lambda: rest.get(f"/jobs/{rest.job_id}")["state"] == "FAILED")
        body = rest.get(f"/jobs/{rest.job_id}/exceptions")
        check(body, "JobExceptionsInfoWithHistory")
        (entry,) = body["exceptionHistory"]["entries"]
        check(entry, "RootExceptionInfo")
        assert "Boom: bad record 500" in entry["stacktrace"] and "fail_at_500" in entry["stacktrace"]
        assert entry["taskName"].startswith("Source: numbers -> explode") and entry["taskManagerId"] == "tm-1"
        assert rest.get(f"/jobs/{rest.job_id}/exceptions?maxExceptions=0")["exceptionHistory"] == {
            "entries": [],
            "truncated": True,
        }
        assert rest.get("/overview")["jobs-failed"] == 1
    finally:
        client.close()


@pytest.mark.timeout(180)
def test_a_finished_job_shows_its_final_counts() -> None:
    """Tasks that end between two heartbeats send their final metrics with their terminal state."""
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    env.from_source(DataGeneratorSource(lambda i: i, 1000), source_name="numbers").rebalance().map(lambda v: v).name(
        "identity"
    ).add_sink(lambda _: None)
    client = env.execute_async("rest-finished")
    try:
        rest = Rest(client)
        wait_for("the job's end", lambda: rest.get(f"/jobs/{rest.job_id}")["state"] == "FINISHED")
        source, mapped = rest.get(f"/jobs/{rest.job_id}")["vertices"]
        assert source["metrics"]["write-records"] == 1000 and mapped["metrics"]["read-records"] == 1000
        assert source["end-time"] >= source["start-time"] > 0 and source["status"] == "FINISHED"
        details = rest.get(f"/jobs/{rest.job_id}/vertices/{mapped['id']}")
        assert details["aggregated"]["metrics"]["read-records"]["sum"] == 1000
        assert all(s["end-time"] > 0 and s["status-duration"]["RUNNING"] >= 0 for s in details["subtasks"])
        (app,) = [a for a in rest.get("/applications/overview")["applications"] if a["id"] == rest.job_id]
        assert app["status"] == "FINISHED" and app["end-time"] > 0
    finally:
        client.close()
