"""The JobManager's own REST bodies and the naming of a cluster's JobManagers (pure, no process)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from strom.config import Configuration
from strom.config_security import HIDDEN_CONTENT
from strom.deploy.standalone.cluster_dir import ClusterDirectory
from strom.deploy.standalone.job_managers import job_manager_args, job_manager_names
from strom.exceptions import ClusterError
from strom.runtime.log_files import LogFiles
from strom.web.job_manager_messages import cluster_configuration_info, environment_info


def test_the_configuration_is_listed_in_flink_s_string_form_with_secrets_hidden() -> None:
    config = Configuration({"heartbeat.interval": "500 ms", "rest.port": 0, "spark.hadoop.fs.s3a.secret.key": "hush"})
    assert cluster_configuration_info(config) == [
        {"key": "heartbeat.interval", "value": "500 ms"},
        {"key": "rest.port", "value": "0"},
        {"key": "spark.hadoop.fs.s3a.secret.key", "value": HIDDEN_CONTENT},
    ]
    env = environment_info()
    assert set(env) == {"jvm", "classpath"} and set(env["jvm"]) == {"version", "arch", "options"}


def test_standby_job_managers_need_high_availability_and_get_their_own_ports(tmp_path: Path) -> None:
    assert job_manager_names(1, Configuration()) == ["jobmanager"]
    with pytest.raises(ClusterError, match="with --jobmanagers 2; got no high availability"):
        job_manager_names(2, Configuration())
    ha = Configuration({"high-availability.type": "file", "high-availability.storageDir": str(tmp_path)})
    assert job_manager_names(3, ha) == ["jobmanager", "jobmanager-2", "jobmanager-3"]
    directory = ClusterDirectory(tmp_path)
    assert job_manager_args(directory, "jobmanager-3", 2, ["-Drest.port=0"])[-1:] == ["-Djobmanager.rpc.port=6125"]
    args = job_manager_args(directory, "jobmanager-2", 1, ["-Drest.port=9000", "-Djobmanager.rpc.port=0"])
    assert args[:5] == ["jobmanager", "--cluster-dir", str(tmp_path), "--name", "jobmanager-2"]
    assert args[-1] == "-Drest.port=9001"  # after the user's: it wins; a free port (0) stays free


def test_a_job_manager_lists_only_its_own_files(tmp_path: Path) -> None:
    files = LogFiles(tmp_path, "jobmanager", owner="JobManager", listing="/jobmanager/logs")
    for name in ("jobmanager.log", "jobmanager.log.1", "jobmanager-2.log", "taskmanager-tm-1.log"):
        (tmp_path / name).write_text(name)
    assert [f.name for f in files.list_files()] == ["jobmanager.log", "jobmanager.log.1"]
    with pytest.raises(FileNotFoundError):
        files.resolve("jobmanager-2.log")
    assert files.read("LOG", "", 0, 100) == (b"jobmanager.log", 14)


def test_the_environment_hides_the_secrets_of_the_command_line(monkeypatch: pytest.MonkeyPatch) -> None:
    argv = [
        "python",
        "-m",
        "strom.cli",
        "jobmanager",
        "-Dsecurity.ssl.rest.keystore-password=hunter2",
        "-D",
        "security.ssl.rest.truststore-password=hunter3",
        "-Drest.port=8081",
        "--token=abc",
        "--token",
        "def",
    ]
    monkeypatch.setattr(sys, "orig_argv", argv)
    options = environment_info()["jvm"]["options"]
    assert options == [
        "python",
        "-m",
        "strom.cli",
        "jobmanager",
        f"-Dsecurity.ssl.rest.keystore-password={HIDDEN_CONTENT}",
        "-D",
        f"security.ssl.rest.truststore-password={HIDDEN_CONTENT}",
        "-Drest.port=8081",
        f"--token={HIDDEN_CONTENT}",
        "--token",
        HIDDEN_CONTENT,
    ]
    assert not any("hunter" in o or o in ("abc", "def") for o in options)
