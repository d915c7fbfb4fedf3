"""The JobManagers of ``strom cluster start --jobmanagers N``: a leader and its standbys (Flink's ``conf/masters``).

Flink's ``start-cluster.sh`` starts a JobManager for every line of ``conf/masters`` (``host:webui-port``); with
``high-availability.type`` set they contend for leadership and the others wait as standbys. strom's cluster runs on
one machine, so the JobManagers are told apart by name and port:

================ ========================== =====================================================================
JobManager k     pid / stdout, log file     ports
================ ========================== =====================================================================
1                ``jobmanager.pid``/``.log`` ``rest.port``, ``jobmanager.rpc.port``
k = 2 … N        ``jobmanager-k.pid``/``.log`` ``rest.port + k - 1``, ``jobmanager.rpc.port + k - 1`` (0 stays 0: free
                                             ports)
================ ========================== =====================================================================

Their own log files are ``<env.log.dir>/jobmanager[-k].log`` (``GET /jobmanager/logs``). The first is started alone
and becomes the leader (``start`` returns once it serves), then the standbys; each standby is up once it printed that
it waits. Which one leads later is the lease's to tell (:func:`leader_pid`: the lease in the HA directory names its
holder ``host:pid``), so ``start`` records the HA directory in the cluster directory for ``status`` and ``stop``.
More than one JobManager without HA is refused: they would all serve, each its own cluster.
"""

from __future__ import annotations

import contextlib
import socket
import subprocess
import time
from pathlib import Path

from strom.config import ClusterOptions, Configuration, RestOptions
from strom.deploy.standalone.cluster_dir import ClusterDirectory
from strom.exceptions import ClusterError
from strom.runtime.highavailability.services import HighAvailabilitySettings, ha_settings, read_leader

__all__ = [
    "STANDBY_LINE",
    "configuration_of",
    "is_job_manager",
    "job_manager_args",
    "job_manager_names",
    "leader_pid",
    "record_high_availability",
    "wait_for_standby",
]

#: what ``strom jobmanager`` prints once it contends as a standby (:mod:`high_availability`)
STANDBY_LINE = "): standby, HA directory "
_HA_FILE = "high-availability"


def configuration_of(defines: list[str]) -> Configuration:
    """The configuration of ``-Dkey=value`` arguments (already checked by the CLI)."""
    conf = Configuration()
    for d in defines:
        key, _, value = d.removeprefix("-D").partition("=")
        conf.set_string(key.strip(), value.strip())
    return conf


def job_manager_names(count: int, config: Configuration) -> list[str]:
    """The pid-file names of ``count`` JobManagers; a ClusterError for more than one without HA."""
    if count < 1:
        raise ClusterError(f"expected --jobmanagers >= 1; got {count}")
    if count > 1 and ha_settings(config) is None:
        raise ClusterError(
            f"expected high-availability.type: file with --jobmanagers {count}; got no high availability; hint: "
            "add -D high-availability.type=file -D high-availability.storageDir=DIR (standbys need a leader "
            "election), or start one JobManager"
        )
    return ["jobmanager"] + [f"jobmanager-{k}" for k in range(2, count + 1)]


def is_job_manager(name: str) -> bool:
    return name == "jobmanager" or (name.startswith("jobmanager-") and name[11:].isdigit())


def job_manager_args(
    directory: ClusterDirectory, name: str, index: int, defines: list[str], config: Configuration | None = None
) -> list[str]:
    """``strom jobmanager`` arguments of the ``index``-th (0-based) JobManager: its name and, after the first, its
    ports (``config``'s, the configuration file's and ``defines``; default ``defines``') shifted by ``index`` (free
    ports stay free)."""
    config = config if config is not None else configuration_of(defines)
    ports = []
    for option in (RestOptions.PORT, ClusterOptions.JOBMANAGER_PORT):
        base = config.get(option)
        if index and base:
            ports.append(f"-D{option.key}={base + index}")
    return ["jobmanager", "--cluster-dir", str(directory.path), "--name", name, *defines, *ports]


def wait_for_standby(proc: subprocess.Popen[bytes], log: Path, offset: int, timeout: float) -> bool:
    """Whether JobManager ``proc`` printed that it waits as a standby (in its stdout ``log`` after ``offset``) within
    ``timeout``; False once it exited."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), open(log, "rb") as f:
            f.seek(offset)
            if STANDBY_LINE.encode() in f.read():
                return True
        if proc.poll() is not None:
            return False
        time.sleep(0.05)
    raise ClusterError(
        f"expected the standby JobManager (pid {proc.pid}) to contend within {timeout:.0f} s; it did not; hint: "
        f"see {log}"
    )


# -- which one leads ---------------------------------------------------------------------------------------------
def record_high_availability(directory: ClusterDirectory, config: Configuration) -> None:
    """Note the HA directory in the cluster directory (for :func:`leader_pid`), or that there is none."""
    settings = ha_settings(config)
    path = directory.path / _HA_FILE
    if settings is None:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        return
    path.write_text(f"{settings.directory}\n{settings.lease_duration_ms}\n{settings.retry_period_s}\n")


def recorded_high_availability(directory: ClusterDirectory) -> HighAvailabilitySettings | None:
    try:
        ha_dir, lease_ms, retry_s = (directory.path / _HA_FILE).read_text().split("\n")[:3]
        return HighAvailabilitySettings(
            directory=ha_dir, lease_duration_ms=int(lease_ms), retry_period_s=float(retry_s)
        )
    except (OSError, ValueError):
        return None


def leader_pid(directory: ClusterDirectory) -> int | None:
    """The pid of the JobManager on this machine whose lease is current and published its addresses (HA), else
    of the JobManager that wrote ``jobmanager.json``; None when none leads."""
    settings = recorded_high_availability(directory)
    if settings is None:
        addresses = directory.read_addresses()
        return addresses.pid if addresses is not None else None
    try:
        lease = read_leader(settings)
    except (OSError, ValueError):
        return None
    if lease is None:
        return None
    host, _, pid = lease.holder.rpartition(":")
    return int(pid) if host == socket.gethostname() and pid.isdigit() else None
