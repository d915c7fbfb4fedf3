"""``strom run`` as a user sees it: what reaches the terminal (logs, Ctrl-C), and what is left behind."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

LOGGING_JOB = textwrap.dedent(
    """
    import logging
    from strom import StreamExecutionEnvironment

    def enrich(x):
        logging.getLogger("myjob.enrich").info("enriching %s", x)
        return x

    env = StreamExecutionEnvironment.get_execution_environment()
    env.from_collection([1, 2]).map(enrich).add_sink(lambda v: None)
    env.execute("user logs")
    """
)


def _strom_run(tmp_path: Path, job: str, *options: str) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "job.py"
    script.write_text(job)
    return subprocess.run(
        [sys.executable, "-m", "strom.cli", "run", *options, str(script)],
        capture_output=True,
        text=True,
        timeout=90,
        env=dict(os.environ),
    )


@pytest.mark.timeout(120)
def test_user_info_logs_reach_the_client_at_the_configured_level(tmp_path: Path) -> None:
    quiet = _strom_run(tmp_path, LOGGING_JOB)
    assert quiet.returncode == 0, quiet.stderr
    assert "enriching" not in quiet.stderr  # WARNING by default

    info = _strom_run(tmp_path, LOGGING_JOB, "-D", "logging.level=INFO")
    assert info.returncode == 0, info.stderr
    assert "myjob.enrich: enriching 1" in info.stderr
    assert "myjob.enrich: enriching 2" in info.stderr


BAD_TIMESTAMPS_JOB = textwrap.dedent(
    """
    from strom import StreamExecutionEnvironment, WatermarkStrategy

    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)  # one subtask: the first bad record is the first element
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda e, ts: str(e))
    env.from_collection([1, 2, 3]).assign_timestamps_and_watermarks(strategy).add_sink(lambda v: None)
    env.execute("bad timestamps")
    """
)


@pytest.mark.timeout(120)
def test_a_failed_job_prints_stroms_message_and_no_traceback(tmp_path: Path) -> None:
    """A failure that is no user function's: `strom run` prints strom's message (which operator, which record,
    the hint) and exits 1; tracebacks of strom's own frames appear only at logging.level DEBUG."""
    run = _strom_run(tmp_path, BAD_TIMESTAMPS_JOB)
    assert run.returncode == 1, run.stderr
    first = run.stderr.splitlines()[0]
    assert first.startswith("strom run: job 'bad timestamps' (") and "failed" in first, run.stderr
    assert "timestamp assigner of operator 'Timestamps/Watermarks'" in run.stderr
    assert "got '1' (str)" in run.stderr and "hint:" in run.stderr
    assert "Traceback" not in run.stderr and "task.py" not in run.stderr, run.stderr

    debug = _strom_run(tmp_path, BAD_TIMESTAMPS_JOB, "-D", "logging.level=DEBUG")
    assert debug.returncode == 1
    assert "strom run: job 'bad timestamps'" in debug.stderr
    assert "Traceback" in debug.stderr  # the TaskManager's log and the client's, at DEBUG


TINY_JOB = textwrap.dedent(
    """
    from strom.datastream import StreamExecutionEnvironment

    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    env.from_collection(list(range(10))).map(lambda x: x * 2).print()
    env.execute("tiny")
    """
)


@pytest.mark.timeout(120)
def test_startup_split_says_where_a_jobs_time_went(tmp_path: Path) -> None:
    """`strom run --startup-split` prints each job's phases on stderr (issue 33); without the flag, and at the
    default logging level, nothing of it."""
    run = _strom_run(tmp_path, TINY_JOB, "--startup-split")
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == [str(2 * x) for x in range(10)]
    lines = [line for line in run.stderr.splitlines() if "start-up split" in line]
    assert len(lines) == 1, run.stderr
    line = lines[0]
    assert line.startswith("strom run: start-up split of job 'tiny' ("), line
    for phase in ("interpreter and strom's imports", "program", "cluster", "deploy", "run", "shutdown", "total"):
        assert f"{phase} " in line, line

    quiet = _strom_run(tmp_path, TINY_JOB)
    assert quiet.returncode == 0, quiet.stderr
    assert "start-up split" not in quiet.stderr
