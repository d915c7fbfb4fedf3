"""A real Spark standalone cluster for the tests: a master and workers as separate JVM processes on 127.0.0.1,
started from pyspark's own launcher (``<pyspark>/bin/spark-class org.apache.spark.deploy.master.Master`` and
``...deploy.worker.Worker``, ``SPARK_HOME`` = the pyspark package directory), so a driver in the test process
talks to ``spark://127.0.0.1:PORT`` as it would to a cluster of machines: its executors are JVMs that the workers
start, not threads of the driver's JVM as in ``local[N]``.

Everything binds to 127.0.0.1 (``SPARK_LOCAL_IP``, ``--host``); the executors' Python is this interpreter
(strom sets ``PYSPARK_PYTHON`` for a master on loopback: on one machine that *is* the environment shipped to every
executor). Checkpoints and sink output of the jobs go to directories of this machine's file system, which every
process here reaches: the role a shared file system (HDFS, S3) plays on real machines.

The fixture ``spark_standalone`` (tests/conftest.py) starts one cluster per session, on first use. Its API:

- ``master_url``: ``spark://127.0.0.1:PORT``, for ``spark.master`` / ``strom run --spark-master``;
- ``spark_settings(...)``: the ``spark.*`` keys an application on it should set (master, executor cores and
  memory, ``spark.cores.max`` so that several applications share the workers);
- ``worker_pids()``: the pid of each worker's JVM, by worker index (``None`` once killed);
- ``alive_workers()``: the workers the master reports ALIVE (its ``/json/`` page), as dicts of that page;
- ``worker_of(pid)``: the index of the worker a process runs below (an executor, a Python worker), else ``None``;
- ``kill_worker(i)``: SIGKILLs worker ``i`` with its executors and their Python workers (a machine dying), reaps
  them and returns their pids;
- ``restart_killed_workers()``: starts a new worker in place of each killed one and waits until the master has
  them all ALIVE again (the fixture does it after each test that killed one);
- ``close()``: kills every process it started (process groups and descendants) and removes its directory.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

__all__ = ["SparkStandaloneCluster"]

_MASTER = "org.apache.spark.deploy.master.Master"
_WORKER = "org.apache.spark.deploy.worker.Worker"


def spark_home() -> str:
    import pyspark

    return str(Path(pyspark.__file__).parent)


@dataclass
class _Daemon:
    """One JVM the cluster started (master or worker): its own process group, its log file, the ports it bound."""

    name: str
    process: subprocess.Popen[bytes]
    log: Path
    port: int = 0  # RPC
    webui_port: int = 0

    @property
    def pid(self) -> int:
        return self.process.pid

    def log_tail(self, chars: int = 3000) -> str:
        try:
            return self.log.read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    def wait_bound(self, rpc: str, webui: str, deadline: float) -> None:
        """Waits until the log names the ports the daemon bound (it asked for port 0: no port can be taken in
        between, as with a port chosen before the start) and records them."""
        patterns = [
            re.compile(rpc + r"127\.0\.0\.1:(\d+)"),
            re.compile(webui + r".*started at http://127\.0\.0\.1:(\d+)"),
        ]
        while True:
            text = self.log_tail(1_000_000)
            found = [m.group(1) for m in (p.search(text) for p in patterns) if m is not None]
            if len(found) == 2:
                self.port, self.webui_port = int(found[0]), int(found[1])
                return
            if self.process.poll() is not None:
                raise RuntimeError(f"Spark {self.name} exited with {self.process.returncode}:\n{self.log_tail()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"Spark {self.name} bound no ports in time:\n{self.log_tail()}")
            time.sleep(0.1)


@dataclass
class SparkStandaloneCluster:
    """A Spark standalone master and ``workers`` workers (``cores`` cores and ``memory`` each) on 127.0.0.1."""

    directory: Path
    cores: int
    memory: str
    master: _Daemon | None = None
    workers: list[_Daemon | None] = field(default_factory=list)
    _opener: Any = None
    _started: int = 0  # workers started so far (log names)

    @classmethod
    def start(
        cls, *, workers: int = 2, cores: int = 3, memory: str = "2g", timeout_s: float = 180.0
    ) -> SparkStandaloneCluster:
        cluster = cls(Path(tempfile.mkdtemp(prefix="strom-spark-standalone-")), cores, memory)
        cluster._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback: never a proxy
        try:
            deadline = time.monotonic() + timeout_s
            cluster.master = cluster._spawn("master", [_MASTER, "--host", "127.0.0.1", "--port", "0"])
            cluster.master.wait_bound("Starting Spark master at spark://", "MasterWebUI", deadline)
            cluster.workers = [cluster._spawn_worker(i) for i in range(workers)]
            cluster.wait_workers_alive(max(1.0, deadline - time.monotonic()))
        except BaseException:
            cluster.close()
            raise
        return cluster

    # -- addresses ---------------------------------------------------------------------------------------------
    @property
    def master_url(self) -> str:
        assert self.master is not None
        return f"spark://127.0.0.1:{self.master.port}"

    @property
    def web_url(self) -> str:
        assert self.master is not None
        return f"http://127.0.0.1:{self.master.webui_port}"

    def spark_settings(
        self, *, executor_cores: int = 2, max_cores: int = 4, executor_memory: str = "512m"
    ) -> dict[str, str]:
        """``spark.*`` keys for an application on this cluster. The defaults give it one executor of 2 cores on each
        of the two workers (the master spreads executors out) and leave one core of each worker to another
        application; after a worker dies, its executor on the other worker still has room for two TaskManagers."""
        return {
            "spark.master": self.master_url,
            "spark.executor.cores": str(executor_cores),
            "spark.cores.max": str(max_cores),
            "spark.executor.memory": executor_memory,
        }

    # -- processes ---------------------------------------------------------------------------------------------
    def _env(self) -> dict[str, str]:
        conf = self.directory / "conf"
        conf.mkdir(exist_ok=True)
        env = dict(os.environ)
        env.update(
            SPARK_HOME=spark_home(),
            SPARK_CONF_DIR=str(conf),  # empty: no spark-defaults.conf / spark-env.sh of this machine
            SPARK_LOG_DIR=str(self.directory / "logs"),
            SPARK_LOCAL_IP="127.0.0.1",
            SPARK_LOCAL_HOSTNAME="127.0.0.1",
            SPARK_PUBLIC_DNS="127.0.0.1",
            SPARK_LOCAL_DIRS=str(self.directory / "local"),
            SPARK_DAEMON_MEMORY="512m",
            SPARK_MASTER_OPTS="-Dspark.master.rest.enabled=false",  # its REST server would take the fixed port 6066
            PYSPARK_PYTHON=sys.executable,
        )
        return env

    def _spawn(self, name: str, args: list[str]) -> _Daemon:
        logs = self.directory / "logs"
        logs.mkdir(exist_ok=True)
        log = logs / f"{name}.log"
        command = [os.path.join(spark_home(), "bin", "spark-class"), *args, "--webui-port", "0"]
        with open(log, "ab") as out:
            process = subprocess.Popen(
                command,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=self._env(),
                start_new_session=True,  # its own process group: close() kills the group
            )
        return _Daemon(name, process, log)

    def _spawn_worker(self, i: int) -> _Daemon:
        work = self.directory / f"work-{i}"
        work.mkdir(exist_ok=True)
        args = [_WORKER, self.master_url, "--host", "127.0.0.1", "--port", "0", "--cores", str(self.cores)]
        self._started += 1
        return self._spawn(f"worker-{i}.{self._started}", [*args, "--memory", self.memory, "--work-dir", str(work)])

    def worker_pids(self) -> list[int | None]:
        return [w.pid if w is not None else None for w in self.workers]

    # -- the master's view -------------------------------------------------------------------------------------
    def master_state(self) -> dict[str, Any]:
        """The master's ``/json/`` page (workers with their state, cores, applications)."""
        with self._opener.open(f"{self.web_url}/json/", timeout=5) as response:
            state: dict[str, Any] = json.loads(response.read())
            return state

    def alive_workers(self) -> list[dict[str, Any]]:
        """The workers the master reports ALIVE."""
        return [w for w in self.master_state().get("workers", []) if w.get("state") == "ALIVE"]

    def _alive_indexes(self) -> set[int]:
        ports = {int(w.get("port", -1)) for w in self.alive_workers() if w.get("host") == "127.0.0.1"}
        return {i for i, w in enumerate(self.workers) if w is not None and w.port in ports}

    def wait_workers_alive(self, timeout_s: float = 180.0) -> None:
        """Waits until the master has every started worker ALIVE; fails naming the log of a daemon that exited."""
        deadline = time.monotonic() + timeout_s
        expected = {i for i, w in enumerate(self.workers) if w is not None}
        for w in self.workers:
            if w is not None and not w.port:
                w.wait_bound("Starting Spark worker ", "WorkerWebUI", deadline)
        while True:
            for daemon in [self.master, *self.workers]:
                if daemon is not None and daemon.process.poll() is not None:
                    raise RuntimeError(
                        f"Spark {daemon.name} exited with {daemon.process.returncode}:\n{daemon.log_tail()}"
                    )
            try:
                if self._alive_indexes() >= expected:
                    return
            except OSError:  # the master's web UI is not up yet
                pass
            if time.monotonic() > deadline:
                logs = "\n".join(d.log_tail(1500) for d in [self.master, *self.workers] if d is not None)
                raise RuntimeError(f"Spark workers {sorted(expected)} not ALIVE after {timeout_s} s:\n{logs}")
            time.sleep(0.2)

    # -- failures ----------------------------------------------------------------------------------------------
    def worker_of(self, pid: int) -> int | None:
        """The index of the worker that ``pid`` runs below (its executor JVM, a Python worker of that executor)."""
        try:
            ancestors = {p.pid for p in psutil.Process(pid).parents()} | {pid}
        except psutil.Error:
            return None
        for i, w in enumerate(self.workers):
            if w is not None and w.pid in ancestors:
                return i
        return None

    def kill_worker(self, i: int) -> list[int]:
        """SIGKILLs worker ``i``, its executor JVMs and their Python workers at once (what a machine's death does to
        them), reaps them, and returns their pids. The master notices the closed connection and marks it DEAD."""
        daemon = self.workers[i]
        if daemon is None:
            raise ValueError(f"expected a running worker; got worker {i} already killed")
        procs = _tree(daemon.pid)
        for p in reversed(procs):  # the Python workers first, the worker JVM last: none outlives the kill
            with contextlib.suppress(psutil.Error):
                p.send_signal(signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(daemon.pid, signal.SIGKILL)
        daemon.process.wait(timeout=30)
        _wait_dead(procs, 30)
        self.workers[i] = None
        return [p.pid for p in procs]

    def restart_killed_workers(self, timeout_s: float = 180.0) -> None:
        """A new worker in place of each killed one; returns once the master has them all ALIVE."""
        if all(w is not None for w in self.workers):
            return
        self.workers = [w if w is not None else self._spawn_worker(i) for i, w in enumerate(self.workers)]
        self.wait_workers_alive(timeout_s)

    # -- cleanup -----------------------------------------------------------------------------------------------
    def close(self) -> None:
        """Kills every process this cluster started (workers first, with their executors, then the master), reaps
        them and removes the cluster's directory. Idempotent."""
        for i, w in enumerate(self.workers):
            if w is not None:
                self.kill_worker(i)
        if self.master is not None:
            procs = _tree(self.master.pid)
            for p in procs:
                with contextlib.suppress(psutil.Error):
                    p.send_signal(signal.SIGKILL)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.master.pid, signal.SIGKILL)
            self.master.process.wait(timeout=30)
            _wait_dead(procs, 30)
            self.master = None
        shutil.rmtree(self.directory, ignore_errors=True)


def _tree(pid: int) -> list[psutil.Process]:
    """``pid`` and its descendants, parents before children."""
    try:
        root = psutil.Process(pid)
        return [root, *root.children(recursive=True)]
    except psutil.Error:
        return []


def _wait_dead(procs: list[psutil.Process], timeout_s: float) -> None:
    """Waits until every process of ``procs`` is gone or a zombie (orphans are init's to reap, not ours)."""
    deadline = time.monotonic() + timeout_s
    for p in procs:
        while True:
            try:
                if p.status() == psutil.STATUS_ZOMBIE:
                    break
            except psutil.Error:
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"process {p.pid} still running {timeout_s} s after SIGKILL")
            time.sleep(0.05)
