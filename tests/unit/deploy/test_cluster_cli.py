"""``strom cluster`` (issue 31 §1): a command whose reader goes away (``strom cluster token | head -c0``) ends
quietly with the shell's SIGPIPE status instead of a ``BrokenPipeError`` traceback; the cluster directory keeps
the ``-D`` options the cluster started with, for the TaskManagers ``add-taskmanager`` starts later."""

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


def test_the_cluster_directory_keeps_the_options_the_cluster_started_with(tmp_path: Path) -> None:
    directory = ClusterDirectory(tmp_path).ensure()
    assert directory.read_defines() == []
    directory.write_defines(["-Dtaskmanager.numberOfTaskSlots=2", "-Dsecurity.ssl.rest.keystore-password=x"])
    assert directory.read_defines() == ["-Dtaskmanager.numberOfTaskSlots=2", "-Dsecurity.ssl.rest.keystore-password=x"]
    assert directory.defines_file.stat().st_mode & 0o077 == 0  # it may hold passwords
