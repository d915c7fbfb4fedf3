"""Shared fixtures: every test leaves no TaskManager process behind."""

from __future__ import annotations

from collections.abc import Iterator

import psutil
import pytest


def _strom_children() -> list[psutil.Process]:
    me = psutil.Process()
    out = []
    for p in me.children(recursive=True):
        try:
            if "strom.runtime.taskexecutor" in " ".join(p.cmdline()):
                out.append(p)
        except psutil.Error:
            pass
    return out


@pytest.fixture(autouse=True)
def no_leaked_task_managers() -> Iterator[None]:
    yield
    leaked = [p for p in _strom_children() if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
    for p in leaked:
        p.kill()
    assert not leaked, f"TaskManager processes left running: {[p.pid for p in leaked]}"
