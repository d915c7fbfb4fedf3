"""The Spark tables example and the README's Spark snippet run as a user runs them, and say what they claim."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.spark]

ROOT = Path(__file__).resolve().parents[2]


def readme_snippet(heading: str) -> str:
    """The first ```python block after ``heading`` in the README."""
    text = (ROOT / "README.md").read_text()
    section = text[text.index(heading) :]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match is not None, f"no python block after {heading!r}"
    return match.group(1)


def run(args: list[str], cwd: Path) -> str:
    proc = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=280)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


@pytest.mark.timeout(300)
def test_the_readme_spark_snippet_lands_spark_s_batch_windows_in_a_table(tmp_path: Path) -> None:
    script = tmp_path / "snippet.py"
    script.write_text(readme_snippet("### Spark, PostgreSQL and Redis"))
    out = run([sys.executable, str(script)], tmp_path)
    assert "1670 windows, as Spark's batch query: True" in out, out


@pytest.mark.timeout(300)
def test_the_spark_tables_example_runs_with_its_task_managers_in_spark_tasks(tmp_path: Path) -> None:
    strom = str(Path(sys.executable).with_name("strom"))
    example = str(ROOT / "examples" / "spark_tables.py")
    out = run([strom, "run", "--target", "spark", "--spark-master", "local[2]", example], tmp_path)
    assert "1670 windows; equal to Spark's batch query: True" in out, out


@pytest.mark.timeout(600)
def test_the_spark_tables_example_runs_twice_in_a_row_with_its_own_session_settings(tmp_path: Path) -> None:
    """The example's SparkSession.builder settings take effect under strom run (its warehouse in a temporary
    directory): nothing is left in the working directory, and a second run does not meet the first one's tables."""
    strom = str(Path(sys.executable).with_name("strom"))
    example = str(ROOT / "examples" / "spark_tables.py")
    for _ in range(2):
        out = run([strom, "run", "--target", "spark", example], tmp_path)
        assert "1670 windows; equal to Spark's batch query: True" in out, out
        assert list(tmp_path.iterdir()) == [], "expected nothing left in the working directory"
