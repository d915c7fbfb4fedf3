"""The TaskManager processes running below this test process. Importable from every test directory
(``pythonpath`` in pyproject.toml).

Only processes that run count: a zombie (exited, not yet waited for by whoever started it) or a process
that is gone by the time it is looked at is skipped, never an error — psutil raises ``ZombieProcess`` /
``NoSuchProcess`` from ``cmdline()`` and ``status()`` for those.
"""

from __future__ import annotations

import socket

import psutil

__all__ = ["free_port", "running_task_managers"]


def free_port() -> int:
    """A port of 127.0.0.1 free now (for the test servers: S3, PostgreSQL, Redis)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def running_task_managers() -> list[psutil.Process]:
    out = []
    for p in psutil.Process().children(recursive=True):
        try:
            if p.status() != psutil.STATUS_ZOMBIE and "strom.runtime.taskexecutor" in " ".join(p.cmdline()):
                out.append(p)
        except psutil.Error:
            pass
    return out
