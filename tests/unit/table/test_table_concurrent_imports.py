"""Two task threads of one TaskManager import modules of ``strom.table`` at the same time when they deploy (each
unpickles its operators): neither may get a half-initialized module. Before ``strom.table`` exported its names
lazily, importing ``strom.table.connectors`` and ``strom.table.runtime.streaming_join`` from two threads failed every
time (Python's import deadlock detection: "cannot import name 'create_sink' from partially initialized module")."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[3]

RACE = textwrap.dedent(
    """
    import importlib, sys, threading, traceback
    modules = sys.argv[1:]
    errors = []
    start = threading.Barrier(len(modules))

    def load(name):
        start.wait()
        try:
            importlib.import_module(name)
        except Exception:
            errors.append(traceback.format_exc())

    threads = [threading.Thread(target=load, args=(m,)) for m in modules]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print("".join(errors))
    """
)


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    "modules",
    [
        ("strom.table.connectors", "strom.table.runtime.streaming_join"),
        ("strom.table.table_environment", "strom.table.runtime.group_agg"),
        ("strom.table.planner.translator", "strom.table.runtime.window.window_aggregate", "strom.table.connectors"),
    ],
)
def test_task_threads_import_table_modules_at_once(modules: tuple[str, ...]) -> None:
    for _ in range(3):  # fresh interpreters: the race is in the first import
        done = subprocess.run(
            [sys.executable, "-c", RACE, *modules], capture_output=True, text=True, cwd=ROOT, timeout=100, check=True
        )
        assert done.stdout.strip() == "", done.stdout
