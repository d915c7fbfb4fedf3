"""PyFlink-style programs (tests/pyflink_programs, written here with PyFlink's module paths under ``strom``) print
what PyFlink 2.3.0 prints for them: tests/pyflink_programs/expected holds PyFlink's stdout of the same programs
with ``strom`` replaced by ``pyflink`` in their imports (facts recorded once; the suite never runs PyFlink).

Lines are compared per sink (the text before ``> ``, with the subtask number of a parallel sink dropped) as
multisets: the order of lines from different subtasks, and of windows or timers that fire at the same moment,
is not fixed in either system."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

PROGRAMS = Path(__file__).parents[1] / "pyflink_programs"
NAMES = sorted(p.stem for p in PROGRAMS.glob("*.py"))
_SINK = re.compile(r"^(?:(?P<ident>[^>]*?):)?(?P<subtask>\d+)> |^(?P<only>[^>]+)> ")


def per_sink(text: str) -> dict[str, Counter[str]]:
    """Lines grouped by sink identifier (subtask numbers dropped), each group a multiset."""
    groups: dict[str, Counter[str]] = {}
    for line in text.splitlines():
        m = _SINK.match(line)
        if m is None:
            key, rest = "", line
        else:
            key, rest = (m.group("ident") or m.group("only") or ""), line[m.end() :]
        groups.setdefault(key, Counter())[rest] += 1
    return groups


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
    assert per_sink(run.stdout) == per_sink(expected), run.stdout
