"""``strom cluster start | add-taskmanager | stop | status``: a standalone cluster as background processes.

Flink's ``start-cluster.sh`` / ``stop-cluster.sh`` on one machine: ``start`` runs ``strom jobmanager`` and N
``strom taskmanager`` processes in their own sessions (a closed terminal does not stop them), each with a pid file
and a log file in the cluster directory (:mod:`cluster_dir`), and returns once the JobManager serves and the
TaskManagers registered. ``stop`` sends SIGTERM to the JobManager (which cancels its jobs), then to the
TaskManagers, waits for each, and SIGKILLs what is left after the timeout. A pid file is trusted only while its
process still runs ``strom`` (a reused pid is left alone).

With ``high-availability.type: file``, ``start --jobmanagers N`` starts a leader and N - 1 standbys
(:mod:`job_managers`); ``status`` tells each one's role, and ``stop`` stops the standbys first, then the leader
(which keeps its jobs in the HA directory for the next start, as Flink's), then the TaskManagers.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from strom.config import Configuration
from strom.config_security import SENSITIVE_DEFINES_ENV, split_sensitive_defines
from strom.deploy.standalone import job_managers as jms
from strom.deploy.standalone.cluster_dir import ClusterDirectory, JobManagerAddresses
from strom.deploy.standalone.rest_client import RestClusterClient
from strom.exceptions import ClusterError

__all__ = ["add_task_managers", "is_strom_process", "start_cluster", "status", "stop_cluster"]


def is_strom_process(pid: int) -> bool:
    """Whether ``pid`` runs and (where ``/proc`` tells) runs strom."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return False  # another user's process: not ours
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return True
    if Path(f"/proc/{pid}/stat").exists():
        with contextlib.suppress(OSError, IndexError):
            if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                return False  # a zombie: dead, only not reaped yet
    return b"strom" in cmdline


def _log_tail(path: Path, lines: int = 20) -> str:
    with contextlib.suppress(OSError):
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    return ""


def _spawn(directory: ClusterDirectory, name: str, args: list[str]) -> subprocess.Popen[bytes]:
    """``strom ARGS`` in the background, its output into its log file; sensitive ``-D`` options (passwords) go
    through its environment, not onto its command line, which every user of the host can read."""
    log_path = directory.log_file(name)
    public, hidden = split_sensitive_defines(args)
    env = dict(os.environ)
    env.pop(SENSITIVE_DEFINES_ENV, None)
    if hidden:
        env[SENSITIVE_DEFINES_ENV] = json.dumps(hidden)
    with open(log_path, "ab") as log_file:
        proc = subprocess.Popen(
            [sys.executable, "-m", "strom.cli", *public],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    directory.pid_file(name).write_text(f"{proc.pid}\n")
    return proc


def _fail(proc: subprocess.Popen[bytes], directory: ClusterDirectory, name: str, what: str) -> ClusterError:
    return ClusterError(
        f"expected {what}; got {name} exited with code {proc.returncode}; hint: its log "
        f"{directory.log_file(name)} ends with:\n{_log_tail(directory.log_file(name))}"
    )


def _wait_for_addresses(
    proc: subprocess.Popen[bytes], directory: ClusterDirectory, timeout: float
) -> JobManagerAddresses:
    deadline = time.monotonic() + timeout
    while True:
        addresses = directory.read_addresses()
        if addresses is not None and addresses.pid == proc.pid:
            return addresses
        if proc.poll() is not None:
            raise _fail(proc, directory, "jobmanager", "the JobManager to start")
        if time.monotonic() > deadline:
            raise ClusterError(
                f"expected the JobManager (pid {proc.pid}) to serve within {timeout:.0f} s; it did not; hint: see "
                f"{directory.log_file('jobmanager')}"
            )
        time.sleep(0.05)


def _running(directory: ClusterDirectory) -> dict[str, int]:
    return {name: pid for name, pid in directory.pids().items() if is_strom_process(pid)}


def add_task_managers(
    directory: ClusterDirectory,
    count: int,
    defines: list[str],
    *,
    timeout: float = 60.0,
    config: Configuration | None = None,
) -> list[str]:
    """Start ``count`` more TaskManagers for the directory's JobManager, with the ``-D`` options the cluster was
    started with and then ``defines`` (later ones win); wait until they registered. ``config`` (the ``-D`` options)
    gives the REST client its TLS settings (``security.ssl.rest.*``)."""
    defines = [*directory.read_defines(), *defines]
    addresses = directory.read_addresses()
    if addresses is None or not is_strom_process(addresses.pid):
        raise ClusterError(
            f"expected a running JobManager in {directory.path}; got none; hint: strom cluster start first"
        )
    rest = RestClusterClient.from_configuration(addresses.rest_url, config or Configuration())
    before = len(rest.get("/taskmanagers")["taskmanagers"])
    taken = {int(n.rsplit("-", 1)[1]) for n in directory.pids() if n.startswith("taskmanager-") and n[12:].isdigit()}
    names: list[str] = []
    procs: list[tuple[str, subprocess.Popen[bytes]]] = []
    index = 0
    for _ in range(count):
        index += 1
        while index in taken:
            index += 1
        name = f"taskmanager-{index}"
        args = [
            "taskmanager",
            "--jobmanager",
            f"{addresses.rpc_host}:{addresses.rpc_port}",
            "--cluster-dir",
            str(directory.path),
            *defines,
        ]
        procs.append((name, _spawn(directory, name, args)))
        names.append(name)
    deadline = time.monotonic() + timeout
    while len(rest.get("/taskmanagers")["taskmanagers"]) < before + count:
        for name, proc in procs:
            if proc.poll() is not None:
                raise _fail(proc, directory, name, "the TaskManager to register")
        if time.monotonic() > deadline:
            raise ClusterError(
                f"expected {count} more TaskManager(s) to register within {timeout:.0f} s; hint: see their logs in "
                f"{directory.path}"
            )
        time.sleep(0.05)
    return names


def start_cluster(
    directory: ClusterDirectory,
    num_task_managers: int,
    defines: list[str],
    *,
    timeout: float = 60.0,
    config: Configuration | None = None,
    job_managers: int = 1,
) -> JobManagerAddresses:
    """Start a JobManager and ``num_task_managers`` TaskManagers in the background; with HA, ``job_managers``
    JobManagers (:mod:`job_managers`). ``defines`` (``-Dkey=value``) go on their command lines; ``config`` is the
    whole configuration (the configuration file's, which they read themselves from ``$STROM_CONF_DIR``, and
    ``defines``), for the HA settings, the ports and the REST client's TLS (default: ``defines``)."""
    config = config if config is not None else jms.configuration_of(defines)
    names = jms.job_manager_names(job_managers, config)
    directory.ensure()
    running = _running(directory)
    if running:
        listed = ", ".join(f"{n} (pid {p})" for n, p in sorted(running.items()))
        raise ClusterError(
            f"expected no cluster running in {directory.path}; got {listed}; hint: strom cluster stop, or "
            "--cluster-dir for a second one"
        )
    for stale in directory.path.glob("*.pid"):
        stale.unlink()
    directory.load_or_create_secret()
    directory.write_defines(defines)
    jms.record_high_availability(directory, config)
    proc = _spawn(directory, names[0], jms.job_manager_args(directory, names[0], 0, defines, config))
    try:
        addresses = _wait_for_addresses(proc, directory, timeout)
        for index, name in enumerate(names[1:], start=1):  # the standbys, once the first leads
            log, offset = directory.log_file(name), _size(directory.log_file(name))
            standby = _spawn(directory, name, jms.job_manager_args(directory, name, index, defines, config))
            if not jms.wait_for_standby(standby, log, offset, timeout):
                raise _fail(standby, directory, name, "the standby JobManager to start")
        if num_task_managers:
            add_task_managers(directory, num_task_managers, [], timeout=timeout, config=config)
    except BaseException:
        stop_cluster(directory)
        raise
    return addresses


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def stop_cluster(directory: ClusterDirectory, *, timeout: float = 30.0) -> list[str]:
    """Stop every process of the directory's pid files (the standby JobManagers, the leader, then the
    TaskManagers); returns what was running."""
    pids = directory.pids()
    leader = jms.leader_pid(directory)
    stopped = sorted(
        (n for n, p in pids.items() if is_strom_process(p)),
        key=lambda n: (not jms.is_job_manager(n), pids[n] == leader, n),
    )
    for name in stopped:
        pid = pids[name]
        if is_strom_process(pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
            if jms.is_job_manager(name):  # its TaskManagers see it go and stop too; wait before signalling them
                _wait_gone({name: pid}, timeout)
    leftover = _wait_gone({n: pids[n] for n in stopped}, timeout)
    for pid in leftover.values():
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    _wait_gone(leftover, 10.0)
    for name in pids:
        with contextlib.suppress(FileNotFoundError):
            directory.pid_file(name).unlink()
    with contextlib.suppress(FileNotFoundError):
        directory.addresses_file.unlink()
    return stopped


def _wait_gone(pids: dict[str, int], timeout: float) -> dict[str, int]:
    deadline = time.monotonic() + timeout
    alive = dict(pids)
    while alive and time.monotonic() < deadline:
        alive = {n: p for n, p in alive.items() if is_strom_process(p)}
        if alive:
            time.sleep(0.05)
    return alive


def status(directory: ClusterDirectory, config: Configuration | None = None) -> dict[str, Any]:
    """The processes of the directory and, if its JobManager answers, its REST overview (``config``: the client's
    TLS settings, ``security.ssl.rest.*``); ``rest-error`` says why it did not answer."""
    processes: dict[str, dict[str, Any]] = {
        name: {"pid": pid, "running": is_strom_process(pid)} for name, pid in directory.pids().items()
    }
    leader = jms.leader_pid(directory)
    for name, process in processes.items():  # a JobManager's role: the lease (HA) or jobmanager.json tells
        if jms.is_job_manager(name):
            process["role"] = "" if not process["running"] else "leader" if process["pid"] == leader else "standby"
    addresses = directory.read_addresses()
    overview: dict[str, Any] | None = None
    error = ""
    if addresses is not None and is_strom_process(addresses.pid):
        try:
            rest = RestClusterClient.from_configuration(addresses.rest_url, config or Configuration(), timeout=5.0)
            overview = rest.get("/overview")
        except ClusterError as exc:
            error = str(exc)
    answer = {
        "cluster-directory": str(directory.path),
        "rest-url": addresses.rest_url if addresses is not None else "",
        "processes": processes,
        "overview": overview,
    }
    return answer | ({"rest-error": error} if error else {})
