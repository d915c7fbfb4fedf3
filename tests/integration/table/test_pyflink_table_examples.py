"""PyFlink 2.3's own table examples (``pyflink/examples/table``) run with ``pyflink`` → ``strom`` in their imports
and print what PyFlink printed.

``tests/pyflink_programs/table`` holds the programs (Apache-2.0, copied with their header; only their import lines
say ``strom``); ``tests/data/pyflink_table_examples`` what PyFlink 2.3.0 printed for each (stdout, its start-up
notices dropped; see the README there). Tests marked ``pyflink`` (``make check-pyflink``) run PyFlink's installed
files instead of the copies against the same facts.

How each is compared, and why (``COMPARISONS``):
- ``exact``: line for line.
- ``unordered``: the lines as a multiset — windows firing at one watermark emit their keys in an order neither
  system fixes; two print sinks of one job interleave their lines. (``from_elements`` rows come from one source
  subtask, the last, in both systems, so the print connector's ``2> `` prefixes are compared too.)
- ``tableaux``: each ``print()`` tableau with its header and footer exactly and its rows as a multiset (the order of
  rows from two parallel subtasks is not fixed), ``print_schema()`` exactly; ``explain()`` sections are left out
  (strom prints its own plan tree, not Calcite's three sections: docs/sql.md).
- ``shape``: random data (``datagen`` random fields, ``numpy.random``) — the lines with their random values
  replaced by placeholders; PyFlink 2.3's async scalar functions also pair results with the wrong rows
  (``user_id`` ``a`` → ``db_value_for_c``), so the values there are placeholders too.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[3]
PROGRAMS = ROOT / "tests" / "pyflink_programs" / "table"
FACTS = ROOT / "tests" / "data" / "pyflink_table_examples"

_HEX = r"[0-9a-f]"
_SHAPES: dict[str, list[tuple[str, str]]] = {
    "mixing_use_of_datastream_and_table": [(r"\[-?\d+\]", "[<long>]")],
    "pandas_conversion_from_dataframe": [(r"\d+\.\d+", "<double>"), (r"^\d+ ", "<i> ")],
    "async_async_scalar_function": [
        (rf"db_value_for_{_HEX}", "db_value_for_<c>"),
        (rf"Product {_HEX}: \$\d+", "Product <c>: $<n>"),
        (rf"\| {_HEX} \|", "| <c> |"),
    ],
}


def _exact(text: str) -> object:
    return text.splitlines()


def _unordered(text: str) -> object:
    return Counter(text.splitlines())


def _tableaux(text: str) -> object:
    """The tableaux (rows as multisets) and schema prints of an output, explain sections left out."""
    parts: list[object] = []
    rows: list[str] = []
    for line in text.splitlines():
        if line.startswith("| +") or line.startswith("| -"):
            rows.append(line)
            continue
        if rows:
            parts.append(sorted(rows))
            rows = []
        if line.startswith(("+--", "| op", "(", ")", "  `")) or line.endswith(("in set", "Empty set")):
            parts.append(line)
    return parts


def _shape(name: str) -> Callable[[str], object]:
    def normalized(text: str) -> object:
        lines = []
        for line in text.splitlines():
            line = re.sub(r" +", " ", line)
            for pattern, placeholder in _SHAPES[name]:
                line = re.sub(pattern, placeholder, line)
            lines.append(line)
        return Counter(lines)

    return normalized


COMPARISONS: dict[str, Callable[[str], object]] = {
    "basic_operations": _tableaux,
    "mixing_use_of_datastream_and_table": _shape("mixing_use_of_datastream_and_table"),
    "multi_sink": _unordered,
    "process_json_data": _exact,
    "process_json_data_with_udf": _exact,
    "word_count": _exact,
    "pandas_conversion_from_dataframe": _shape("pandas_conversion_from_dataframe"),
    "pandas_pandas_udaf": _unordered,
    "windowing_over_window": _exact,
    "windowing_session_window": _unordered,
    "windowing_sliding_window": _unordered,
    "windowing_tumble_window": _unordered,
    "async_async_scalar_function": _shape("async_async_scalar_function"),
}
# basic_operations.py fails in PyFlink 2.3 itself: `from pyflink.table.expressions import *` binds `json` to the
# expression function, so sql_operations' UDTF calls json.loads on it — and on strom the same way, after printing
# the same tableaux.
FAILS = {"basic_operations": "AttributeError: 'function' object has no attribute 'loads'"}


def _run(program: Path, tmp_path: Path, *, rewrite: bool) -> subprocess.CompletedProcess[str]:
    script = program
    if rewrite:  # PyFlink's own file: only its import lines change
        source = re.sub(r"(?m)^(\s*(?:from|import) )pyflink", r"\1strom", program.read_text())
        script = tmp_path / program.name
        script.write_text(source)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=240, check=False
    )


def _check(name: str, done: subprocess.CompletedProcess[str]) -> None:
    if name in FAILS:
        assert done.returncode != 0 and FAILS[name] in done.stderr, done.stderr[-3000:]
    else:
        assert done.returncode == 0, done.stderr[-3000:]
    compare = COMPARISONS[name]
    assert compare(done.stdout) == compare((FACTS / f"{name}.txt").read_text()), done.stdout


def test_every_example_has_pyflinks_output_recorded() -> None:
    programs = {p.stem for p in PROGRAMS.glob("*.py")}
    assert {p.stem for p in FACTS.glob("*.txt")} == programs
    assert set(COMPARISONS) | {"streaming_word_count"} == programs


@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", sorted(COMPARISONS))
def test_a_pyflink_table_example_prints_what_pyflink_prints(name: str, tmp_path: Path) -> None:
    _check(name, _run(PROGRAMS / f"{name}.py", tmp_path, rewrite=False))


_EXAMPLE_PATHS = {
    name: name.replace("_", "/", 1) if name.startswith(("pandas_", "windowing_", "async_")) else name
    for name in COMPARISONS
}


@pytest.mark.timeout(300)
@pytest.mark.pyflink  # PyFlink's own files: `make check-pyflink`
@pytest.mark.parametrize("name", sorted(COMPARISONS))
def test_pyflinks_own_table_example_prints_the_same(name: str, tmp_path: Path, pyflink_examples: Path) -> None:
    _check(name, _run(pyflink_examples / "table" / f"{_EXAMPLE_PATHS[name]}.py", tmp_path, rewrite=True))


_WORDS = re.compile(r"^(?:\d+> )?([+-][IU])\[(\w+), (\d+)\]$")


def _streaming_word_count(program: Path, tmp_path: Path, *, rewrite: bool, seconds: float) -> str:
    """An unbounded job (random words at 5 per second, forever): its output after ``seconds``, then stopped."""
    script = program
    if rewrite:
        script = tmp_path / program.name
        script.write_text(re.sub(r"(?m)^(\s*(?:from|import) )pyflink", r"\1strom", program.read_text()))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    process = subprocess.Popen(
        [sys.executable, str(script)], stdout=subprocess.PIPE, text=True, env=env, cwd=tmp_path, start_new_session=True
    )
    try:
        out, _ = process.communicate(timeout=seconds)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGTERM)
        out, _ = process.communicate(timeout=30)
    return out


def _check_word_counts(out: str) -> None:
    """The first line, then a consistent changelog per word: +I 1, then -U n / +U n+1 pairs (the words of the
    program's list), as PyFlink's recorded output."""
    lines = out.splitlines()
    assert lines[0] == "Printing result to stdout. Use --output to specify output path."
    counts: dict[str, int] = {}
    pending: dict[str, int] = {}
    for line in lines[1:]:
        match = _WORDS.match(line)
        assert match is not None, line
        kind, word, n = match.group(1), match.group(2), int(match.group(3))
        if kind == "+I":
            assert word not in counts and n == 1, line
            counts[word] = 1
        elif kind == "-U":
            assert counts.get(word) == n, line
            pending[word] = n
        else:
            assert pending.pop(word, None) == n - 1, line
            counts[word] = n
    assert counts and set(counts) <= {
        "flink",
        "window",
        "timer",
        "event_time",
        "processing_time",
        "state",
        "connector",
        "pyflink",
        "checkpoint",
        "watermark",
        "sideoutput",
        "sql",
        "datastream",
        "broadcast",
        "asyncio",
        "catalog",
        "batch",
        "streaming",
    }


def test_pyflinks_streaming_word_count_output_is_such_a_changelog() -> None:
    _check_word_counts((FACTS / "streaming_word_count.txt").read_text())


@pytest.mark.timeout(120)
def test_streaming_word_count_prints_a_changelog_as_pyflink(tmp_path: Path) -> None:
    _check_word_counts(_streaming_word_count(PROGRAMS / "streaming_word_count.py", tmp_path, rewrite=False, seconds=15))
