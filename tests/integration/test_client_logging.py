"""strom writes nothing to a program's stdout but what its print sinks print (issue 30 §1): PyFlink's examples
start with ``logging.basicConfig(stream=sys.stdout, level=logging.INFO)``, and strom's own records follow
``logging.level`` (default WARNING) in the client as they do in the TaskManagers, whatever the root logger's level."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from strom import Configuration, StreamExecutionEnvironment
from strom.config_logging import configure_client_logging

PROGRAM = """
import logging, sys
from strom.datastream import StreamExecutionEnvironment

logging.basicConfig(stream=sys.stdout, level=logging.INFO, format="%(message)s")
env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(1)
env.from_collection([1, 2, 3]).map(lambda x: x * 10).print()
env.execute("logging")
logging.getLogger("the program").info("done")
"""


@pytest.mark.processes
@pytest.mark.timeout(150)
def test_a_program_logging_to_stdout_at_info_sees_only_its_prints_and_its_own_records(tmp_path: Path) -> None:
    (tmp_path / "job.py").write_text(PROGRAM)
    path = os.pathsep.join([str(Path(__file__).parents[2]), os.environ.get("PYTHONPATH", "")])
    run = subprocess.run(
        [sys.executable, "job.py"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env=dict(os.environ, PYTHONPATH=path),
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.splitlines() == ["10", "20", "30", "done"]


@pytest.fixture
def strom_logger() -> Iterator[logging.Logger]:
    """The ``strom`` logger, its level restored afterwards."""
    log = logging.getLogger("strom")
    level = log.level
    log.setLevel(logging.NOTSET)
    try:
        yield log
    finally:
        log.setLevel(level)


def test_an_environment_gives_stroms_logger_the_configured_level_whatever_the_roots(
    strom_logger: logging.Logger,
) -> None:
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.DEBUG)
    try:
        StreamExecutionEnvironment.get_execution_environment()
        assert strom_logger.getEffectiveLevel() == logging.WARNING
        StreamExecutionEnvironment.get_execution_environment(Configuration({"logging.level": "INFO"}))
        assert strom_logger.getEffectiveLevel() == logging.INFO
    finally:
        root.setLevel(level)


def test_a_level_the_program_gave_stroms_logger_stays_unless_logging_level_is_set(
    strom_logger: logging.Logger,
) -> None:
    strom_logger.setLevel(logging.DEBUG)
    configure_client_logging(Configuration())
    assert strom_logger.level == logging.DEBUG
    configure_client_logging(Configuration({"logging.level": "ERROR"}))
    assert strom_logger.level == logging.ERROR
