"""A ``strom`` command whose reader goes away (``strom cluster token | head -c0``) ends quietly with the shell's
SIGPIPE status instead of a ``BrokenPipeError`` traceback (issue 31 §1)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from strom.deploy.standalone.cluster_dir import ClusterDirectory


@pytest.mark.timeout(60)
def test_a_reader_that_went_away_gets_no_traceback(tmp_path: Path) -> None:
    ClusterDirectory(tmp_path).load_or_create_secret()
    read, write = os.pipe()
    os.close(read)  # the reader is gone before strom writes
    try:
        run = subprocess.run(
            [sys.executable, "-m", "strom.cli", "cluster", "token", "--cluster-dir", str(tmp_path)],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            timeout=50,
            env=dict(os.environ, PYTHONPATH=os.pathsep.join([str(Path(__file__).parents[3]), *sys.path])),
        )
    finally:
        os.close(write)
    assert run.returncode == 141, run.stderr
    assert "Traceback" not in run.stderr and "BrokenPipeError" not in run.stderr, run.stderr
