"""The job's Python files, packed in the client for a submission (unpacked by :mod:`strom.runtime.python_files`).

What is shipped: every module the client has imported whose file lies under the program's directory (the
directory of ``__main__``'s file; ``strom run job.py`` makes it ``job.py``'s) — so ``from helpers import parse`` in
``job.py`` ships ``helpers.py``, and ``import mypkg.util`` ships ``mypkg/__init__.py`` and ``mypkg/util.py`` — at
their paths relative to that directory. Not shipped: strom itself, anything under a hidden directory or a
``site-packages`` (a virtual environment inside the project), data files, and modules imported only inside functions
that the client never ran (import them at the top of the program, or install them where the cluster runs).
"""

from __future__ import annotations

import io
import sys
import zipfile
from pathlib import Path

__all__ = ["describe", "modules_under", "pack_python_files", "program_directory"]


def program_directory() -> Path | None:
    """The directory of the running program (``__main__``'s file), if it has one."""
    main = sys.modules.get("__main__")
    file = getattr(main, "__file__", None)
    if not isinstance(file, str) or not file:
        return None
    return Path(file).resolve().parent


def _excluded(relative: Path) -> bool:
    parts = relative.parts
    return (
        not parts
        or parts[0] == "strom"
        or any(p.startswith(".") or p in ("site-packages", "dist-packages", "__pycache__") for p in parts[:-1])
    )


def modules_under(root: Path) -> dict[str, Path]:
    """Relative path (POSIX) -> file of every imported module whose ``.py`` file lies under ``root``."""
    found: dict[str, Path] = {}
    for module in list(sys.modules.values()):
        file = getattr(module, "__file__", None)
        if not isinstance(file, str) or not file.endswith(".py"):
            continue
        path = Path(file).resolve()
        try:
            relative = path.relative_to(root)
        except ValueError:
            continue
        if not _excluded(relative) and path.is_file():
            found[relative.as_posix()] = path
    return found


def pack_python_files(root: Path | None) -> bytes:
    """A zip of :func:`modules_under` ``root``; ``b""`` when there is nothing to ship."""
    if root is None:
        return b""
    files = modules_under(root)
    if not files:
        return b""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name in sorted(files):
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))  # same files, same bytes
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, files[name].read_bytes())
    return buffer.getvalue()


def describe(data: bytes) -> str:
    """``"3 files, 12 kB"`` for a log line."""
    if not data:
        return "no files"
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        count = len(archive.infolist())
    return f"{count} file{'s' if count != 1 else ''}, {len(data) / 1024:.0f} kB"
