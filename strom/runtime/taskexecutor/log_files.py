"""``TaskManagerLogFiles``: a TaskManager's own log files (:class:`strom.runtime.log_files.LogFiles`).

Flink's TaskManager logs into ``<env.log.dir>/flink-<user>-taskexecutor-<n>-<host>.log``; strom's into
``taskmanager-<tm id>.log`` in the log directory, which the TaskManagers of a machine (and its JobManager) share: each
lists and serves only its own files. The JobManager's REST API (``/taskmanagers/:id/logs``, ``/log``,
``/logs/:filename``, ``/stdout``) asks the TaskManager for them over RPC (``requestLogList``,
``requestFileUploadByType``/``ByName``): the files stay on the TaskManager's machine, which may not be the
JobManager's.
"""

from __future__ import annotations

import os

from strom.runtime.log_files import LOG, MAX_CHUNK_BYTES, MAX_LOG_BYTES, STDOUT, LogFiles, LogInfo, stdout_file

__all__ = [
    "LOG",
    "MAX_CHUNK_BYTES",
    "MAX_LOG_BYTES",
    "STDOUT",
    "LogInfo",
    "TaskManagerLogFiles",
    "log_file_name",
    "stdout_file",
]


def log_file_name(tm_id: str) -> str:
    """The main log's name in the log directory (Flink: ``flink-<user>-taskexecutor-<n>-<host>.log``)."""
    return f"taskmanager-{tm_id}.log"


class TaskManagerLogFiles(LogFiles):
    """The log files of TaskManager ``tm_id`` in ``log_dir``; :meth:`install` starts writing the main one."""

    def __init__(self, log_dir: str | os.PathLike[str], tm_id: str, *, max_files: int = 10) -> None:
        super().__init__(
            log_dir,
            f"taskmanager-{tm_id}",
            owner=f"TaskExecutor {tm_id}",
            listing="/taskmanagers/<id>/logs",
            max_files=max_files,
        )
        self.tm_id = tm_id
