"""Programs written in PyFlink's Table API style run with ``pyflink`` → ``strom`` in their imports and print what
PyFlink 2.3 printed (tests/data/flink_sql/examples)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).parents[2] / "data" / "flink_sql" / "examples"
ROOT = Path(__file__).parents[3]


def _run_as_strom(program: Path, tmp_path: Path) -> str:
    source = program.read_text().replace("pyflink", "strom")
    script = tmp_path / program.name
    script.write_text(source)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=240, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.mark.timeout(300)
def test_word_count_prints_what_pyflink_prints(tmp_path: Path) -> None:
    out = _run_as_strom(EXAMPLES / "word_count_program.py", tmp_path)
    assert out == (EXAMPLES / "word_count.txt").read_text()


@pytest.mark.timeout(300)
@pytest.mark.pyflink  # PyFlink's own program: `make check-pyflink`
def test_pyflinks_own_word_count_example_prints_the_same(tmp_path: Path, pyflink_examples: Path) -> None:
    out = _run_as_strom(pyflink_examples / "table" / "word_count.py", tmp_path)
    assert out == (EXAMPLES / "word_count.txt").read_text()


@pytest.mark.timeout(300)
def test_column_operations_print_what_pyflink_prints(tmp_path: Path) -> None:
    out = _run_as_strom(EXAMPLES / "column_operations_program.py", tmp_path)
    assert out == (EXAMPLES / "column_operations.txt").read_text()
