"""``PythonEnvironmentManager``: a TaskManager's side of the job's Python dependencies (Flink's
``ProcessPythonEnvironmentManager``).

Before a task of a job with a :class:`~strom.runtime.python_dependency_info.PythonDependencyInfo` loads its operators
(on its own thread, while DEPLOYING — a ``pip install`` holds back no other job's tasks nor the TaskManager's loop),
the job's environment is made once per TaskManager process:

- ``python.files``: extracted into a directory named by their content hash (importable archives kept as files);
- ``python.requirements``: ``pip install --target`` into a directory named by the content hash of the requirements
  file, the packages to install from (``--no-index --find-links``, PyFlink's ``requirements_cache_dir``) and the
  Python version — installed once per machine and reused by every later job and TaskManager that needs the same;
- ``python.archives``: extracted into the job's working directory under their target directories.

Those directories (files and requirements first, then the working directory) go on ``sys.path`` of the process until
the job is released. Everything lives below ``<temp dir>/strom-python-<uid>`` (this user's alone, mode 0700); a
directory is made under a temporary name and renamed into place, so TaskManagers of one machine that prepare the
same environment at once use one of them. Python has no per-job class loader: a module a task imported stays
imported in that process.
"""

from __future__ import annotations

import hashlib
import io
import logging
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import threading
import uuid
import zipfile

from strom.exceptions import ClusterError
from strom.runtime.python_dependency_info import PythonDependencyInfo, ShippedArchive
from strom.runtime.python_files import extract_python_files

__all__ = ["PythonEnvironmentManager", "default_root"]

log = logging.getLogger(__name__)

_PIP_TIMEOUT = 1800.0  # seconds an installation may take
_TAR_SUFFIXES = (".tar", ".tar.gz", ".tgz")


def default_root() -> str:
    uid = os.getuid() if hasattr(os, "getuid") else 0
    return os.path.join(tempfile.gettempdir(), f"strom-python-{uid}")


class PythonEnvironmentManager:
    """One per TaskManager (see the module documentation)."""

    def __init__(self, owner: str, root: str | None = None) -> None:
        self._owner = owner
        self._root = root or default_root()
        self._lock = threading.Lock()
        self._job_locks: dict[str, threading.Lock] = {}
        #: job id -> (its sys.path entries, its working directory)
        self._jobs: dict[str, tuple[list[str], str]] = {}

    def prepare(self, job_id: str, info: PythonDependencyInfo) -> None:
        """Make job ``job_id``'s environment (unless this process did) and put it on ``sys.path``; blocking."""
        with self._lock:
            job_lock = self._job_locks.setdefault(job_id, threading.Lock())
        with job_lock:
            if job_id in self._jobs:
                return
            _ensure_private_directory(self._root)
            entries = [self._files_entry(f.name, f.data, f.as_path_entry) for f in info.files]
            if info.requirements:
                entries.append(self._requirements(job_id, info))
            working_dir = ""
            if info.archives:
                working_dir = os.path.join(self._root, "jobs", f"{self._owner}-{job_id}")
                shutil.rmtree(working_dir, ignore_errors=True)
                for archive in info.archives:
                    _extract_archive(archive, working_dir)
            with self._lock:
                for entry in reversed(entries):
                    if entry not in sys.path:
                        sys.path.insert(0, entry)
                if working_dir and working_dir not in sys.path:
                    sys.path.append(working_dir)
                self._jobs[job_id] = ([*entries, working_dir] if working_dir else entries, working_dir)
            log.info("job %s: its Python dependencies are on sys.path: %s", job_id, ", ".join(self._jobs[job_id][0]))

    def release(self, job_id: str) -> None:
        """The job left this TaskManager: its entries leave ``sys.path`` (unless another job's use them too), its
        working directory is removed; installed requirements stay for later jobs."""
        with self._lock:
            self._job_locks.pop(job_id, None)
            released = self._jobs.pop(job_id, None)
            if released is None:
                return
            entries, working_dir = released
            still_used = {e for paths, _ in self._jobs.values() for e in paths}
            for entry in entries:
                if entry not in still_used and entry in sys.path:
                    sys.path.remove(entry)
        if working_dir:
            shutil.rmtree(working_dir, ignore_errors=True)

    def close(self) -> None:
        with self._lock:
            jobs = list(self._jobs)
        for job_id in jobs:
            self.release(job_id)

    # -- the parts ---------------------------------------------------------------------------------------------
    def _files_entry(self, name: str, data: bytes, as_path_entry: bool) -> str:
        digest = hashlib.sha256(data).hexdigest()[:20]
        final = os.path.join(self._root, "files", f"{digest}-{name}")
        if not os.path.exists(final):
            staging = self._staging(final)
            if as_path_entry:
                os.makedirs(staging)
                with open(os.path.join(staging, name), "wb") as f:
                    f.write(data)
            else:
                extract_python_files(data, staging)
            _move_into_place(staging, final)
        return os.path.join(final, name) if as_path_entry else final

    def _requirements(self, job_id: str, info: PythonDependencyInfo) -> str:
        final = os.path.join(self._root, "requirements", info.requirements_digest())
        if os.path.isdir(final):
            return final
        staging = self._staging(final)
        work = staging + ".work"
        os.makedirs(work)
        try:
            requirements = os.path.join(work, "requirements.txt")
            with open(requirements, "wb") as f:
                f.write(info.requirements)
            cmd = [sys.executable, "-m", "pip", "install", "--target", staging, "-r", requirements]
            cmd += ["--disable-pip-version-check", "--no-input", "--no-warn-script-location", "--quiet"]
            if info.requirements_cache:
                cache = os.path.join(work, "cache")
                extract_python_files(info.requirements_cache, cache)
                cmd += ["--no-index", "--find-links", cache]
            log.info("job %s: installing its Python requirements into %s", job_id, final)
            _pip(cmd, job_id, self._owner)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        finally:
            shutil.rmtree(work, ignore_errors=True)
        _move_into_place(staging, final)
        return final

    def _staging(self, final: str) -> str:
        parent = os.path.dirname(final)
        os.makedirs(parent, exist_ok=True)
        return os.path.join(parent, f".{os.path.basename(final)}.{os.getpid()}-{uuid.uuid4().hex[:8]}")


def _ensure_private_directory(root: str) -> None:
    """``root`` exists, is this user's and no one else's: what is installed there is imported by the tasks."""
    os.makedirs(root, mode=0o700, exist_ok=True)
    info = os.stat(root)
    owner_ok = not hasattr(os, "getuid") or info.st_uid == os.getuid()
    if not owner_ok or info.st_mode & 0o022:
        raise ClusterError(
            f"expected the TaskManagers' Python environments in a directory of this user that others cannot write; "
            f"got {root} (owner uid {info.st_uid}, mode {oct(info.st_mode & 0o777)}); hint: remove it, or give the "
            "TaskManagers another TMPDIR"
        )


def _pip(cmd: list[str], job_id: str, owner: str) -> None:
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=_PIP_TIMEOUT, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ClusterError(
            f"expected the Python requirements of job {job_id} to install on {owner}; got {type(exc).__name__}: "
            f"{exc}; hint: pip must run with {sys.executable}"
        ) from None
    if proc.returncode != 0:
        lines = [ln for ln in (proc.stderr or proc.stdout).splitlines() if ln.strip()][-8:]
        raise ClusterError(
            f"expected the Python requirements of job {job_id} to install on {owner} (python.requirements); got pip "
            f"exit status {proc.returncode}: " + " | ".join(ln.strip() for ln in lines) + "; hint: the TaskManagers "
            "install with their own Python and network; without an index, pass the packages as "
            "set_python_requirements(file, requirements_cache_dir) (pip download -d DIR -r file)"
        )


def _move_into_place(staging: str, final: str) -> None:
    """Rename ``staging`` to ``final``; another process that got there first wins, and ours goes."""
    try:
        os.rename(staging, final)
    except OSError:
        if not os.path.exists(final):
            raise
        shutil.rmtree(staging, ignore_errors=True)


def _extract_archive(archive: ShippedArchive, working_dir: str) -> None:
    target = os.path.join(working_dir, archive.target_dir)
    os.makedirs(target, exist_ok=True)
    if archive.name.endswith(_TAR_SUFFIXES):
        with tarfile.open(fileobj=io.BytesIO(archive.data)) as tar:
            tar.extractall(target, filter="data")  # refuses absolute paths, '..' and links out of the target
    elif zipfile.is_zipfile(io.BytesIO(archive.data)):
        extract_python_files(archive.data, target)
    else:
        raise ClusterError(
            f"expected python.archives entry '{archive.name}' to be a zip or tar archive; got neither; hint: "
            ".zip, .whl, .egg, .jar, .tar, .tar.gz or .tgz"
        )
