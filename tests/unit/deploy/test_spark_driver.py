"""The Spark driver's side of strom without a JVM: the settings a session starts with, the defaults ``strom run``
gives the session a program builds, the check of the TaskManagers' Python, and the TaskManagers' standard output
forwarded to the driver's."""

from __future__ import annotations

import asyncio
import os
import shlex
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from strom import Configuration
from strom.deploy.spark.session import prepare_driver, python_of_task_managers, session_settings
from strom.deploy.spark.spark_cluster import check_python, python_cannot_host
from strom.deploy.spark.stdout_forwarder import StdoutForwarder
from strom.exceptions import TaskManagerStartError


def test_spark_s_progress_bars_are_off_unless_the_user_sets_them() -> None:
    assert session_settings(Configuration())["spark.ui.showConsoleProgress"] == "false"
    asked = Configuration({"spark.ui.showConsoleProgress": "true"})
    assert session_settings(asked)["spark.ui.showConsoleProgress"] == "true"


def test_strom_run_makes_its_settings_the_defaults_of_the_session_the_program_builds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PYSPARK_SUBMIT_ARGS", "--conf spark.executor.memory=2g pyspark-shell")
    prepare_driver(Configuration({"spark.master": "local[3]", "spark.sql.shuffle.partitions": "4"}), "my job")
    args = shlex.split(os.environ["PYSPARK_SUBMIT_ARGS"])
    assert args[:4] == ["--master", "local[3]", "--name", "my job"]
    confs = [args[i + 1] for i, a in enumerate(args) if a == "--conf"]
    assert "spark.ui.showConsoleProgress=false" in confs and "spark.sql.shuffle.partitions=4" in confs
    assert "spark.speculation=false" in confs
    assert args[-3:] == ["--conf", "spark.executor.memory=2g", "pyspark-shell"]  # the user's own come last: they win


def fake_python(tmp_path: Path, stderr: str) -> str:
    script = tmp_path / "python"
    script.write_text(f"#!/bin/sh\necho {shlex.quote(stderr)} >&2\nexit 1\n")
    script.chmod(0o755)
    return str(script)


def test_a_python_without_strom_is_named_with_its_error_and_the_hint(tmp_path: Path) -> None:
    python = fake_python(tmp_path, "ModuleNotFoundError: No module named 'strom'")
    with pytest.raises(TaskManagerStartError) as err:
        check_python(python)
    text = str(err.value)
    assert text.startswith("expected the TaskManagers' Python to import strom; got " + python)
    assert "ModuleNotFoundError: No module named 'strom'" in text
    assert "hint: point PYSPARK_PYTHON (or spark.pyspark.python) at a Python with strom" in text
    assert sys.executable in text
    with pytest.raises(TaskManagerStartError, match=r"got /no/such/python .*FileNotFoundError"):
        check_python("/no/such/python")
    check_python(sys.executable)  # the driver's own: nothing to check


@pytest.mark.parametrize(
    ("error", "unfit"),
    [
        ("PythonException: ... ModuleNotFoundError: No module named 'cloudpickle'", True),
        ('java.io.IOException: Cannot run program "/opt/py": error=2, No such file or directory', True),
        ("[PYTHON_VERSION_MISMATCH] Python in worker has different version", True),
        ("Job 3 cancelled part of cancelled job group strom-1-tm-2", False),
    ],
)
def test_spark_errors_that_say_the_python_cannot_host_a_task_manager(error: str, unfit: bool) -> None:
    assert python_cannot_host(error) is unfit


def test_a_local_master_without_a_configured_python_runs_the_driver_s(monkeypatch: pytest.MonkeyPatch) -> None:
    def session(master: str, conf: dict[str, str]) -> Any:
        sc = SimpleNamespace(master=master, pythonExec="python3", getConf=lambda: conf)
        return SimpleNamespace(sparkContext=sc)

    monkeypatch.delenv("PYSPARK_PYTHON", raising=False)
    assert python_of_task_managers(session("local[2]", {})) == sys.executable
    assert python_of_task_managers(session("yarn", {})) == "python3"  # other machines: Spark's default
    assert python_of_task_managers(session("local[2]", {"spark.pyspark.python": "/opt/py"})) == "/opt/py"
    monkeypatch.setenv("PYSPARK_PYTHON", "/usr/bin/python3")
    assert python_of_task_managers(session("local[2]", {})) == "python3"  # as PySpark read it at its start


class _Gateway:
    def __init__(self) -> None:
        self.texts: list[str] = []

    async def call(self, method: str, tm_id: str, text: str, timeout: float) -> None:
        assert method == "stdout_from_task_manager" and tm_id == "tm-1"
        await asyncio.sleep(0.01)
        self.texts.append(text)


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    yield loop
    loop.call_soon_threadsafe(loop.stop)
    thread.join(5)
    loop.close()


def test_print_output_reaches_the_driver_by_each_flush_and_the_worker_keeps_its_stdout(
    loop: asyncio.AbstractEventLoop, capsys: pytest.CaptureFixture[str]
) -> None:
    gateway = _Gateway()
    executor: Any = SimpleNamespace(jm=gateway, tm_id="tm-1")
    forwarder = StdoutForwarder()
    saved = sys.stdout
    forwarder.install()
    try:
        assert sys.stdout is forwarder
        asyncio.run_coroutine_threadsafe(_connect(forwarder, executor), loop).result(5)
        sys.stdout.write("1> a\n1> b\n")
        sys.stdout.flush()  # the print sink's flush after a batch: out before it returns
        assert gateway.texts == ["1> a\n1> b\n"]
        print("partial", end="")
    finally:
        forwarder.close()
    assert sys.stdout is saved
    assert gateway.texts == ["1> a\n1> b\n", "partial"]  # what was left went out on close
    assert capsys.readouterr().out == ""


async def _connect(forwarder: StdoutForwarder, executor: Any) -> None:
    forwarder.connect(executor)


class _ResourceManager:
    shutting_down = False

    def __init__(self) -> None:
        self.forgotten: list[str] = []
        self.failures: list[Exception] = []

    def forget_task_manager(self, tm_id: str) -> None:
        self.forgotten.append(tm_id)

    def fail_slot_requests(self, error: Exception) -> None:
        self.failures.append(error)


def test_on_a_cluster_the_first_task_manager_whose_python_cannot_host_it_fails_the_start_at_once() -> None:
    from strom.deploy.spark.spark_cluster import SparkCluster, _Launch

    session: Any = SimpleNamespace(sparkContext=SimpleNamespace(master="yarn"))
    cluster = SparkCluster(Configuration(), num_task_managers=2, spark=session)
    rm = _ResourceManager()
    cluster.dispatcher = SimpleNamespace(resource_manager=rm)  # type: ignore[assignment]
    cluster.python = "/opt/env/bin/python"
    error = "ModuleNotFoundError: No module named 'strom'"
    launch = _Launch(tm_id="tm-1", job_group="g-tm-1", error=error, python_unfit=True)
    launch.ended.set()  # its Spark job ended
    cluster._launches["tm-1"] = launch
    cluster._on_worker_terminated("tm-1", f"ended in its Spark job (group g-tm-1): {error}")
    assert rm.forgotten == ["tm-1"]
    (failure,) = rm.failures
    assert isinstance(failure, TaskManagerStartError)
    text = str(failure)
    assert text.startswith("expected the TaskManagers' Python to import strom; got /opt/env/bin/python")
    assert "failing in tm-1: ModuleNotFoundError: No module named 'strom'" in text and "hint: point PYSPARK" in text
    assert cluster._paused_until == float("inf")  # no further TaskManager is started
    cluster.close()
