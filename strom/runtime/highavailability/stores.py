"""The HA stores on the shared directory: Flink's ``JobGraphStore`` (``ExecutionPlanStore`` in Flink 2) and
``CompletedCheckpointStore``, as files::

    jobgraphs/<job id>.jobgraph                     the pickled JobGraph and its Python files, until the job ends
    checkpoints/<job id>/checkpoint-<n:019d>.json   {"checkpoint_id", "external_pointer", "session_id", "timestamp_ms"}

Every write is **fenced**: ``fence()`` — which raises :class:`LeadershipLostError` unless the writer's session is
still the newest, unexpired lease — runs before the write and again after it. A write whose second check fails
may have landed; its record names the session that wrote it, and the caller treats it as not done (no notify, no
commit). Writes publish whole files (a temporary name, then a rename: atomic on POSIX; a single PUT on object
stores).
"""

from __future__ import annotations

import contextlib
import json
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import fsspec

from strom.exceptions import ClusterError

__all__ = ["CheckpointPointer", "CompletedCheckpointStore", "JobGraphStore", "LeadershipLostError"]

_JOB_ID = re.compile(r"^[0-9a-f]{32}$")
_POINTER = re.compile(r"^checkpoint-(\d{19})\.json$")

Fence = Callable[[], None]


class LeadershipLostError(ClusterError):
    """This JobManager (or the JobMaster a TaskManager heard from) is no longer the leader: its fencing token is not
    the current lease's session. Nothing was committed or deployed."""


def _no_fence() -> None:
    return None


def _check_job_id(job_id: str) -> None:
    if not _JOB_ID.match(job_id):
        raise ValueError(f"expected a job id of 32 hexadecimal characters; got {job_id!r}")


class _Directory:
    def __init__(self, uri: str) -> None:
        self.uri = uri.rstrip("/")
        self.fs, self.path = fsspec.core.url_to_fs(self.uri)
        self.fs.makedirs(self.path, exist_ok=True)

    def publish(self, path: str, data: bytes) -> None:
        """Write ``path`` whole: a temporary file, then a rename."""
        parent = path.rsplit("/", 1)[0]
        self.fs.makedirs(parent, exist_ok=True)
        tmp = f"{parent}/.tmp-{secrets.token_hex(8)}"
        with self.fs.open(tmp, "wb") as f:
            f.write(data)
        self.fs.mv(tmp, path)

    def names(self, path: str) -> list[str]:
        with contextlib.suppress(AttributeError):
            self.fs.invalidate_cache(path)
        try:
            return [str(n).rstrip("/").rsplit("/", 1)[-1] for n in self.fs.ls(path, detail=False)]
        except FileNotFoundError:
            return []


class JobGraphStore(_Directory):
    """``<ha dir>/jobgraphs``: the job graphs of the submitted jobs that have not ended."""

    def __init__(self, ha_dir: str, fence: Fence = _no_fence) -> None:
        super().__init__(ha_dir.rstrip("/") + "/jobgraphs")
        self.fence = fence

    def _file(self, job_id: str) -> str:
        _check_job_id(job_id)
        return f"{self.path}/{job_id}.jobgraph"

    def put_job_graph(self, job_id: str, data: bytes) -> None:
        self.fence()
        self.publish(self._file(job_id), data)
        self.fence()

    def remove_job_graph(self, job_id: str) -> None:
        self.fence()
        with contextlib.suppress(FileNotFoundError):
            self.fs.rm_file(self._file(job_id))

    def job_ids(self) -> list[str]:
        return sorted(
            n[: -len(".jobgraph")] for n in self.names(self.path) if n.endswith(".jobgraph") and _JOB_ID.match(n[:32])
        )

    def get_job_graph(self, job_id: str) -> bytes:
        with self.fs.open(self._file(job_id), "rb") as f:
            data: bytes = f.read()
        return data


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckpointPointer:
    checkpoint_id: int
    external_pointer: str
    session_id: str
    timestamp_ms: int

    def to_json(self) -> bytes:
        return json.dumps(
            {
                "checkpoint_id": self.checkpoint_id,
                "external_pointer": self.external_pointer,
                "session_id": self.session_id,
                "timestamp_ms": self.timestamp_ms,
            }
        ).encode()

    @classmethod
    def from_json(cls, data: bytes) -> CheckpointPointer:
        raw: Any = json.loads(data)
        return cls(
            checkpoint_id=int(raw["checkpoint_id"]),
            external_pointer=str(raw["external_pointer"]),
            session_id=str(raw["session_id"]),
            timestamp_ms=int(raw["timestamp_ms"]),
        )


class CompletedCheckpointStore(_Directory):
    """``<ha dir>/checkpoints/<job id>``: pointers to a job's completed checkpoints, the newest ``num_retained``."""

    def __init__(self, ha_dir: str, fence: Fence = _no_fence, *, num_retained: int = 1) -> None:
        super().__init__(ha_dir.rstrip("/") + "/checkpoints")
        self.fence = fence
        self.num_retained = max(1, num_retained)

    def _job_dir(self, job_id: str) -> str:
        _check_job_id(job_id)
        return f"{self.path}/{job_id}"

    def _ids(self, job_id: str) -> list[int]:
        return sorted(int(m.group(1)) for m in map(_POINTER.match, self.names(self._job_dir(job_id))) if m)

    def add_checkpoint(self, job_id: str, pointer: CheckpointPointer) -> None:
        """Record a completed checkpoint (fenced), then drop pointers older than the newest ``num_retained``."""
        self.fence()
        self.publish(f"{self._job_dir(job_id)}/checkpoint-{pointer.checkpoint_id:019d}.json", pointer.to_json())
        self.fence()
        for old in self._ids(job_id)[: -self.num_retained]:
            with contextlib.suppress(FileNotFoundError, OSError):
                self.fs.rm_file(f"{self._job_dir(job_id)}/checkpoint-{old:019d}.json")

    def latest(self, job_id: str) -> CheckpointPointer | None:
        for checkpoint_id in reversed(self._ids(job_id)):
            try:
                with self.fs.open(f"{self._job_dir(job_id)}/checkpoint-{checkpoint_id:019d}.json", "rb") as f:
                    return CheckpointPointer.from_json(f.read())
            except (FileNotFoundError, ValueError, KeyError):
                continue
        return None

    def remove_job(self, job_id: str) -> None:
        self.fence()
        with contextlib.suppress(FileNotFoundError):
            self.fs.rm(self._job_dir(job_id), recursive=True)
