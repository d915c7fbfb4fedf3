"""Shared fixtures: every test leaves no TaskManager process behind."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import psutil
import pytest
from processes import running_task_managers


@pytest.fixture(autouse=True)
def no_leaked_task_managers() -> Iterator[None]:
    yield
    leaked = running_task_managers()
    for p in leaked:
        with contextlib.suppress(psutil.Error):  # it ended meanwhile
            p.kill()
    psutil.wait_procs(leaked, timeout=10)  # reaps them (our descendants' children are their parents' to reap)
    assert not leaked, f"TaskManager processes left running: {[p.pid for p in leaked]}"
