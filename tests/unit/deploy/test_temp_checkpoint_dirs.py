"""The temporary checkpoint directories of killed clients go; those of live ones and the user's own stay."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from strom.deploy.active_cluster import remove_abandoned_checkpoint_dirs
from strom.runtime.checkpoint.temporary_dir import create_temporary_checkpoint_dir

pytestmark = pytest.mark.timeout(60)


def _dir_of_a_killed_process(tmp: Path) -> Path:
    code = (
        "import os, sys, tempfile; tempfile.tempdir = sys.argv[1]\n"
        "from strom.runtime.checkpoint.temporary_dir import create_temporary_checkpoint_dir\n"
        "path, _ = create_temporary_checkpoint_dir(); print(path, flush=True); os.kill(os.getpid(), 9)"
    )
    proc = subprocess.run([sys.executable, "-c", code, str(tmp)], capture_output=True, text=True, timeout=30)
    assert proc.returncode == -9, proc.stderr
    return Path(proc.stdout.strip())


def test_only_the_directories_of_dead_owners_are_removed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    dead = _dir_of_a_killed_process(tmp_path)
    live, lock = create_temporary_checkpoint_dir()  # ours, locked: a running cluster's
    users = tmp_path / "strom-checkpoints-mine"  # no pid in the name: not strom's temporary one
    users.mkdir()
    unlocked_live = tmp_path / f"strom-checkpoints-{os.getppid()}-abc"  # created, not yet locked, owner running
    unlocked_live.mkdir()
    try:
        assert dead.is_dir()
        assert remove_abandoned_checkpoint_dirs() == [str(dead)]
        assert not dead.exists()
        assert Path(live).is_dir() and users.is_dir() and unlocked_live.is_dir()
    finally:
        os.close(lock)
    assert remove_abandoned_checkpoint_dirs() == [live]  # its owner (the lock's holder) let go
