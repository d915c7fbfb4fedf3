"""A user function's error points at the user's code (issue 31 §3): frames of functions cloudpickle shipped by value
show the job file, its line and source line (not ``<dynamic-code>``); strom's own frames and exceptions without a
user frame are left out unless logging at DEBUG; an error without user frames has no traceback header."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import cloudpickle
import pytest
from operator_harness import OperatorHarness

from strom.api.typeinfo import Types
from strom.exceptions import UserFunctionError
from strom.runtime.operators.keyed import StreamGroupedReduce
from strom.runtime.operators.simple import StreamMap
from strom.runtime.operators.typed_output import type_mismatch
from strom.runtime.operators.user_traceback import DYNAMIC_CODE, add_source_lines, format_user_traceback
from strom.runtime.taskexecutor.task import describe_failure

pytestmark = pytest.mark.timeout(60)

JOB = """\
def helper(x):
    return 10 // x


def divide(x):
    return helper(x) + 1
"""


def _shipped(tmp_path: Path, name: str = "divide") -> Callable[[Any], Any]:
    """A function of a job file as a TaskManager has it: cloudpickled by value (its module is not importable
    there), so its code says ``<dynamic-code>``."""
    job = tmp_path / "job.py"
    job.write_text(JOB)
    namespace: dict[str, Any] = {"__name__": "not_an_importable_job_module", "__file__": str(job)}
    exec(compile(JOB, str(job), "exec"), namespace)
    fn: Callable[[Any], Any] = cloudpickle.loads(cloudpickle.dumps(namespace[name]))
    assert fn.__code__.co_filename == DYNAMIC_CODE
    return fn


@pytest.fixture
def strom_level() -> Iterator[logging.Logger]:
    log = logging.getLogger("strom")
    level = log.level
    try:
        yield log
    finally:
        log.setLevel(level)


def _fail(op: Any, batch: list[Any]) -> UserFunctionError:
    h = OperatorHarness(op).open()
    with pytest.raises(UserFunctionError) as info:
        h.operator.process_batch(batch)
    return info.value


def test_a_shipped_function_s_frames_show_the_job_file_its_lines_and_source(tmp_path: Path) -> None:
    error = _fail(StreamMap(_shipped(tmp_path)), [1, 0])
    job = tmp_path / "job.py"
    assert error.user_traceback == (
        f'  File "{job}", line 6, in divide\n'
        "    return helper(x) + 1\n"
        "           ^^^^^^^^^\n"
        f'  File "{job}", line 2, in helper\n'
        "    return 10 // x\n"
        "           ~~~^^~~\n"
        "ZeroDivisionError: integer division or modulo by zero\n"
    )
    text = describe_failure(error)
    assert text.index("ZeroDivisionError: integer division or modulo by zero — raised by the user function") == 0
    assert "User function traceback (most recent call last):\n" in text
    assert "<dynamic-code>" not in text and "strom/runtime" not in text


def test_at_debug_strom_s_frames_are_shown_too(tmp_path: Path, strom_level: logging.Logger) -> None:
    strom_level.setLevel(logging.DEBUG)
    error = _fail(StreamMap(_shipped(tmp_path)), [0])
    assert "abstract_udf_stream_operator.py" in error.user_traceback
    assert f'File "{tmp_path / "job.py"}", line 2, in helper' in error.user_traceback


def _list_key(v: Any) -> list[Any]:
    return [v]


def test_an_unhashable_key_is_one_line_naming_the_key_selector_and_the_key_type() -> None:
    error = _fail(StreamGroupedReduce(lambda a, b: a, _list_key), ["a"])
    assert str(error) == (
        "InvalidProgramError: a key must be hashable; got a 'list' (['a']); hint: return a tuple instead of a "
        "list, or a str/int from the key selector — raised by the key selector (key_by) of operator "
        "'StreamGroupedReduce' (subtask 1/1, attempt 0) on input record #0 ('a')"
    )
    assert error.user_traceback == ""
    assert describe_failure(error) == str(error)  # no header without frames


def test_a_chain_without_user_frames_gives_no_traceback() -> None:
    def internal() -> None:  # stands for strom's frames: called from the test, which is not strom
        raise ValueError("x")

    try:
        internal()
    except ValueError as exc:
        assert "in internal" in format_user_traceback(exc)  # a user frame
        exc.__traceback__ = None
        assert format_user_traceback(exc) == ""


def test_the_type_of_a_mismatching_value_is_named_once() -> None:
    message = type_mismatch(OverflowError("too big"), 2**70, Types.INT(), "of operator 'Map' (subtask 1/1)")
    assert "got 1180591620717411303424 (int): too big" in message
    message = type_mismatch(TypeError("expected an int; got '1' (str)"), "1", Types.INT(), "of operator 'Map'")
    assert "got '1': expected an int; got '1' (str)" in message
    error = UserFunctionError(message, operator="Map")
    assert describe_failure(error) == message  # no "User function traceback" header


def test_the_client_adds_the_source_lines_a_remote_task_manager_could_not_read(tmp_path: Path) -> None:
    job = tmp_path / "job.py"
    job.write_text(JOB)
    text = f'boom\n  File "{job}", line 2, in helper\nZeroDivisionError: x\n  File "/elsewhere.py", line 1, in f\n'
    assert add_source_lines(text, str(job)) == (
        f'boom\n  File "{job}", line 2, in helper\n    return 10 // x\nZeroDivisionError: x\n'
        '  File "/elsewhere.py", line 1, in f\n'
    )
    with_line = f'  File "{job}", line 2, in helper\n    return 10 // x\n'
    assert add_source_lines(with_line, str(job)) == with_line
