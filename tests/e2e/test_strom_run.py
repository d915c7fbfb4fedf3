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
