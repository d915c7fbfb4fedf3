"""PyFlink-style programs (tests/pyflink_programs, written here with PyFlink's module paths under ``strom``) print
what PyFlink 2.3.0 prints for them: tests/pyflink_programs/expected holds PyFlink's stdout of the same programs
with ``strom`` replaced by ``pyflink`` in their imports (facts recorded once; the suite never runs PyFlink).

Lines are compared as multisets, each with its ``N> `` prefix: a keyed record lands on the subtask where Flink puts
it (Flink's key groups, :mod:`strom.runtime.state.key_hash`), but the order of lines from different subtasks, and of
windows or timers that fire at the same moment, is not fixed in either system."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

PROGRAMS = Path(__file__).parents[1] / "pyflink_programs"
NAMES = sorted(p.stem for p in PROGRAMS.glob("*.py"))


def test_every_program_has_pyflinks_output_recorded() -> None:
    assert NAMES and all((PROGRAMS / "expected" / f"{n}.out").exists() for n in NAMES)


@pytest.mark.timeout(180)
@pytest.mark.parametrize("name", NAMES)
def test_a_pyflink_style_program_prints_what_pyflink_prints(name: str, tmp_path: Path) -> None:
    path = os.pathsep.join([str(Path(__file__).parents[2]), os.environ.get("PYTHONPATH", "")])
    env = dict(os.environ, PYTHONPATH=path)
    run = subprocess.run(
        [sys.executable, str(PROGRAMS / f"{name}.py")],
        capture_output=True,
        text=True,
        timeout=150,
        cwd=tmp_path,
        env=env,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    expected = (PROGRAMS / "expected" / f"{name}.out").read_text()
    assert Counter(run.stdout.splitlines()) == Counter(expected.splitlines()), run.stdout
