"""pandas aggregate functions over OVER windows (ROWS and RANGE) and in a BATCH group by print what PyFlink 2.3
printed (tests/data/flink_sql/sqlpy_pandas_udaf.py and .txt).

The FLOAT means are compared to 5 significant digits: Flink's pandas OVER operator hands a frame's rows to the
function in its state map's iteration order (a Java HashMap of rowtimes), not in rowtime order, so a float32 sum of
the same values can round differently in the last digit (Bob at 4 s: Flink 28.800001, in rowtime order 28.799997)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

FACTS = Path(__file__).parents[2] / "data" / "flink_sql"
ROOT = Path(__file__).parents[3]


def _rounded(text: str) -> list[str]:
    return [re.sub(r"\d+\.\d+", lambda m: f"{float(m.group()):.5g}", line) for line in text.splitlines()]


@pytest.mark.timeout(300)
def test_pandas_udaf_over_windows_and_batch_group_by_print_what_pyflink_printed(tmp_path: Path) -> None:
    program = FACTS / "sqlpy_pandas_udaf.py"
    script = tmp_path / program.name
    script.write_text(re.sub(r"(?m)^(from|import) pyflink", r"\1 strom", program.read_text()))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    assert _rounded(done.stdout) == _rounded((FACTS / "sqlpy_pandas_udaf.txt").read_text())
