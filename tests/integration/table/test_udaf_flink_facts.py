"""``@udaf``, ``@udtaf`` and ``flat_aggregate`` against Flink 2.3's own output: the PyFlink program beside the facts
(tests/data/flink_sql/udaf/udaf_queries.py) runs here with ``pyflink`` replaced by ``strom``; each case's printed
changelog (STREAMING, parallelism 1) is compared with what PyFlink printed."""

from __future__ import annotations

import contextlib
import io
import types
from pathlib import Path
from typing import Any

import pytest

DATA = Path(__file__).parents[2] / "data" / "flink_sql" / "udaf"


def _program() -> Any:
    source = (DATA / "udaf_queries.py").read_text().replace("pyflink", "strom")
    module = types.ModuleType("strom_udaf_queries")
    module.__file__ = str(DATA / "udaf_queries.py")
    exec(compile(source, module.__file__, "exec"), module.__dict__)  # our own test program
    return module


PROGRAM = _program()


def _printed(name: str) -> str:
    t_env, source = PROGRAM.environment()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        PROGRAM.CASES[name](t_env, source).print()
    return out.getvalue()


@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", ["udaf_sql", "udaf_global_sql", "udaf_table_api"])
def test_udaf_changelog_is_flinks(name: str) -> None:
    assert _printed(name) == (DATA / f"{name}.txt").read_text()


@pytest.mark.timeout(300)
def test_flat_aggregate_rows_are_flinks_with_update_kinds() -> None:
    """strom retracts a group's previous rows as ``-U`` and emits the new ones as ``+U`` where Flink writes ``-D``
    and ``+I`` (see docs/sql.md); the rows, their order and the final table are Flink's."""
    expected = (DATA / "udtaf_flat_aggregate.txt").read_text()
    printed = _printed("udtaf_flat_aggregate").replace("| -U |", "| -D |").replace("| +U |", "| +I |")
    assert printed == expected
