"""A TaskManager's side of the job's Python dependencies without pip or a cluster: files and archives land on
``sys.path`` and leave it with the job, requirements install once per content hash (pip replaced by a recorder),
and what the client packs from ``python.*`` is what the TaskManager unpacks."""

from __future__ import annotations

import io
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path
from typing import Any

import pytest

from strom import Configuration
from strom.exceptions import ClusterError, InvalidProgramError
from strom.runtime import python_environment_manager as pem
from strom.runtime.python_dependency_info import PythonDependencyInfo, ShippedArchive
from strom.runtime.python_environment_manager import PythonEnvironmentManager


@pytest.fixture(autouse=True)
def _restore_sys_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "path", list(sys.path))


def packed(tmp_path: Path, **keys: str) -> PythonDependencyInfo:
    info = PythonDependencyInfo.from_configuration(Configuration(keys))
    assert info is not None
    return info


def test_files_and_archives_go_on_sys_path_for_the_job_and_leave_with_it(tmp_path: Path) -> None:
    (tmp_path / "mod_a.py").write_text("A = 1\n")
    pkg = tmp_path / "pkg_b"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("B = 2\n")
    archive = tmp_path / "data.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        data = b"hello\n"
        entry = tarfile.TarInfo("greeting.txt")
        entry.size = len(data)
        tar.addfile(entry, io.BytesIO(data))
    info = packed(
        tmp_path,
        **{"python.files": f"{tmp_path / 'mod_a.py'},{pkg}", "python.archives": f"{archive}#jobdata"},
    )
    assert PythonDependencyInfo.from_configuration(Configuration()) is None
    manager = PythonEnvironmentManager("tm-1", root=str(tmp_path / "root"))
    manager.prepare("job1", info)
    added = [p for p in sys.path if p.startswith(str(tmp_path / "root"))]
    assert len(added) == 3
    assert (Path(added[0]) / "mod_a.py").read_text() == "A = 1\n"
    assert (Path(added[1]) / "pkg_b" / "__init__.py").read_text() == "B = 2\n"
    working_dir = Path(added[2])
    assert (working_dir / "jobdata" / "greeting.txt").read_text() == "hello\n"
    manager.prepare("job1", info)  # a second task of the job: nothing again
    assert [p for p in sys.path if p.startswith(str(tmp_path / "root"))] == added
    manager.release("job1")
    assert [p for p in sys.path if p.startswith(str(tmp_path / "root"))] == []
    assert not working_dir.exists()


def test_requirements_install_once_per_content_hash_across_task_managers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[list[str]] = []

    def fake_pip(cmd: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        calls.append(cmd)
        target = Path(cmd[cmd.index("--target") + 1])
        target.mkdir(parents=True, exist_ok=True)
        (target / "installed.txt").write_text("yes")
        return subprocess.CompletedProcess(cmd, 0, "", "")

    monkeypatch.setattr(pem.subprocess, "run", fake_pip)
    (tmp_path / "wheels").mkdir()
    (tmp_path / "wheels" / "p-1.0-py3-none-any.whl").write_bytes(b"w")
    (tmp_path / "requirements.txt").write_text("p==1.0\n")
    info = packed(tmp_path, **{"python.requirements": f"{tmp_path / 'requirements.txt'}#{tmp_path / 'wheels'}"})
    root = str(tmp_path / "root")
    PythonEnvironmentManager("tm-1", root=root).prepare("job1", info)
    PythonEnvironmentManager("tm-2", root=root).prepare("job2", info)  # same machine, same requirements: reused
    assert len(calls) == 1
    cmd = calls[0]
    assert cmd[:4] == [sys.executable, "-m", "pip", "install"] and "--no-index" in cmd and "--find-links" in cmd
    (tmp_path / "requirements.txt").write_text("p==1.0\nq\n")
    other = packed(tmp_path, **{"python.requirements": str(tmp_path / "requirements.txt")})
    PythonEnvironmentManager("tm-1", root=root).prepare("job3", other)
    assert len(calls) == 2 and "--no-index" not in calls[1]


def test_a_failing_installation_names_the_job_pip_s_error_and_the_hint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def failing_pip(cmd: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        return subprocess.CompletedProcess(cmd, 1, "", "ERROR: No matching distribution found for nothere\n")

    monkeypatch.setattr(pem.subprocess, "run", failing_pip)
    (tmp_path / "requirements.txt").write_text("nothere\n")
    info = packed(tmp_path, **{"python.requirements": str(tmp_path / "requirements.txt")})
    manager = PythonEnvironmentManager("tm-1", root=str(tmp_path / "root"))
    with pytest.raises(ClusterError, match=r"job j1 to install on tm-1 .*No matching distribution.*hint: "):
        manager.prepare("j1", info)
    assert list((tmp_path / "root" / "requirements").iterdir()) == []  # nothing half-installed is reused


def test_archives_that_escape_or_are_no_archives_are_refused(tmp_path: Path) -> None:
    manager = PythonEnvironmentManager("tm-1", root=str(tmp_path / "root"))
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        entry = tarfile.TarInfo("../escaped.txt")
        tar.addfile(entry, io.BytesIO(b""))
    escaping = ShippedArchive(name="bad.tar", data=buffer.getvalue(), target_dir="x")
    with pytest.raises(tarfile.OutsideDestinationError):
        manager.prepare("j1", PythonDependencyInfo(archives=(escaping,)))
    with pytest.raises(ClusterError, match="a zip or tar archive; got neither"):
        manager.prepare(
            "j2", PythonDependencyInfo(archives=(ShippedArchive(name="a.zip", data=b"no", target_dir="y"),))
        )
    zipped = io.BytesIO()
    with zipfile.ZipFile(zipped, "w") as z:
        z.writestr("ok.txt", "ok")
    (tmp_path / "ok.zip").write_bytes(zipped.getvalue())
    with pytest.raises(
        InvalidProgramError, match=r"target directory inside the job's working directory; got '\.\./up'"
    ):
        packed(tmp_path, **{"python.archives": f"{tmp_path / 'ok.zip'}#../up"})
    with pytest.raises(InvalidProgramError, match=r"python\.files expects existing paths; got '/no/such\.py'"):
        packed(tmp_path, **{"python.files": "/no/such.py"})


def test_an_environment_directory_others_can_write_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "shared"
    root.mkdir()
    root.chmod(0o777)
    (tmp_path / "m.py").write_text("")
    info = packed(tmp_path, **{"python.files": str(tmp_path / "m.py")})
    with pytest.raises(ClusterError, match=r"a directory of this user that others cannot write; got .*shared .*0o777"):
        PythonEnvironmentManager("tm-1", root=str(root)).prepare("j1", info)
