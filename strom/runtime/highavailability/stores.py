"""The HA stores on the shared directory: Flink's ``JobGraphStore`` (``ExecutionPlanStore`` in Flink 2) and
``CompletedCheckpointStore``, as files::

    jobgraphs/<job id>.jobgraph                     the pickled JobGraph and its Python files, until the job ends
    checkpoints/<job id>/checkpoint-<n:019d>.json   {"checkpoint_id", "external_pointer", "session_id",
                                                     "timestamp_ms", "lease_generation"}
    checkpoints/<job id>/recovery-<g:012d>.json     {"lease_generation", "session_id", "restored_checkpoint_id"}
    job-results/<job id>_DIRTY.json                 a globally terminal job whose clean-up is not done yet
    job-results/<job id>.json                       ... done (kept with job-result-store.delete-on-commit: false)

Every write is **fenced**: ``fence()`` — which raises :class:`LeadershipLostError` unless the writer's session is
still the newest, unexpired lease, and otherwise returns that lease's generation — runs before the write and again
after it. Writes publish whole files (a temporary name, then a rename: atomic on POSIX; a single PUT on object
stores).

A write whose second check fails may still have landed: its writer was paused between the first check and the
write while another JobManager took over. The caller treats it as not done (no notify, no commit), and the stores
make sure nobody else acts on it either:

- a job graph is deleted again (the client was told the submission failed);
- a checkpoint pointer carries the lease generation its writer checked. A leader that recovers a job first records
  which checkpoint it restored from under its own (newer) generation; a pointer of an older generation to a later
  checkpoint than that is one the new leader never saw, and :meth:`CompletedCheckpointStore.latest` ignores it
  (the recovery record is what a ZooKeeper transaction gives Flink: the stale write cannot win).
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import fsspec

from strom.exceptions import ClusterError

__all__ = [
    "CheckpointPointer",
    "CompletedCheckpointStore",
    "JobGraphStore",
    "JobResultEntry",
    "JobResultStore",
    "LeadershipLostError",
    "RecoveryRecord",
]

log = logging.getLogger(__name__)

_JOB_ID = re.compile(r"^[0-9a-f]{32}$")
_POINTER = re.compile(r"^checkpoint-(\d{19})\.json$")
_RECOVERY = re.compile(r"^recovery-(\d{12})\.json$")

#: checks leadership (raises :class:`LeadershipLostError`) and returns the generation of the lease it checked
Fence = Callable[[], int]


class LeadershipLostError(ClusterError):
    """This JobManager (or the JobMaster a TaskManager heard from) is no longer the leader: its fencing token is not
    the current lease's session. Nothing was committed or deployed."""


def _no_fence() -> int:
    return 0


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
        try:
            self.fence()
        except LeadershipLostError:
            # the submission fails: a later leader must not recover (run) the job its client was told failed
            with contextlib.suppress(OSError):
                self.fs.rm_file(self._file(job_id))
            raise

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
    #: the lease generation its writer checked before writing (set by the store)
    lease_generation: int = 0

    def to_json(self) -> bytes:
        return json.dumps(
            {
                "checkpoint_id": self.checkpoint_id,
                "external_pointer": self.external_pointer,
                "session_id": self.session_id,
                "timestamp_ms": self.timestamp_ms,
                "lease_generation": self.lease_generation,
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
            lease_generation=int(raw.get("lease_generation", 0)),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class RecoveryRecord:
    """A leader of lease generation ``lease_generation`` recovered the job from ``restored_checkpoint_id`` (0: from
    its start)."""

    lease_generation: int
    session_id: str
    restored_checkpoint_id: int

    def supersedes(self, pointer: CheckpointPointer) -> bool:
        """Whether ``pointer`` was written by an older leader after this recovery had read the pointers."""
        return pointer.lease_generation < self.lease_generation and pointer.checkpoint_id > self.restored_checkpoint_id

    def to_json(self) -> bytes:
        return json.dumps(
            {
                "lease_generation": self.lease_generation,
                "session_id": self.session_id,
                "restored_checkpoint_id": self.restored_checkpoint_id,
            }
        ).encode()

    @classmethod
    def from_json(cls, data: bytes) -> RecoveryRecord:
        raw: Any = json.loads(data)
        return cls(
            lease_generation=int(raw["lease_generation"]),
            session_id=str(raw["session_id"]),
            restored_checkpoint_id=int(raw["restored_checkpoint_id"]),
        )


class CompletedCheckpointStore(_Directory):
    """``<ha dir>/checkpoints/<job id>``: pointers to a job's completed checkpoints (the newest ``num_retained``
    valid ones) and the recovery records of the leaders that took the job over."""

    def __init__(self, ha_dir: str, fence: Fence = _no_fence, *, num_retained: int = 1) -> None:
        super().__init__(ha_dir.rstrip("/") + "/checkpoints")
        self.fence = fence
        self.num_retained = max(1, num_retained)

    def _job_dir(self, job_id: str) -> str:
        _check_job_id(job_id)
        return f"{self.path}/{job_id}"

    def _pointer_file(self, job_id: str, checkpoint_id: int) -> str:
        return f"{self._job_dir(job_id)}/checkpoint-{checkpoint_id:019d}.json"

    def _read(self, path: str) -> bytes | None:
        try:
            with self.fs.open(path, "rb") as f:
                data: bytes = f.read()
            return data
        except FileNotFoundError:
            return None

    def _scan(self, job_id: str) -> tuple[list[int], list[RecoveryRecord]]:
        """The pointers' checkpoint ids (ascending) and the recovery records."""
        ids: list[int] = []
        records: list[RecoveryRecord] = []
        for name in self.names(self._job_dir(job_id)):
            if m := _POINTER.match(name):
                ids.append(int(m.group(1)))
            elif _RECOVERY.match(name):
                data = self._read(f"{self._job_dir(job_id)}/{name}")
                with contextlib.suppress(ValueError, KeyError, TypeError):
                    if data is not None:
                        records.append(RecoveryRecord.from_json(data))
        return sorted(ids), records

    def _pointer(self, job_id: str, checkpoint_id: int) -> CheckpointPointer | None:
        data = self._read(self._pointer_file(job_id, checkpoint_id))
        try:
            return CheckpointPointer.from_json(data) if data is not None else None
        except (ValueError, KeyError, TypeError):
            return None

    @staticmethod
    def _valid(pointer: CheckpointPointer, records: list[RecoveryRecord]) -> bool:
        return not any(r.supersedes(pointer) for r in records)

    def add_checkpoint(self, job_id: str, pointer: CheckpointPointer) -> None:
        """Record a completed checkpoint (fenced), then drop the pointers older than the newest ``num_retained``
        valid ones and those a recovery superseded."""
        generation = self.fence()
        pointer = replace(pointer, lease_generation=generation)
        self.publish(self._pointer_file(job_id, pointer.checkpoint_id), pointer.to_json())
        self.fence()
        ids, records = self._scan(job_id)
        kept = 0
        for checkpoint_id in reversed(ids):
            found = self._pointer(job_id, checkpoint_id)
            if found is not None and self._valid(found, records) and kept < self.num_retained:
                kept += 1
                continue
            with contextlib.suppress(FileNotFoundError, OSError):
                self.fs.rm_file(self._pointer_file(job_id, checkpoint_id))

    def record_recovery(self, job_id: str, session_id: str, restored: CheckpointPointer | None) -> None:
        """A new leader recovers ``job_id`` from ``restored`` (None: from its start): pointers of older leaders to
        later checkpoints are superseded from now on (fenced)."""
        generation = self.fence()
        record = RecoveryRecord(
            lease_generation=generation,
            session_id=session_id,
            restored_checkpoint_id=restored.checkpoint_id if restored is not None else 0,
        )
        self.publish(f"{self._job_dir(job_id)}/recovery-{generation:012d}.json", record.to_json())
        self.fence()

    def latest(self, job_id: str) -> CheckpointPointer | None:
        """The newest valid pointer (None: the job has no completed checkpoint to recover from)."""
        ids, records = self._scan(job_id)
        for checkpoint_id in reversed(ids):
            pointer = self._pointer(job_id, checkpoint_id)
            if pointer is None:
                continue
            if not self._valid(pointer, records):
                log.warning(
                    "ignoring the pointer to checkpoint %d of job %s: written by session %s after a newer leader "
                    "had recovered the job from an earlier checkpoint",
                    checkpoint_id,
                    job_id,
                    pointer.session_id,
                )
                continue
            return pointer
        return None

    def remove_job(self, job_id: str) -> None:
        self.fence()
        with contextlib.suppress(FileNotFoundError):
            self.fs.rm(self._job_dir(job_id), recursive=True)


@dataclass(frozen=True, slots=True, kw_only=True)
class JobResultEntry:
    """A globally terminal job's result, as Flink's ``JobResultEntry`` stores it (``{"result": {...}, "version":
    1}`` with the ``JobExecutionResultResponseBody`` fields), plus its name."""

    job_id: str
    job_name: str
    #: Flink's ``ApplicationStatus``: SUCCEEDED, FAILED, CANCELED
    application_status: str
    net_runtime_ms: int
    failure_text: str = ""

    def to_json(self) -> bytes:
        result: dict[str, Any] = {
            "id": self.job_id,
            "application-status": self.application_status,
            "accumulator-results": {},
            "net-runtime": self.net_runtime_ms,
        }
        if self.failure_text:
            result["failure-cause"] = {"class": "JobExecutionError", "stack-trace": self.failure_text}
        return json.dumps({"result": result, "name": self.job_name, "version": 1}).encode()

    @classmethod
    def from_json(cls, data: bytes) -> JobResultEntry:
        raw: Any = json.loads(data)
        result = raw["result"]
        return cls(
            job_id=str(result["id"]),
            job_name=str(raw.get("name", "")),
            application_status=str(result["application-status"]),
            net_runtime_ms=int(result.get("net-runtime", 0)),
            failure_text=str(result.get("failure-cause", {}).get("stack-trace", "")),
        )


class JobResultStore(_Directory):
    """``<ha dir>/job-results`` (Flink's ``FileSystemJobResultStore``, FLIP-194): a job's result is written *dirty*
    once the job is globally terminal, before any of its clean-up (checkpoints, HA data), and marked clean after.
    A new leader recovers no job that has an entry — it finishes a dirty one's clean-up instead — so a job that
    ended is never run again, whenever its leader died."""

    def __init__(self, ha_dir: str, fence: Fence = _no_fence, *, delete_on_commit: bool = True) -> None:
        super().__init__(ha_dir.rstrip("/") + "/job-results")
        self.fence = fence
        self.delete_on_commit = delete_on_commit

    def _dirty(self, job_id: str) -> str:
        _check_job_id(job_id)
        return f"{self.path}/{job_id}_DIRTY.json"

    def _clean(self, job_id: str) -> str:
        _check_job_id(job_id)
        return f"{self.path}/{job_id}.json"

    def create_dirty_result(self, entry: JobResultEntry) -> None:
        self.fence()
        self.publish(self._dirty(entry.job_id), entry.to_json())
        self.fence()

    def mark_result_clean(self, job_id: str) -> None:
        """The job's clean-up is done: its entry is deleted, or kept clean (``delete_on_commit=False``)."""
        self.fence()
        with contextlib.suppress(FileNotFoundError):
            if self.delete_on_commit:
                self.fs.rm_file(self._dirty(job_id))
            else:
                self.fs.mv(self._dirty(job_id), self._clean(job_id))

    def entries(self) -> dict[str, tuple[JobResultEntry, bool]]:
        """Every job with a result: its entry and whether its clean-up is still to do (dirty)."""
        found: dict[str, tuple[JobResultEntry, bool]] = {}
        for name in self.names(self.path):
            dirty = name.endswith("_DIRTY.json")
            job_id = name[: -len("_DIRTY.json")] if dirty else name[: -len(".json")]
            if not name.endswith(".json") or not _JOB_ID.match(job_id):
                continue
            try:
                with self.fs.open(f"{self.path}/{name}", "rb") as f:
                    found[job_id] = (JobResultEntry.from_json(f.read()), dirty)
            except (FileNotFoundError, ValueError, KeyError, TypeError) as exc:
                log.warning("job result %s unreadable: %s", name, exc)
        return found
