"""``FileCommittable`` and ``FileCommitter``: a rolled part and how it becomes visible (Flink's
``FileSinkCommittable`` and ``FileCommitter``)."""

from __future__ import annotations

import os
import posixpath
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from strom.api.sink import CommitRequest, Committer
from strom.connectors.file_system.fs import protocol_of
from strom.connectors.file_system.recoverable_writer import (
    LocalRecoverableWriter,
    RecoverableWriter,
    recoverable_writer_for,
)

__all__ = ["FileCommittable", "FileCommitter"]


@dataclass(frozen=True, slots=True, kw_only=True)
class FileCommittable:
    """A rolled part file still under its hidden name, and the name committing gives it: local paths, or URLs
    (``s3://bucket/key``) on other filesystems."""

    pending_path: str
    final_path: str
    #: a compacted part: the hidden parts it replaces, deleted once it is committed (:mod:`.compaction`)
    compacted_from: tuple[str, ...] = ()


class FileCommitter(Committer[FileCommittable]):
    """Gives pending parts their final names (rename, or copy and delete on object stores); a part committed
    before counts as committed. ``storage_options`` reach the filesystems of URLs (an S3 endpoint, keys)."""

    def __init__(self, storage_options: Mapping[str, Any] | None = None) -> None:
        self.storage_options = dict(storage_options or {})
        self._writers: dict[str, RecoverableWriter] = {}

    def _writer(self, url: str) -> tuple[RecoverableWriter, str]:
        protocol = protocol_of(url)
        if protocol in ("file", "local") and "://" not in url:
            return self._writers.setdefault("file", LocalRecoverableWriter()), url
        writer, path = recoverable_writer_for(url, self.storage_options)
        return self._writers.setdefault(protocol, writer), path

    def commit(self, requests: list[CommitRequest[FileCommittable]]) -> None:
        synced: dict[str, tuple[RecoverableWriter, set[str]]] = {}
        for request in requests:
            c = request.committable
            writer, pending = self._writer(c.pending_path)
            _, final = self._writer(c.final_path)
            committed = writer.commit(pending, final)
            for url in c.compacted_from:  # after the commit: a restore before it compacts them again
                source, path = self._writer(url)
                source.delete(path)
            if not committed:
                request.signal_already_committed()
                continue
            synced.setdefault(type(writer).__name__, (writer, set()))[1].add(_dirname(writer, final))
        for writer, directories in synced.values():
            writer.sync(directories)


def _dirname(writer: RecoverableWriter, path: str) -> str:
    return os.path.dirname(path) if writer.is_local else posixpath.dirname(path)
