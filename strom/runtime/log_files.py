"""``LogFiles``: a cluster process's own log files, and reading them for the REST API.

Flink's JobManager and TaskManagers log through log4j into ``log.file`` — ``<env.log.dir>/flink-<user>-<kind>-<n>-
<host>.log``, rolled at 100 MB, ``env.log.max`` old files kept — and their standard output is redirected to the
``.out`` file beside it. The REST API serves them: the JobManager's own (``/jobmanager/logs``, ``/log``,
``/logs/:filename``, ``/stdout``) from its disk, a TaskManager's (``/taskmanagers/:id/...``) through an RPC to the
TaskManager, whose files stay on its machine.

Here the same, one mechanism for both kinds of process: every record that passes the root logger's level
(``logging.level``: strom's own and the user functions' ``logging.getLogger(...)`` records, from any thread) also
goes to ``<stem>.log`` in the log directory (``jobmanager.log``, ``taskmanager-<tm id>.log``), rotated at
:data:`MAX_LOG_BYTES` with ``env.log.max`` old files (``.1`` … ``.n``). Files are read in bounded chunks
(:meth:`LogFiles.read_chunk`), and only by a name of the process's own listing — never a path: a name with a
separator, ``..``, a hidden name or a symbolic link out of the directory is refused; another process's files in the
same directory are not listed. ``stdout`` is the regular file the process's standard output is redirected to, if any
(``strom cluster``'s processes; a MiniCluster's share the client's terminal and have none, as Flink's in containers).
"""

from __future__ import annotations

import logging
import logging.handlers
import os
import stat
import sys
from dataclasses import dataclass
from pathlib import Path

__all__ = ["LOG", "MAX_CHUNK_BYTES", "MAX_LOG_BYTES", "STDOUT", "LogFiles", "LogInfo", "stdout_file"]

#: Flink's log4j ``appender.main.policies.size.size`` (100 MB): the main log is rolled over at this size
MAX_LOG_BYTES = 100 * 1024 * 1024
#: the largest piece of a file one read (and one RPC) carries; the REST handler streams a file in such chunks
MAX_CHUNK_BYTES = 1024 * 1024

LOG_FORMAT = "%(asctime)s %(levelname)-5s %(name)s [%(threadName)s] - %(message)s"

#: Flink's ``FileType``
LOG = "LOG"
STDOUT = "STDOUT"


@dataclass(frozen=True, slots=True, kw_only=True)
class LogInfo:
    """One file of the log directory (Flink's ``LogInfo``: name, size in bytes, modification time in ms)."""

    name: str
    size: int
    mtime: int


class LogFiles:
    """The log files ``<stem>.log*`` of one process in ``log_dir``; :meth:`install` starts writing the main one.

    ``owner`` names the process in error messages (Flink's: ``the TaskExecutor tm-1``, ``JobManager``) and
    ``listing`` the REST path that lists its files (the hint of a refused name)."""

    def __init__(
        self, log_dir: str | os.PathLike[str], stem: str, *, owner: str, listing: str, max_files: int = 10
    ) -> None:
        self.directory = Path(log_dir).absolute()
        self.stem = stem
        self.owner = owner
        self.listing = listing
        self.max_files = max(0, max_files)
        self.main_log = self.directory / f"{stem}.log"
        self._handler: logging.Handler | None = None

    # -- writing -------------------------------------------------------------------------------------
    def install(self) -> None:
        """Create the directory (mode 0700) and add the main log's handler to the root logger."""
        if self._handler is not None:
            return
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        handler = logging.handlers.RotatingFileHandler(
            self.main_log, maxBytes=MAX_LOG_BYTES, backupCount=self.max_files, encoding="utf-8"
        )
        handler.setFormatter(logging.Formatter(LOG_FORMAT))
        logging.getLogger().addHandler(handler)
        self._handler = handler

    def close(self) -> None:
        """Detach and close the handler (idempotent); the files stay."""
        handler, self._handler = self._handler, None
        if handler is not None:
            logging.getLogger().removeHandler(handler)
            handler.close()

    # -- reading (Flink's requestLogList / requestFileUploadByType / ByName) --------------------------
    def _own(self, name: str) -> bool:
        """A file of this process: its main log, the main log's rotations, its ``.out``."""
        return name.startswith(f"{self.stem}.") and not name.endswith(".lock")

    def list_files(self) -> list[LogInfo]:
        """This process's regular files in the log directory (others' files there are not listed)."""
        out: list[LogInfo] = []
        try:
            entries = list(os.scandir(self.directory))
        except OSError:
            return out
        for entry in entries:
            if not self._own(entry.name):
                continue
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode):
                out.append(LogInfo(name=entry.name, size=st.st_size, mtime=int(st.st_mtime * 1000)))
        return sorted(out, key=lambda i: i.name)

    def resolve(self, name: str) -> Path:
        """The file ``name`` of this process's listing; ``ValueError`` for a name that is not a plain file name,
        ``FileNotFoundError`` for one that is not (or no longer) there."""
        if (
            not name
            or name in (".", "..")
            or name.startswith(".")
            or "/" in name
            or "\\" in name
            or "\x00" in name
            or os.sep in name
        ):
            raise ValueError(
                f"expected the name of a file in {self.owner}'s log directory; got {name!r}; hint: GET {self.listing} "
                "lists them"
            )
        path = self.directory / name
        try:
            st = path.lstat()
        except OSError:
            st = None
        if st is None or not stat.S_ISREG(st.st_mode) or not self._own(name):
            raise FileNotFoundError(
                f"The file {name} does not exist on the {self.owner}; hint: GET {self.listing} lists its files"
            )
        return path

    def path_of_type(self, file_type: str) -> Path:
        """Flink's ``FileType``: ``LOG`` (the main log) or ``STDOUT`` (the file standard output goes to)."""
        if file_type == LOG:
            if self.main_log.is_file():
                return self.main_log
        elif file_type == STDOUT:
            found = stdout_file()
            if found is not None:
                return found
        else:
            raise ValueError(f"expected file type LOG or STDOUT; got {file_type!r}")
        raise FileNotFoundError(f"The file {file_type} does not exist on the {self.owner}.")

    @staticmethod
    def read_chunk(path: Path, offset: int, length: int) -> tuple[bytes, int]:
        """At most ``min(length, MAX_CHUNK_BYTES)`` bytes of ``path`` from ``offset``, and the file's size now."""
        length = max(0, min(length, MAX_CHUNK_BYTES))
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            f.seek(max(0, offset))
            return f.read(length), size

    def read(self, file_type: str, file_name: str, offset: int, length: int) -> tuple[bytes, int]:
        """A chunk of the listed file ``file_name``, or (``file_name`` empty) of Flink's ``file_type``, and the
        file's size (blocking I/O: call it off the event loop)."""
        path = self.resolve(file_name) if file_name else self.path_of_type(file_type)
        return self.read_chunk(path, offset, length)


def stdout_file() -> Path | None:
    """The regular file this process's standard output is redirected to, if it is one (Linux: ``/proc``)."""
    try:
        fd = sys.stdout.fileno() if sys.stdout is not None else 1
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        target = Path(os.readlink(f"/proc/self/fd/{fd}"))
    except (OSError, ValueError, AttributeError):
        return None
    return target if target.is_absolute() and target.is_file() else None
