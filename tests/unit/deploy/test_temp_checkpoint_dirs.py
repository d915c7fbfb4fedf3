"""The temporary checkpoint directories of killed clients go, with the uncommitted parts of their FileSinks; those
of live ones and the user's own stay."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from strom.connectors import OnCheckpointRollingPolicy, OutputFileConfig, SimpleStringEncoder
from strom.connectors.file_system import FileWriter
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


def test_the_parts_a_dead_owners_file_sinks_left_go_with_its_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cluster start removes, before an abandoned directory, the uncommitted FileSink parts its jobs left in
    the directories they wrote into (whatever the next job writes, or where)."""
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path / "tmp"))
    checkpoints, lock = create_temporary_checkpoint_dir()
    out = tmp_path / "out"
    writer = FileWriter(
        directory=str(out),
        encoder=SimpleStringEncoder(),
        output_file_config=OutputFileConfig(),
        rolling_policy=OnCheckpointRollingPolicy(),  # "pending" rolls at the checkpoint
        temporary_checkpoint_dir=checkpoints,
    )
    writer.write_batch(["pending"])
    writer.prepare_commit()
    writer.write_batch(["in progress"])
    [part] = writer._parts.values()
    part.stream.close()  # the TaskManager dies with its client: the kernel closes the open part
    (out / "part-committed").write_text("committed\n")
    assert len(os.listdir(out)) == 4  # two parts, the owner marker, the committed part
    assert remove_abandoned_checkpoint_dirs() == []  # its owner lives
    assert len(os.listdir(out)) == 4

    os.close(lock)  # the owner dies
    assert remove_abandoned_checkpoint_dirs() == [checkpoints]
    assert os.listdir(out) == ["part-committed"]
    assert not os.path.exists(checkpoints)
