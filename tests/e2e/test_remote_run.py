"""``strom run -m`` attached to a standalone cluster shows the job's log lines at the configured level, as a
MiniCluster run does: the TaskManagers forward the records of their task threads to the JobManager, which keeps
them per job (``GET /jobs/:jobid/log-records``, strom's own path), and the attached client prints the new ones.

The cluster comes from ``tests/standalone_cluster.py`` (its TaskManagers at ``logging.level=INFO``: a record below
a TaskManager's level is never made); ports 0, waits poll for conditions, every process is killed at the end.
"""

from __future__ import annotations

import textwrap
import urllib.error
from collections.abc import Iterator
from pathlib import Path

import pytest
from standalone_cluster import Cluster, running_cluster

LOGGING_JOB = textwrap.dedent(
    """
    import logging
    from strom import StreamExecutionEnvironment

    def enrich(x):
        logging.getLogger("myjob.enrich").info("remote-marker-info %s", x)
        if x == 2:
            logging.getLogger("myjob.enrich").warning("remote-marker-warning %s", x)
        return x

    env = StreamExecutionEnvironment.get_execution_environment()
    env.from_collection([1, 2]).map(enrich).add_sink(lambda v: None)
    env.execute("remote logs")
    """
)


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    with running_cluster(tmp_path / "cluster", "logging.level=INFO", taskmanagers=1) as c:
        yield c


def _job(tmp_path: Path) -> Path:
    script = tmp_path / "job" / "logs.py"
    script.parent.mkdir(exist_ok=True)
    script.write_text(LOGGING_JOB)
    return script


@pytest.mark.timeout(240)
def test_an_attached_remote_run_prints_the_jobs_log_lines_at_its_level(cluster: Cluster, tmp_path: Path) -> None:
    job = _job(tmp_path)
    info = cluster.strom("run", "-m", cluster.m, "-p", "1", "-D", "logging.level=INFO", str(job))
    assert info.returncode == 0, info.stdout + info.stderr
    assert "INFO [" in info.stderr and "myjob.enrich: remote-marker-info 1" in info.stderr, info.stderr
    assert "myjob.enrich: remote-marker-info 2" in info.stderr
    assert "WARNING [" in info.stderr and "myjob.enrich: remote-marker-warning 2" in info.stderr
    assert info.stderr.count("remote-marker-info 1") == 1  # each line once, though polled many times

    warning = cluster.strom("run", "-m", cluster.m, "-p", "1", "-D", "logging.level=WARNING", str(job))
    assert warning.returncode == 0, warning.stdout + warning.stderr
    assert "remote-marker-info" not in warning.stderr, warning.stderr
    assert "myjob.enrich: remote-marker-warning 2" in warning.stderr  # the WARNING line still comes through

    detached = cluster.strom("run", "-m", cluster.m, "-d", "-D", "logging.level=INFO", str(job))
    assert detached.returncode == 0, detached.stdout + detached.stderr
    assert "remote-marker" not in detached.stderr  # a detached run does not wait, so it prints no job lines

    # the REST path itself: a cursor, a level filter, Flink's 404 for an unknown job
    job_id = info.stdout.split("Job has been submitted with JobID ")[1].split()[0]
    every = cluster.get(f"/jobs/{job_id}/log-records")
    messages = [r["message"] for r in every["records"]]
    assert "remote-marker-info 1" in messages and "remote-marker-warning 2" in messages
    assert set(every) == {"stream", "next", "dropped", "records"} and every["dropped"] == 0
    first = every["records"][0]
    assert set(first) == {"seq", "timestamp", "level", "taskmanager", "logger", "message"}
    assert first["taskmanager"] in {t["id"] for t in cluster.task_managers()}
    assert cluster.get(f"/jobs/{job_id}/log-records?from={every['next']}")["records"] == []
    warnings = cluster.get(f"/jobs/{job_id}/log-records?level=WARNING")["records"]
    assert [r["message"] for r in warnings if r["logger"] == "myjob.enrich"] == ["remote-marker-warning 2"]
    with pytest.raises(urllib.error.HTTPError) as unknown:
        cluster.get("/jobs/" + "0" * 32 + "/log-records")
    unknown.value.close()
    assert unknown.value.code == 404


@pytest.mark.timeout(240)
def test_run_takes_the_token_and_the_cluster_directory_from_its_flags(cluster: Cluster, tmp_path: Path) -> None:
    from standalone_cluster import strom

    job = _job(tmp_path)
    elsewhere = tmp_path / "no-cluster-here"  # $STROM_CLUSTER_DIR of these runs: no secret, so no token
    refused = strom(elsewhere, "run", "-m", cluster.m, "-d", str(job))
    assert refused.returncode != 0 and "401" in refused.stderr, refused.stderr
    by_directory = strom(elsewhere, "run", "-m", cluster.m, "-d", "--cluster-dir", str(cluster.directory), str(job))
    assert by_directory.returncode == 0, by_directory.stderr
    token = cluster.strom("cluster", "token").stdout.strip()
    by_token = strom(elsewhere, "run", "-m", cluster.m, "-d", "--token", token, str(job))
    assert by_token.returncode == 0, by_token.stderr
    assert "Job has been submitted with JobID" in by_token.stdout
