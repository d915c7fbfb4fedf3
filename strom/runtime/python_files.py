"""A submitted job's Python files: the modules its pickles name, shipped as a zip and put on ``sys.path``.

cloudpickle pickles what a program defines in ``__main__`` by value, but a function or class imported from a
module next to the program (``from helpers import parse``) by reference, by its module's name. A job submitted to
a standalone cluster (``POST /jobs``) therefore carries those modules as a zip; the JobManager and every
TaskManager that runs one of its tasks extract it once into a directory of their own and append that directory to
``sys.path`` before they unpickle anything of the job.

Python has no per-job class loader: a module name is imported once per process. Two jobs on one cluster that ship
*different* modules of the same name see whichever was imported first in that process; give such modules distinct
names (or a package per job).
"""

from __future__ import annotations

import hashlib
import io
import logging
import os
import shutil
import sys
import tempfile
import threading
import zipfile

from strom.exceptions import ConfigurationError

__all__ = ["PYTHON_FILES_KEY", "PythonFilesCache", "extract_python_files"]

log = logging.getLogger(__name__)

#: the key of ``JobGraph.config`` (shipped in every deployment descriptor) holding the zip's bytes
PYTHON_FILES_KEY = "python_files"

#: the largest uncompressed size a job's files may have (a guard against zip bombs)
MAX_UNCOMPRESSED_BYTES = 512 * 1024 * 1024


def extract_python_files(data: bytes, target: str) -> None:
    """Extract the zip ``data`` into ``target``; refuses absolute paths, ``..`` and oversized contents."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile as exc:
        raise ConfigurationError(f"expected the job's Python files as a zip; got {exc}") from None
    with archive:
        total = 0
        for info in archive.infolist():
            name = info.filename
            parts = name.replace("\\", "/").split("/")
            if name.startswith(("/", "\\")) or ".." in parts or ":" in parts[0]:
                raise ConfigurationError(
                    f"expected relative paths in the job's Python files; got {name!r}; hint: strom run ships the "
                    "modules next to the program"
                )
            total += info.file_size
        if total > MAX_UNCOMPRESSED_BYTES:
            raise ConfigurationError(
                f"expected at most {MAX_UNCOMPRESSED_BYTES} bytes of Python files; got {total} uncompressed"
            )
        archive.extractall(target)


class PythonFilesCache:
    """Per process: each job's files extracted once under one temporary directory, removed by :meth:`close`."""

    def __init__(self, owner: str) -> None:
        self._owner = owner
        self._root = ""
        self._installed: dict[str, str] = {}  # digest -> directory
        self._lock = threading.Lock()

    def install(self, job_id: str, data: bytes) -> str:
        """Extract ``data`` (unless this process did already) and append its directory to ``sys.path``."""
        digest = hashlib.sha256(data).hexdigest()[:16]
        with self._lock:
            directory = self._installed.get(digest)
            if directory is None:
                if not self._root:
                    self._root = tempfile.mkdtemp(prefix=f"strom-{self._owner}-python-")
                directory = os.path.join(self._root, f"{job_id}-{digest}")
                extract_python_files(data, directory)
                self._installed[digest] = directory
                log.info("job %s: its Python files are in %s", job_id, directory)
            if directory not in sys.path:
                sys.path.append(directory)
        return directory

    def close(self) -> None:
        with self._lock:
            for directory in self._installed.values():
                if directory in sys.path:
                    sys.path.remove(directory)
            self._installed.clear()
            root, self._root = self._root, ""
        if root:
            shutil.rmtree(root, ignore_errors=True)
