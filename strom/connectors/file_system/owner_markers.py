"""Owner markers: the uncommitted parts of a FileSink live as long as what could restore them (issue 16).

A job without ``execution.checkpointing.dir`` checkpoints into its client's temporary directory, which nothing
restores once that client is gone, and a job without checkpointing commits only at end of input; the writers
of both name the client's temporary directory (whose owner lock tells whether the client lives) in an owner
marker ``<base>/.strom-owner-<writer id>`` beside their parts, before the first part. Once the client is gone,
the in-progress and pending parts of the marker's writer — in any bucket under the base path — go, then the
marker:

* **local base paths** are also registered inside the temporary directory, so the client's cluster sweeps them
  when it closes (a cancelled or failed job's pending parts) and, when the client was killed, the next strom
  run on the machine does when its cluster starts; and every new writer sweeps its own base path;
* **object stores** (``s3://`` …) get the same markers, but only the next writer into the same base path on
  the same host sweeps them: a cluster never learns how to reach an object store (strom writes no storage
  options or credentials to disk). Until then a dead client's pending parts stay behind as hidden staging
  objects, as Flink leaves in-progress files.

Never removed: anything while its client lives (a failover restores and commits it), committed parts, files
strom did not write, parts marked on another host, the parts a savepoint references (the writer drops its
marker at a savepoint and goes on under a fresh id), and the parts of jobs with configured checkpoint storage.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import socket

from strom.connectors.file_system.recoverable_writer import LocalRecoverableWriter, RecoverableWriter
from strom.runtime.checkpoint.temporary_dir import is_abandoned

__all__ = [
    "IN_PROGRESS",
    "OWNER_MARKER",
    "mark",
    "remove_abandoned_parts",
    "remove_abandoned_parts_of",
    "uncommitted_parts",
]

IN_PROGRESS = ".inprogress"
#: beside the parts of a writer whose job checkpoints into the client's temporary directory:
#: ``.strom-owner-<writer id>``, naming that directory (the parts go once it is abandoned)
OWNER_MARKER = ".strom-owner-"
#: inside that temporary checkpoint directory: one file per local FileSink directory its jobs wrote into
_SINK_DIRECTORIES = "file-sinks"


def mark(storage: RecoverableWriter, base: str, writer_id: str, lead: str, temporary_checkpoint_dir: str) -> None:
    """Name the temporary checkpoint directory beside the parts whose names start with ``lead``, and (local
    base paths) the base path inside that directory."""
    owner = {"checkpoints": temporary_checkpoint_dir, "host": socket.gethostname(), "parts": lead}
    storage.create_text(storage.join(base, f"{OWNER_MARKER}{writer_id}"), json.dumps(owner))
    if not storage.is_local:
        return
    registry = os.path.join(temporary_checkpoint_dir, _SINK_DIRECTORIES)
    entry = os.path.join(registry, hashlib.sha256(base.encode()).hexdigest()[:32])
    if not os.path.exists(entry):  # best effort: the next writer here sweeps without it
        with contextlib.suppress(FileExistsError):
            os.mkdir(registry)
        with contextlib.suppress(FileExistsError), open(entry, "x", encoding="utf-8") as f:
            f.write(base)


def unmark(storage: RecoverableWriter, base: str, writer_id: str) -> None:
    storage.delete(storage.join(base, f"{OWNER_MARKER}{writer_id}"))


def uncommitted_parts(storage: RecoverableWriter, directories: set[str], lead: str) -> list[str]:
    """The in-progress or pending parts in ``directories`` whose names start with ``lead``."""
    return [
        storage.join(d, n)
        for d in directories
        for n in storage.listdir(d)
        if n.startswith(lead) and n.endswith(IN_PROGRESS)
    ]


def remove_abandoned_parts(directory: str, storage: RecoverableWriter | None = None) -> list[str]:
    """Remove the uncommitted parts under the base path ``directory`` (in every bucket) that only an abandoned
    temporary checkpoint directory could have restored, with their owner markers; returns the parts."""
    storage = storage or LocalRecoverableWriter()
    host = socket.gethostname()
    leads: list[str] = []
    markers: list[str] = []
    for name in storage.listdir(directory):
        if not name.startswith(OWNER_MARKER):
            continue
        marker = storage.join(directory, name)
        writer_id = name[len(OWNER_MARKER) :]
        try:
            owner = json.loads(storage.read_text(marker))
            checkpoints, lead = str(owner["checkpoints"]), str(owner["parts"])
            same_host = owner["host"] == host
        except (OSError, ValueError, TypeError, KeyError):
            continue  # gone meanwhile, or not written whole: not ours to judge
        if not same_host or not lead.endswith(f"-{writer_id}-") or "/" in lead or os.sep in lead:
            continue
        if is_abandoned(checkpoints):
            leads.append(lead)
            markers.append(marker)
    if not leads:
        return []
    removed: list[str] = []
    prefixes = tuple(leads)
    for d, name in list(storage.walk(directory)):
        if name.startswith(prefixes) and name.endswith(IN_PROGRESS):
            path = storage.join(d, name)
            storage.delete(path)
            removed.append(path)
    for marker in markers:
        storage.delete(marker)
    return removed


def remove_abandoned_parts_of(temporary_checkpoint_dir: str) -> list[str]:
    """:func:`remove_abandoned_parts` in every local FileSink directory the jobs of ``temporary_checkpoint_dir``
    wrote into (a closing cluster calls it for its own directory, a starting one for a killed client's, before
    removing the directory)."""
    registry = os.path.join(temporary_checkpoint_dir, _SINK_DIRECTORIES)
    try:
        entries = os.listdir(registry)
    except OSError:
        return []
    removed: list[str] = []
    for entry in entries:
        with contextlib.suppress(OSError, ValueError):
            with open(os.path.join(registry, entry), encoding="utf-8") as f:
                directory = f.read()
            removed.extend(remove_abandoned_parts(directory))
    return removed
