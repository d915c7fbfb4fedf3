"""The TaskManager processes running below this test process. Importable from every test directory
(``pythonpath`` in pyproject.toml).

Only processes that run count: a zombie (exited, not yet waited for by whoever started it) or a process
that is gone by the time it is looked at is skipped, never an error — psutil raises ``ZombieProcess`` /
``NoSuchProcess`` from ``cmdline()`` and ``status()`` for those.
"""

from __future__ import annotations

import psutil

__all__ = ["running_task_managers"]


def running_task_managers() -> list[psutil.Process]:
    out = []
    for p in psutil.Process().children(recursive=True):
        try:
            if p.status() != psutil.STATUS_ZOMBIE and "strom.runtime.taskexecutor" in " ".join(p.cmdline()):
                out.append(p)
        except psutil.Error:
            pass
    return out
