"""The Table API's ``order_by`` / ``offset`` / ``fetch`` / ``limit`` print what PyFlink 2.3 printed for the same
calls (tests/data/flink_sql/sqlpy_order_by.py and .txt): BATCH sorted tables with NULLs last ascending and first
descending, STREAMING's refusal of a non-time sort and its Top-N changelog for ``order_by`` + ``fetch``."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from strom.table import EnvironmentSettings, TableEnvironment
from strom.table.errors import TableException, ValidationException
from strom.table.expressions import col

FACTS = Path(__file__).parents[2] / "data" / "flink_sql"
ROOT = Path(__file__).parents[3]


@pytest.mark.timeout(300)
def test_order_by_offset_fetch_print_what_pyflink_printed(tmp_path: Path) -> None:
    program = FACTS / "sqlpy_order_by.py"
    script = tmp_path / program.name
    script.write_text(re.sub(r"(?m)^(from|import) pyflink", r"\1 strom", program.read_text()))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout == (FACTS / "sqlpy_order_by.txt").read_text()


def test_offset_needs_order_by_and_a_streaming_sort_fails_when_planned() -> None:
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    table = t_env.from_elements([(1, "a")], ["id", "name"])
    with pytest.raises(ValidationException, match="offset: expected a table sorted by order_by"):
        table.offset(1)
    ordered = table.order_by(col("name"))  # accepted here: a fetch may still make it a Top-N
    assert [str(t) for t in ordered.get_schema().types] == ["BIGINT", "STRING"]
    with pytest.raises(TableException, match=r"Sort on a non-time-attribute field is not supported\."):
        ordered.execute()
