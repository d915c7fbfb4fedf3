"""``PrestartedTaskManagers``: the MiniCluster's first TaskManager processes, started before its JobManager.

Most of a TaskManager process's start is its interpreter and strom's imports, and most of a MiniCluster's own start is
importing and starting the JobManager in the client. Done one after the other, a short job waits for both; so the
local executor starts the TaskManager processes first (issue 33, start-up): each is ``python -m
strom.runtime.taskexecutor --tm-id=tm-<n> --parent-pid=<pid> --command-line-on-stdin``, imports the runtime, then
waits for the rest of its command line — the JobManager's address, its settings, all that
:func:`~strom.deploy.minicluster.task_manager_command` would have put on it — as the first line of its standard input,
a JSON list, followed by the cluster secret and its launch token as ever. The MiniCluster hands each its line once the
JobManager runs (:meth:`take`). Its id and its parent are on the command line from the start (``ps`` shows who it will
be); a process the cluster does not take is ended (:meth:`close`); one whose standard input closes before its
command line came exits 0.

Only this module is imported before the processes start (a few standard modules), so they overlap with the rest. The
*mode* of ``minicluster.taskmanager-mode`` is read here for that reason: threads are not prestarted.
"""

from __future__ import annotations

import contextlib
import logging
import os
import subprocess
import sys
import time

from strom.config import ClusterOptions, Configuration
from strom.exceptions import ConfigurationError
from strom.runtime.taskexecutor import COMMAND_LINE_ON_STDIN

__all__ = [
    "PROCESS",
    "TASK_MANAGER_MODULE",
    "THREAD",
    "PrestartedTaskManagers",
    "task_manager_environment",
    "task_manager_id",
    "task_manager_mode",
]

log = logging.getLogger(__name__)

#: the values of ``minicluster.taskmanager-mode``
PROCESS = "process"
THREAD = "thread"

#: ``python -m`` of a TaskManager process
TASK_MANAGER_MODULE = "strom.runtime.taskexecutor"

_CLOSE_TIMEOUT = 5.0  # seconds close() waits for the processes nobody took, together


def task_manager_mode(config: Configuration) -> str:
    """``minicluster.taskmanager-mode``: ``process`` or ``thread``."""
    mode = config.get(ClusterOptions.TASK_MANAGER_MODE).strip().lower()
    if mode not in (PROCESS, THREAD):
        key = ClusterOptions.TASK_MANAGER_MODE.key
        raise ConfigurationError(
            f"expected '{PROCESS}' or '{THREAD}' for {key}; got {mode!r}; hint: the default is '{PROCESS}' (child "
            f"processes); '{THREAD}' hosts the TaskManagers in this process, for tests"
        )
    return mode


def task_manager_id(n: int) -> str:
    """The id of a cluster's ``n``-th TaskManager (1, 2, ...; replacements count on, ids are never reused)."""
    return f"tm-{n}"


def task_manager_environment() -> dict[str, str]:
    """A TaskManager process's environment: this one's, with this process's ``sys.path`` as ``PYTHONPATH`` (the
    program's modules and ``-pyfs`` directories import there as here)."""
    env = dict(os.environ)
    paths = [p or os.getcwd() for p in sys.path]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    return env


class PrestartedTaskManagers:
    """TaskManager processes ``tm-1`` … ``tm-<count>``, started now, waiting for their command lines."""

    def __init__(self, count: int) -> None:
        self._waiting: dict[str, subprocess.Popen[bytes]] = {}
        env = task_manager_environment()
        parent = f"--parent-pid={os.getpid()}"
        try:
            for n in range(1, count + 1):
                tm_id = task_manager_id(n)
                cmd = [sys.executable, "-m", TASK_MANAGER_MODULE, f"--tm-id={tm_id}", parent, COMMAND_LINE_ON_STDIN]
                # own process group: a terminal's Ctrl-C (its foreground group) never interrupts their imports
                self._waiting[tm_id] = subprocess.Popen(cmd, stdin=subprocess.PIPE, env=env, process_group=0)
        except BaseException:
            self.close()
            raise

    def take(self, tm_id: str) -> subprocess.Popen[bytes] | None:
        """The process started for ``tm_id`` (whoever takes it writes its command line), or None. It may have ended
        already: then it is a TaskManager that ended before registering, as a new one would be."""
        return self._waiting.pop(tm_id, None)

    def close(self) -> None:
        """End the processes nobody took — at once: none of them is a TaskManager yet (SIGTERM, then SIGKILL)."""
        waiting, self._waiting = list(self._waiting.values()), {}
        for proc in waiting:
            if proc.stdin is not None:
                with contextlib.suppress(OSError):
                    proc.stdin.close()
            with contextlib.suppress(OSError):
                proc.terminate()
        deadline = time.monotonic() + _CLOSE_TIMEOUT
        for proc in waiting:
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                log.warning("a prestarted TaskManager (pid %d) did not end on SIGTERM; killing it", proc.pid)
                proc.kill()
                proc.wait()
