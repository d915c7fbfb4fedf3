"""Choosing the Spark target: configuration keys, Spark's own settings passed through, local-mode capacity, and
the options of ``strom run``."""

from __future__ import annotations

import ast
from pathlib import Path
from types import SimpleNamespace

import pytest

from strom import Configuration, StreamExecutionEnvironment
from strom.cli import main as strom_main
from strom.config import DeploymentOptions, SparkOptions, TaskManagerOptions
from strom.deploy.spark.session import (
    is_local_master,
    is_loopback_master,
    local_cores,
    runs_on_this_machine,
    ship_py_files,
)
from strom.exceptions import CheckpointError, ClusterError, ConfigurationError


def test_spark_keys_of_spark_itself_pass_through_as_strings_and_strom_keys_stay_typed() -> None:
    conf = Configuration(
        {"execution.target": "spark", "spark.master": "local[2,4]", "spark.executor.memory": "2g", "spark.x": True}
    )
    assert conf.get(DeploymentOptions.TARGET) == "spark"
    assert conf.get(SparkOptions.MASTER) == "local[2,4]"
    conf.set_string("spark.taskmanagers", "3")
    assert conf.get(SparkOptions.TASK_MANAGERS) == 3
    assert conf.spark_settings() == {"spark.executor.memory": "2g", "spark.x": "true"}
    with pytest.raises(ConfigurationError, match=r"spark\.taskmanagers"):
        conf.set_string("spark.taskmanagers", "many")
    with pytest.raises(ConfigurationError, match="known configuration key"):
        conf.set_string("sprak.master", "local")


@pytest.mark.parametrize(
    ("master", "cores"),
    [("local", 1), ("local[3]", 3), ("local[2,4]", 2), ("local[2, 4]", 2), ("local[*]", None), ("yarn", None)],
)
def test_task_slots_of_a_local_master(master: str, cores: int | None) -> None:
    if master == "local[*]":
        assert (local_cores(master) or 0) >= 1
    else:
        assert local_cores(master) == cores
    assert is_local_master(master) is (master != "yarn")
    assert not is_local_master("spark://host:7077")


@pytest.mark.parametrize(
    ("master", "loopback"),
    [
        ("spark://127.0.0.1:7077", True),
        ("spark://localhost:7077", True),
        ("spark://127.0.1.1:7077/", True),
        ("spark://[::1]:7077", True),
        ("spark://127.0.0.1:7077,localhost:7078", True),
        ("spark://127.0.0.1:7077,10.0.0.5:7077", False),
        ("spark://10.0.0.5:7077", False),
        ("spark://master:7077", False),
        ("local[2]", False),
        ("yarn", False),
        ("k8s://https://127.0.0.1:6443", False),
    ],
)
def test_a_standalone_master_on_loopback_has_its_executors_on_this_machine(master: str, loopback: bool) -> None:
    assert is_loopback_master(master) is loopback
    assert runs_on_this_machine(master) is (loopback or is_local_master(master))


def test_py_files_not_yet_listed_by_spark_are_shipped_once() -> None:
    added: list[str] = []
    context = SimpleNamespace(listFiles=["spark://127.0.0.1:4040/files/shipped.py"], addPyFile=added.append)
    session = SimpleNamespace(sparkContext=context)
    ship_py_files(session, " /jobs/job.py, /jobs/shipped.py,,/libs/deps.zip ")  # type: ignore[arg-type]
    assert added == ["/jobs/job.py", "/libs/deps.zip"]
    ship_py_files(session, "")  # type: ignore[arg-type]
    assert added == ["/jobs/job.py", "/libs/deps.zip"]


def test_task_managers_waiting_for_spark_task_slots_are_named_with_the_capacity_settings() -> None:
    from strom.deploy.spark.spark_cluster import registration_timeout_message

    settings = {"spark.cores.max": "4", "spark.executor.cores": "2", "spark.task.cpus": None}
    message = registration_timeout_message(
        master="spark://127.0.0.1:7077", expected=5, registered=4, waiting=1, settings=settings, error="timed out"
    )
    assert message.startswith(
        "expected 5 TaskManagers to start in Spark tasks on 'spark://127.0.0.1:7077'; got 4 registered and 1 still "
        "waiting for a Spark task slot (spark.cores.max=4, spark.executor.cores=2); hint: "
    )
    assert "spark.task.cpus=" not in message and "--slots" in message
    none_waiting = registration_timeout_message(
        master="yarn", expected=2, registered=1, waiting=0, settings=settings, error="timed out"
    )
    assert none_waiting == "timed out"


def test_more_task_managers_than_local_cores_is_refused_before_spark_starts() -> None:
    env = StreamExecutionEnvironment.get_execution_environment(
        Configuration({"execution.target": "spark", "spark.master": "local[2]", "spark.taskmanagers": 3})
    )
    env.from_sequence(1, 10).print()
    with pytest.raises(ConfigurationError, match=r"at most 2 TaskManagers on Spark master local\[2\].*local\[3\]"):
        env.execute("too big")


def test_an_unknown_target_is_named_in_the_error() -> None:
    env = StreamExecutionEnvironment.get_execution_environment(Configuration({"execution.target": "yarn"}))
    env.from_sequence(1, 3).print()
    with pytest.raises(ConfigurationError, match=r"execution\.target to be one of local, spark, remote; got 'yarn'"):
        env.execute()


@pytest.mark.spark
def test_strom_run_options_become_the_programs_configuration(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYSPARK_SUBMIT_ARGS", "pyspark-shell")  # `strom run --spark-master` sets the JVM's defaults
    script = tmp_path / "job.py"
    out = tmp_path / "conf.txt"
    script.write_text(
        "import sys\n"
        "from strom import StreamExecutionEnvironment\n"
        "c = StreamExecutionEnvironment.get_execution_environment().get_configuration()\n"
        "with open(sys.argv[1], 'w') as f:\n"
        "    f.write(repr(sorted(c.to_dict().items())))\n"
    )
    try:
        args = ["run", "--spark-master", "local[3]", "--taskmanagers", "2", "--slots", "4"]
        assert strom_main([*args, "-D", "spark.executor.memory=1g", str(script), str(out)]) == 1  # ran, no job
    finally:
        StreamExecutionEnvironment.set_context_configuration(None)
    conf = dict(ast.literal_eval(out.read_text()))
    assert conf == {
        "execution.target": "spark",
        "spark.master": "local[3]",
        "spark.taskmanagers": 2,
        TaskManagerOptions.NUM_TASK_SLOTS.key: 4,
        "spark.executor.memory": "1g",
    }
    assert StreamExecutionEnvironment.get_execution_environment().get_configuration().to_dict() == {}


def test_strom_run_rejects_bad_options(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    script = tmp_path / "job.py"
    script.write_text("")
    assert strom_main(["run", "--taskmanagers", "0", str(script)]) == 2
    assert "expected --taskmanagers >= 1; got 0" in capsys.readouterr().err
    assert strom_main(["run", "-D", "no-equals", str(script)]) == 2
    assert "expected -D key=value; got 'no-equals'" in capsys.readouterr().err


class _Session:
    """Just what SparkCluster reads of a session before it starts anything: its master."""

    def __init__(self, master: str) -> None:
        self.sparkContext = SimpleNamespace(master=master)


def test_a_cluster_master_needs_shared_checkpoint_storage_and_reachable_addresses() -> None:
    from strom.deploy.spark import SparkCluster

    on_yarn = SparkCluster(Configuration(), num_task_managers=1, spark=_Session("yarn"))  # type: ignore[arg-type]
    with pytest.raises(CheckpointError, match=r"execution\.checkpointing\.dir on storage .* 'yarn'.*s3://"):
        on_yarn._default_checkpoint_dir()
    with pytest.raises(ClusterError, match=r"jobmanager\.rpc\.address reachable from Spark executors.*loopback"):
        on_yarn._check_addresses()
    reachable = Configuration({"jobmanager.rpc.address": "10.0.0.5", "taskmanager.host": "auto"})
    SparkCluster(reachable, num_task_managers=1, spark=_Session("yarn"))._check_addresses()  # type: ignore[arg-type]
    for master in ("local[2]", "spark://127.0.0.1:7077"):  # executors on this machine: loopback and a temp dir work
        here = SparkCluster(Configuration(), num_task_managers=1, spark=_Session(master))  # type: ignore[arg-type]
        here._check_addresses()
        path = here._default_checkpoint_dir()
        assert Path(path).is_dir()
        here.close()
        assert not Path(path).exists()
    remote = SparkCluster(Configuration(), num_task_managers=1, spark=_Session("spark://10.0.0.5:7077"))  # type: ignore[arg-type]
    with pytest.raises(ClusterError, match=r"loopback"):
        remote._check_addresses()
