"""``StartupSplit``: where a job's wall time went, from its process's start to its cluster's close.

A short job is mostly start-up (issue 33): the interpreter and strom's imports, the program building its job graph,
the cluster's start (the JobManager, TaskManager processes until they registered), the deployment until every task
is RUNNING — from then on the sources read, so that is when the first record can flow — the run to the job's end
and the cluster's shutdown. The client stamps its own steps (:class:`ClientStamps`, wall-clock seconds as the
JobMaster's execution timestamps are), the JobMaster says when every task was running
(:attr:`~strom.runtime.jobmaster.job_result.JobResult.all_running_ms`). The job's client logs the split at INFO on
the logger ``strom.client.startup_split``; ``strom run --startup-split`` prints it on standard error.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass

__all__ = ["ClientStamps", "StartupSplit", "mark_program_start", "process_start_time", "report"]

log = logging.getLogger(__name__)


def process_start_time() -> float | None:
    """When this process started (wall-clock seconds, to the kernel's clock tick, 10 ms); None off Linux. Its age is
    the system's uptime minus its start in ticks since boot (both on the boot clock, so no rounding of a boot time)."""
    try:
        with open("/proc/self/stat", "rb") as f:
            stat = f.read()
        with open("/proc/uptime", "rb") as f:
            uptime = float(f.read().split()[0])
        start_ticks = int(stat.rsplit(b")", 1)[1].split()[19])  # field 22 (starttime), after "(comm)"
    except (OSError, ValueError, IndexError):
        return None
    return time.time() - (uptime - start_ticks / os.sysconf("SC_CLK_TCK"))


@dataclass(slots=True)
class ClientStamps:
    """The client's steps of one job, wall-clock seconds (0.0: not reached)."""

    #: ``execute()`` handed the job graph to its executor (the program and its graph were built)
    submitting: float = 0.0
    #: the job's cluster started (its TaskManagers registered)
    cluster_started: float = 0.0
    #: the cluster's Dispatcher accepted the job
    submitted: float = 0.0
    #: the job's result arrived
    ended: float = 0.0
    #: the job's cluster closed
    closed: float = 0.0

    @staticmethod
    def now() -> float:
        return time.time()


@dataclass(frozen=True, slots=True, kw_only=True)
class StartupSplit:
    """The phases of one job in seconds; ``interpreter`` is None unless ``strom run`` started the program (then
    ``program`` counts from the process's start)."""

    interpreter: float | None  # the process's start → strom run starts the program (Python, strom's imports)
    program: float  # → execute() submitted: the program's own code and imports, the job graph
    cluster: float  # the cluster's start: JobManager, TaskManagers until registered
    deploy: float  # submission → every task RUNNING (the first record)
    run: float  # → the job's end
    shutdown: float  # → the cluster closed

    @classmethod
    def of(cls, stamps: ClientStamps, *, all_running: float, process_start: float | None) -> StartupSplit:
        """The split of a job whose client stamped ``stamps`` and whose tasks were all running at ``all_running``
        (wall-clock seconds; 0.0: never, e.g. it failed first)."""
        program_start = _program_started
        start = program_start or process_start or stamps.submitting
        interpreter = None
        if program_start is not None and process_start is not None:
            interpreter = max(0.0, program_start - process_start)
        running = all_running if all_running > 0 else stamps.ended
        return cls(
            interpreter=interpreter,
            program=max(0.0, stamps.submitting - start),
            cluster=max(0.0, stamps.cluster_started - stamps.submitting),
            deploy=max(0.0, running - stamps.cluster_started),
            run=max(0.0, stamps.ended - running),
            shutdown=max(0.0, stamps.closed - stamps.ended),
        )

    @property
    def total(self) -> float:
        return (self.interpreter or 0.0) + self.program + self.cluster + self.deploy + self.run + self.shutdown

    def describe(self) -> str:
        """One line: ``interpreter 0.150 s · program 0.210 s · ... · total 0.710 s``."""
        interpreter = "" if self.interpreter is None else f"interpreter and strom's imports {self.interpreter:.3f} s · "
        return (
            f"{interpreter}program {self.program:.3f} s · cluster {self.cluster:.3f} s · deploy {self.deploy:.3f} s "
            f"(to every task RUNNING: the first record) · run {self.run:.3f} s · shutdown {self.shutdown:.3f} s · "
            f"total {self.total:.3f} s"
        )


_program_started: float | None = None


def mark_program_start() -> None:
    """``strom run`` is about to run the program: the end of the interpreter's and strom's own start-up."""
    global _program_started
    _program_started = time.time()


def report(job: str, stamps: ClientStamps, *, all_running: float) -> None:
    """Log the split of ``job`` at INFO (what ``strom run --startup-split`` prints)."""
    if log.isEnabledFor(logging.INFO):
        split = StartupSplit.of(stamps, all_running=all_running, process_start=process_start_time())
        log.info("start-up split of job %s: %s", job, split.describe())
