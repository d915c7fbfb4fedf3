"""The lease files: ``<ha dir>/leader/lease-<generation>.json``, each created once (a conditional create).

What fsspec guarantees decides how:

- a local (POSIX) directory: the lease is written to a temporary file, then published with ``os.link`` — which
  fails if the name exists (atomic and exclusive) — so a reader sees a whole file or none, and of two contenders
  writing the same generation exactly one wins;
- any other file system: ``fs.open(path, "xb")``, an exclusive create. s3fs maps it to S3's conditional
  ``PutObject`` (``If-None-Match: *``, strongly consistent since 2020, conditional since 2024), gcsfs to
  ``ifGenerationMatch=0``; a file system whose ``"xb"`` is not atomic (some FUSE mounts, old NFS) cannot hold a
  lease safely — see docs/design.md.

The newest generation is the lease; a file that cannot be parsed (being written on a file system without atomic
visibility) is skipped in favour of the next older one. Old generations are pruned by the leader, keeping a few.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import secrets
from typing import Any

import fsspec

from strom.runtime.highavailability.lease import LeaderLease

__all__ = ["FileLeaseStore"]

log = logging.getLogger(__name__)

_LEASE_FILE = re.compile(r"^lease-(\d{12})\.json$")
_KEEP = 8


def _is_local(fs: Any) -> bool:
    protocol = fs.protocol
    protocols = (protocol,) if isinstance(protocol, str) else tuple(protocol)
    return "file" in protocols or "local" in protocols


class FileLeaseStore:
    """Reads and conditionally writes the lease files under ``<directory>/leader``. Blocking I/O: call it off the
    event loop."""

    def __init__(self, directory: str) -> None:
        self.uri = directory.rstrip("/") + "/leader"
        self.fs, self.path = fsspec.core.url_to_fs(self.uri)
        self.local = _is_local(self.fs)
        self.fs.makedirs(self.path, exist_ok=True)

    def _generations(self) -> list[int]:
        try:
            names = [str(n).rstrip("/").rsplit("/", 1)[-1] for n in self.fs.ls(self.path, detail=False)]
        except FileNotFoundError:
            return []
        return sorted(int(m.group(1)) for m in map(_LEASE_FILE.match, names) if m)

    def _file(self, generation: int) -> str:
        return f"{self.path}/lease-{generation:012d}.json"

    def read_latest(self) -> LeaderLease | None:
        """The newest readable lease (None: none written yet)."""
        if not self.local:
            self.fs.invalidate_cache(self.path)
        for generation in reversed(self._generations()):
            try:
                with self.fs.open(self._file(generation), "rb") as f:
                    return LeaderLease.from_json(f.read().decode())
            except FileNotFoundError:
                continue  # pruned meanwhile: an older one is no better, but a newer one exists
            except (ValueError, KeyError, TypeError) as exc:
                log.debug("lease generation %d unreadable: %s", generation, exc)
        return None

    def try_write(self, lease: LeaderLease) -> bool:
        """Create the file of ``lease.generation``; False if it exists (another contender wrote it first)."""
        data = lease.to_json().encode()
        target = self._file(lease.generation)
        if self.local:
            tmp = f"{self.path}/.tmp-{secrets.token_hex(8)}"
            with open(tmp, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            try:
                os.link(tmp, target)
            except FileExistsError:
                return False
            finally:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
            return True
        try:
            with self.fs.open(target, "xb") as f:
                f.write(data)
        except FileExistsError:
            return False
        return True

    def prune(self, below: int) -> None:
        """Delete lease generations older than the newest ``_KEEP`` below ``below`` (the leader, after a renewal)."""
        old = [g for g in self._generations() if g < below][:-_KEEP]
        for generation in old:
            with contextlib.suppress(FileNotFoundError, OSError):
                self.fs.rm_file(self._file(generation))
