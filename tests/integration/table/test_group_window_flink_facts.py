"""The Table API's group windows (``pyflink.table.window``'s Tumble, Slide, Session) against Flink 2.3's own
output: the PyFlink program beside the facts (tests/data/flink_sql/group_window/group_window_queries.py) runs here
with ``pyflink`` replaced by ``strom``; each case's printed changelog (STREAMING, parallelism 1) is Flink's."""

from __future__ import annotations

import contextlib
import io
import tempfile
import types
from pathlib import Path
from typing import Any

import pytest

DATA = Path(__file__).parents[2] / "data" / "flink_sql" / "group_window"


def _program() -> Any:
    source = (DATA / "group_window_queries.py").read_text().replace("pyflink", "strom")
    module = types.ModuleType("strom_group_window_queries")
    module.__file__ = str(DATA / "group_window_queries.py")
    exec(compile(source, module.__file__, "exec"), module.__dict__)  # our own test program
    return module


PROGRAM = _program()
EVENTS = Path(tempfile.mkdtemp(prefix="strom-group-window-")) / "events.csv"
EVENTS.write_text("".join(f"{k},{v},{ts}\n" for k, v, ts in PROGRAM.EVENT_ROWS))


def _printed(name: str) -> str:
    t_env, events = PROGRAM.environment(str(EVENTS))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        PROGRAM.CASES[name](t_env, events).print()
    return out.getvalue()


@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", ["tumble", "global_tumble"])
def test_group_window_changelog_is_flinks(name: str) -> None:
    assert _printed(name) == (DATA / f"{name}.txt").read_text()


@pytest.mark.timeout(300)
def test_slide_rows_are_flinks() -> None:
    """Overlapping windows fire together; Flink orders the keys of one firing by its timer heap, strom by key
    arrival: the same rows, each window's rows in a different order."""
    printed, expected = _printed("slide").splitlines(), (DATA / "slide.txt").read_text().splitlines()
    assert printed[:3] == expected[:3]
    assert sorted(printed) == sorted(expected)


@pytest.mark.timeout(300)
def test_session_group_window_rows_are_flinks() -> None:
    """Sessions per group key (the SESSION window TVF partitioned by the keys): Flink's rows; the two keys' sessions
    close at the same watermark, so only each key's own order is fixed."""
    printed, expected = _printed("session").splitlines(), (DATA / "session.txt").read_text().splitlines()
    assert printed[:3] == expected[:3]
    assert sorted(printed) == sorted(expected)
    for key in ("a", "b"):
        assert [r for r in printed if f"| {key} |" in r] == [r for r in expected if f"| {key} |" in r]
