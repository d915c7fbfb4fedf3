"""The JobManager's own REST paths on a real standalone cluster (``strom cluster start``), against Flink's shapes:
``/jobmanager/config``, ``/environment``, ``/metrics``, and its log files — ``/logs``, ``/log``, ``/logs/:filename``,
``/stdout`` — which it writes as its TaskManagers do (``<cluster dir>/log/jobmanager.log``); names that are not its
own plain file names are refused. Then the dashboard's Job Manager page in headless Chromium, compared with REST.
One cluster for the module; waits poll for a condition, their deadlines only turn a hang into a failure.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from dashboard_pages import chromium, click, no_console_errors, read, text_of, wait_for
from rest_schemas import check
from standalone_cluster import Cluster, http_get, running_cluster
from standalone_cluster import wait_for as wait_until

JM_METRICS = {"numRegisteredTaskManagers", "numRunningJobs", "taskSlotsTotal", "taskSlotsAvailable"}
#: the JobManager process's own figures under Flink's Status.JVM names (strom/runtime/metrics/process_metrics.py)
STATUS_METRICS = {
    "Status.JVM.Memory.Heap.Used",
    "Status.JVM.Memory.Heap.Committed",
    "Status.JVM.Memory.Heap.Max",
    "Status.JVM.CPU.Time",
    "Status.JVM.CPU.Load",
    "Status.JVM.Threads.Count",
    *(f"Status.JVM.GarbageCollector.Generation{g}.{m}" for g in range(3) for m in ("Count", "Time")),
}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    directory = tmp_path_factory.mktemp("jm-rest") / "cluster"
    with running_cluster(directory, "logging.level=INFO", "slot.request.timeout=20 s", taskmanagers=1) as c:
        yield c


@pytest.mark.timeout(120)
def test_config_environment_and_metrics_have_flink_s_shapes(cluster: Cluster) -> None:
    config = cluster.get("/jobmanager/config")
    assert isinstance(config, list) and config == cluster.get("/v1/jobmanager/config")
    for entry in config:
        check(entry, "ClusterConfigurationInfoEntry")
        assert set(entry) == {"key", "value"}
    values = {e["key"]: e["value"] for e in config}
    assert [e["key"] for e in config] == sorted(values)
    assert values["rest.port"] == "0" and values["taskmanager.numberOfTaskSlots"] == "2"
    assert values["heartbeat.interval"] == "500 ms" and values["logging.level"] == "INFO"  # Flink's string form

    environment = cluster.get("/jobmanager/environment")
    check(environment, "EnvironmentInfo")
    check(environment["jvm"], "JVMInfo")
    assert all(isinstance(p, str) for p in environment["classpath"]) and environment["classpath"]

    ids = cluster.get("/jobmanager/metrics")
    assert {m["id"] for m in ids} == JM_METRICS | STATUS_METRICS and all(set(m) == {"id"} for m in ids)
    metrics = cluster.get("/jobmanager/metrics?get=" + ",".join(sorted(JM_METRICS)) + ",noSuchMetric")
    for m in metrics:
        check(m, "Metric")
    got = {m["id"]: m["value"] for m in metrics}
    overview = cluster.get("/overview")
    assert got == {
        "numRegisteredTaskManagers": str(overview["taskmanagers"]),
        "numRunningJobs": "0",
        "taskSlotsTotal": str(overview["slots-total"]),
        "taskSlotsAvailable": str(overview["slots-available"]),
    }
    assert got["numRegisteredTaskManagers"] == "1" and got["taskSlotsTotal"] == "2"
    status = {m["id"]: float(m["value"]) for m in cluster.get("/jobmanager/metrics?get=" + ",".join(STATUS_METRICS))}
    assert set(status) == STATUS_METRICS and status["Status.JVM.Memory.Heap.Used"] > 0
    assert status["Status.JVM.Threads.Count"] >= 1 and 0.0 <= status["Status.JVM.CPU.Load"] <= 1.0


@pytest.mark.timeout(120)
def test_the_job_manager_s_log_files(cluster: Cluster) -> None:
    url, directory = cluster.rest_url, cluster.directory
    listing = cluster.get("/jobmanager/logs")
    check(listing, "LogListInfo")
    for entry in listing["logs"]:
        check(entry, "LogInfo")
    assert [f["name"] for f in listing["logs"]] == ["jobmanager.log"]  # its own: not the TaskManager's beside it
    assert any(f.name.startswith("taskmanager-") for f in (directory / "log").iterdir())
    on_disk = (directory / "log" / "jobmanager.log").read_text()
    assert "REST API at" in on_disk  # an INFO record of its start

    status, main_log = http_get(f"{url}/jobmanager/log")
    assert status == 200 and main_log.decode().startswith(on_disk)  # a log only grows
    status, by_name = http_get(f"{url}/jobmanager/logs/jobmanager.log")
    assert status == 200 and by_name.decode().startswith(on_disk)
    # its standard output: strom cluster's <cluster dir>/jobmanager.log
    status, stdout = http_get(f"{url}/jobmanager/stdout")
    assert status == 200 and b"strom jobmanager (pid" in stdout

    secret = (directory / "secret").read_text().strip().encode()
    tm_log = next(f.name for f in (directory / "log").iterdir() if f.name.startswith("taskmanager-"))
    for bad in ("..%2Fsecret", "..", ".hidden", "%2Fetc%2Fpasswd", tm_log, "jobmanager.log.7"):
        status, body = http_get(f"{url}/jobmanager/logs/{bad}")
        assert status in (400, 404), (bad, status, body)
        assert secret not in body and b"root:" not in body and "errors" in json.loads(body), (bad, body)
    status, body = http_get(f"{url}/jobmanager/logs/{tm_log}")
    assert json.loads(body) == {"errors": ["This file does not exist in JobManager log dir."]}  # Flink's answer
    status, body = http_get(f"{url}/jobmanager/logs/../secret")
    assert status == 404 and secret not in body


@pytest.mark.browser
@pytest.mark.timeout(120)
def test_the_dashboard_s_job_manager_page(cluster: Cluster, tmp_path: Path) -> None:
    with chromium(tmp_path) as driver:
        driver.get(cluster.rest_url + "/")
        click(driver, 'header nav a[data-nav="jobmanager"]')
        rows = wait_for("the configuration", lambda: read(driver, "table.jm-config tbody tr"))
        config = cluster.get("/jobmanager/config")
        assert [r["cells"] for r in rows] == [[e["key"], e["value"]] for e in config]
        metrics = wait_for("the metrics", lambda: read(driver, "table.jm-metrics tbody tr"))
        shown = {r["cells"][0]: r["cells"][1] for r in metrics}
        assert set(shown) == JM_METRICS | STATUS_METRICS
        rest = {m["id"]: m["value"] for m in cluster.get("/jobmanager/metrics?get=" + ",".join(sorted(JM_METRICS)))}
        assert shown["numRegisteredTaskManagers"] == rest["numRegisteredTaskManagers"] == "1"
        assert shown["taskSlotsTotal"] == rest["taskSlotsTotal"]
        names = [f["name"] for f in cluster.get("/jobmanager/logs")["logs"]]
        assert [a["text"] for a in read(driver, "table.jm-logs tbody a")] == names == ["jobmanager.log"]
        click(driver, "table.jm-logs button.show-log")
        (log,) = wait_for("the log's text", lambda: read(driver, "#jm-log-view pre.log-text", ("data-name",)))
        status, body = http_get(f"{cluster.rest_url}/jobmanager/logs/jobmanager.log")
        assert status == 200 and log["attrs"]["data-name"] == "jobmanager.log"
        assert "REST API at" in log["text"] and body.decode().startswith(log["text"])
        assert "Job Manager" in text_of(driver, "main h1")
        driver.save_screenshot(str(tmp_path / "jobmanager.png"))
        no_console_errors(driver)


@pytest.mark.timeout(120)
def test_a_job_waiting_for_slots_shows_scheduled_and_fails_with_the_cluster_s_hint(
    cluster: Cluster, tmp_path: Path
) -> None:
    """p=3 on one TaskManager of 2 slots: while the JobMaster waits for the third slot, the job is RUNNING and its
    vertices SCHEDULED (Flink's pending slot requests); after ``slot.request.timeout`` it fails with a hint saying how
    a standalone cluster gets more slots — not the MiniCluster's keys."""
    job = tmp_path / "wide.py"
    job.write_text(
        textwrap.dedent(
            """
            from strom import StreamExecutionEnvironment
            env = StreamExecutionEnvironment.get_execution_environment()
            env.from_collection(list(range(10))).map(lambda x: x + 1).print()
            env.execute("wide")
            """
        )
    )
    run = cluster.strom("run", "-m", cluster.m, "-d", "-p", "3", str(job))
    assert run.returncode == 0, run.stdout + run.stderr
    job_id = run.stdout.split("Job has been submitted with JobID ")[1].split()[0]

    def scheduled() -> dict[str, object] | None:
        details = cluster.get(f"/jobs/{job_id}")
        return details if details["vertices"] and details["state"] == "RUNNING" else None

    details = wait_until("the job's details", scheduled, 60)
    assert {v["status"] for v in details["vertices"]} == {"SCHEDULED"}
    assert all(v["tasks"]["SCHEDULED"] == v["parallelism"] for v in details["vertices"])
    wait_until("the job FAILED", lambda: cluster.get(f"/jobs/{job_id}")["state"] == "FAILED", 90)
    root = cluster.get(f"/jobs/{job_id}/exceptions")["exceptionHistory"]["entries"][0]["stacktrace"]
    assert "needs 3 slots" in root and "strom cluster add-taskmanager" in root, root
    assert "minicluster." not in root
