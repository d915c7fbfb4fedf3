"""``PythonDependencyInfo``: the job's Python files, requirements and archives, packed in the client (Flink's
``PythonDependencyInfo`` with ``PythonDependencyUtils``).

``python.files``, ``python.requirements`` and ``python.archives`` (set by ``add_python_file``,
``set_python_requirements`` and ``add_python_archive``, as in PyFlink) name paths of the client's machine. When the job
graph is made, their contents are read into one :class:`PythonDependencyInfo`, which travels in ``JobGraph.config``
(so in every deployment descriptor, as a job's modules do: :mod:`strom.runtime.python_files`) to TaskManagers on any
machine — the MiniCluster's, a standalone cluster's, Spark executors — where
:class:`~strom.runtime.python_environment_manager.PythonEnvironmentManager` installs or unpacks them. They travel
with every task: keep archives small (data a job reads belongs in its sources).
"""

from __future__ import annotations

import hashlib
import io
import os
import sys
import zipfile
from dataclasses import dataclass

from strom.config import Configuration, PythonOptions
from strom.exceptions import InvalidProgramError

__all__ = ["PYTHON_DEPENDENCIES_KEY", "PythonDependencyInfo", "ShippedArchive", "ShippedFile"]

#: the key of ``JobGraph.config`` holding the job's :class:`PythonDependencyInfo`
PYTHON_DEPENDENCIES_KEY = "python_dependencies"

#: files put on ``sys.path`` as they are (zipimport), not extracted
_IMPORTABLE_ARCHIVES = (".zip", ".whl", ".egg")


@dataclass(frozen=True, slots=True, kw_only=True)
class ShippedFile:
    """One ``python.files`` entry: a zip to extract into a directory on ``sys.path``, or (``as_path_entry``) an
    importable archive whose own path goes on ``sys.path``."""

    name: str
    data: bytes
    as_path_entry: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class ShippedArchive:
    """One ``python.archives`` entry, extracted under the job's working directory into ``target_dir``."""

    name: str
    data: bytes
    target_dir: str


@dataclass(frozen=True, slots=True, kw_only=True)
class PythonDependencyInfo:
    files: tuple[ShippedFile, ...] = ()
    #: the requirements file's bytes (``b""``: none)
    requirements: bytes = b""
    #: PyFlink's ``requirements_cache_dir`` as a zip (``b""``: install from the package index)
    requirements_cache: bytes = b""
    archives: tuple[ShippedArchive, ...] = ()

    @staticmethod
    def from_configuration(config: Configuration) -> PythonDependencyInfo | None:
        """The contents of the paths ``config`` names (``None`` when it names none)."""
        files = tuple(_shipped_file(p) for p in _entries(config.get(PythonOptions.PYTHON_FILES)))
        requirements, cache = b"", b""
        spec = config.get(PythonOptions.PYTHON_REQUIREMENTS).strip()
        if spec:
            path, _, cache_dir = spec.partition("#")
            requirements = _read(path, PythonOptions.PYTHON_REQUIREMENTS.key)
            if cache_dir:
                cache = _zip_directory(_existing(cache_dir, PythonOptions.PYTHON_REQUIREMENTS.key), "")
        archives = tuple(_shipped_archive(e) for e in _entries(config.get(PythonOptions.PYTHON_ARCHIVES)))
        if not (files or requirements or archives):
            return None
        return PythonDependencyInfo(files=files, requirements=requirements, requirements_cache=cache, archives=archives)

    def requirements_digest(self) -> str:
        """What identifies an installed environment: the requirements, the packages to install from, the Python."""
        h = hashlib.sha256()
        for part in (self.requirements, self.requirements_cache, sys.implementation.cache_tag.encode()):
            h.update(len(part).to_bytes(8, "big"))
            h.update(part)
        h.update(sys.platform.encode())
        return h.hexdigest()[:20]


def _entries(value: str) -> list[str]:
    return [e.strip() for e in value.split(",") if e.strip()]


def _existing(path: str, key: str) -> str:
    full = os.path.abspath(os.path.expanduser(path))
    if not os.path.exists(full):
        raise InvalidProgramError(
            f"{key} expects existing paths; got '{path}' (not found); hint: a path relative to {os.getcwd()} or an "
            "absolute one"
        )
    return full


def _read(path: str, key: str) -> bytes:
    with open(_existing(path, key), "rb") as f:
        return f.read()


def _shipped_file(path: str) -> ShippedFile:
    full = _existing(path, PythonOptions.PYTHON_FILES.key)
    name = os.path.basename(full.rstrip(os.sep))
    if os.path.isdir(full):
        package = os.path.exists(os.path.join(full, "__init__.py"))
        return ShippedFile(name=name, data=_zip_directory(full, name if package else ""))
    if full.endswith(_IMPORTABLE_ARCHIVES):
        return ShippedFile(name=name, data=_read(full, PythonOptions.PYTHON_FILES.key), as_path_entry=True)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        z.write(full, name)
    return ShippedFile(name=name, data=buffer.getvalue())


def _shipped_archive(entry: str) -> ShippedArchive:
    path, _, target = entry.partition("#")
    full = _existing(path, PythonOptions.PYTHON_ARCHIVES.key)
    name = os.path.basename(full)
    target = target.strip() or name
    parts = target.replace("\\", "/").split("/")
    if os.path.isabs(target) or ".." in parts:
        raise InvalidProgramError(
            f"{PythonOptions.PYTHON_ARCHIVES.key} expects a target directory inside the job's working directory; got "
            f"'{target}'; hint: a relative name such as 'data'"
        )
    return ShippedArchive(name=name, data=_read(full, PythonOptions.PYTHON_ARCHIVES.key), target_dir=target)


def _zip_directory(directory: str, prefix: str) -> bytes:
    """The files below ``directory`` as a zip, their paths under ``prefix`` (caches of compiled files left out)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        for root, dirs, names in os.walk(directory):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for n in sorted(names):
                full = os.path.join(root, n)
                z.write(full, os.path.join(prefix, os.path.relpath(full, directory)))
    return buffer.getvalue()
