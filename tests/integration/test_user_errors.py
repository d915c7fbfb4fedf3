"""A failed job points at the user's code (issue 31 §3), run as users run it — ``python job.py`` and ``strom run
job.py`` — on TaskManager processes: strom's message first (what failed, where), then the user's traceback with the
job file's name, line and source line (not cloudpickle's ``<dynamic-code>``); strom's own frames only at
``logging.level: DEBUG``; an error without user frames (an unhashable key, a value not of the declared type) is
strom's message alone, without an empty "User function traceback" header."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.processes, pytest.mark.timeout(120)]

JOB = """\
import sys
from strom import StreamExecutionEnvironment
from strom.api.typeinfo import Types

env = StreamExecutionEnvironment.get_execution_environment()
case = sys.argv[1]
env.set_parallelism(2 if case == "key-routed" else 1)
numbers = env.from_collection([(1, 2), (3, 0)])
if case == "udf":
    numbers.map(lambda t: t[0] // t[1]).name("divide").print()
elif case in ("key-routed", "key-local"):
    numbers.key_by(lambda t: [t[0]]).reduce(lambda a, b: a).name("sums").print()
else:
    numbers.map(lambda t: str(t[0]), output_type=Types.INT()).name("typed").print()
env.execute(case)
"""
TRACEBACK_HEADER = "User function traceback"
#: the key selector is the downstream operator's (its key_by), run where the upstream output is routed
ROUTED = (
    "the key selector (HASH) of operator 'sums', routing the output of operator 'Source: Collection Source' "
    "(subtask 1/1, attempt 0) on output record ((1, 2))"
)


def _run(tmp_path: Path, case: str, *, strom_run: bool = False, debug: bool = False) -> str:
    """The standard error of the job ``case``, which fails."""
    script = tmp_path / "job.py"
    script.write_text(JOB)
    options = ["-Dlogging.level=DEBUG"] if debug else []
    launcher = [sys.executable, "-m", "strom.cli", "run", *options] if strom_run else [sys.executable]
    path = os.pathsep.join([str(Path(__file__).parents[2]), os.environ.get("PYTHONPATH", "")])
    run = subprocess.run(
        [*launcher, str(script), case],
        capture_output=True,
        text=True,
        timeout=100,
        cwd=tmp_path,
        env=dict(os.environ, PYTHONPATH=path),
    )
    assert run.returncode == 1, run.stderr[-3000:]
    return run.stderr


def _failure(stderr: str) -> list[str]:
    """The lines of the failure strom describes: after ``JobExecutionError: `` (python) or ``strom run: ``."""
    lines = stderr.splitlines()
    start = next(i for i, line in enumerate(lines) if "JobExecutionError: job" in line or "strom run: job" in line)
    return lines[start:]


@pytest.mark.parametrize("strom_run", [False, True], ids=["python", "strom-run"])
def test_a_user_function_s_frame_shows_the_job_file_its_line_and_source(tmp_path: Path, strom_run: bool) -> None:
    lines = _failure(_run(tmp_path, "udf", strom_run=strom_run))
    assert lines[1].startswith(
        "ZeroDivisionError: integer division or modulo by zero — raised by the user function "
        "of operator 'divide' (subtask 1/1, attempt 0) on input record #1 ((3, 0))"
    )
    header = lines.index("User function traceback (most recent call last):")
    assert lines[header + 1 :] == [
        f'  File "{tmp_path / "job.py"}", line 10, in <lambda>',
        '    numbers.map(lambda t: t[0] // t[1]).name("divide").print()',
        "                          ~~~~~^^~~~~~",
        "ZeroDivisionError: integer division or modulo by zero",
    ]


def test_at_debug_strom_s_frames_follow_the_user_s(tmp_path: Path) -> None:
    text = "\n".join(_failure(_run(tmp_path, "udf", strom_run=True, debug=True)))
    user = text.index(f'File "{tmp_path / "job.py"}", line 10, in <lambda>')
    assert text.index("— raised by the user function of operator 'divide'") < text.index(TRACEBACK_HEADER)
    assert "abstract_udf_stream_operator.py" in text[text.index(TRACEBACK_HEADER) : user]


@pytest.mark.parametrize(
    ("case", "strom_run", "who"),
    [
        ("key-routed", False, ROUTED),
        ("key-routed", True, ROUTED),
        ("key-local", False, "the key selector (key_by) of operator 'sums' (subtask 1/1, attempt 0) on input record"),
    ],
)
def test_an_unhashable_key_is_one_line_naming_the_key_selector_and_the_key_type(
    tmp_path: Path, case: str, strom_run: bool, who: str
) -> None:
    lines = _failure(_run(tmp_path, case, strom_run=strom_run))
    assert lines[1].startswith(
        "InvalidProgramError: a key must be hashable; got a 'list' ([1]); hint: return a tuple instead of a list"
    )
    assert who in lines[1]
    assert lines[2:] == []  # no traceback: neither strom's partitioner nor an empty header


def test_a_value_not_of_the_declared_type_is_one_message_without_a_traceback_header(tmp_path: Path) -> None:
    lines = _failure(_run(tmp_path, "typed"))
    assert lines[1].startswith(
        "expected the records of operator 'typed' (subtask 1/1) to fit the declared type BasicTypeInfo(Integer); "
        "got '1'"
    )
    assert "(str)" in lines[1]
    assert lines[2:] == []
