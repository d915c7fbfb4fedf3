"""Where part files live and how they become visible (Flink's ``RecoverableWriter`` and its committers).

``recoverable_writer_for(url, storage_options)`` gives the writer of a base path or URL:

* **local paths** (and ``file://``): parts are written under their hidden names, flushed and ``fsync``'d when
  they roll, and committed by ``os.replace`` to the final name in the same directory (atomic), then the
  directory is ``fsync``'d;
* **object stores and other fsspec filesystems** (``s3://`` …) have no rename. A part is uploaded to a hidden
  *staging object* of its hidden name: while it is written it is an unfinished (multipart) upload that no
  listing shows, and it becomes the staging object when it rolls. The commit copies the staging object
  server-side to its final name (one atomic ``CopyObject``: the final object appears whole or not at all) and
  deletes the staging object. It is idempotent: a commit that finds the final object only deletes a staging
  object still there (a crash between the copy and the delete) and does nothing more.

A part discarded before it rolled (a failing writer's ``close``) aborts its upload; a process that is killed
leaves an unfinished multipart upload, which S3 never shows and removes with a bucket lifecycle rule
(``AbortIncompleteMultipartUpload``), as for Flink's S3 writer.

**Resuming** (Flink's ``RecoverableFsDataOutputStream.persist`` and ``RecoverableWriter.recover``): only local
parts can stay open across checkpoints. ``persist`` flushes and ``fsync`` s an open part and returns its durable
size, which the checkpoint records; after a restore ``resume`` truncates the part to that size and opens it for
appending. Object stores cannot append to an upload once a process died (``supports_resume`` is false): their
parts roll at every checkpoint.
"""

from __future__ import annotations

import contextlib
import os
import posixpath
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping
from typing import Any, BinaryIO

from strom.connectors.file_system.fs import is_local, resolve, unstrip
from strom.exceptions import StromError

__all__ = [
    "LocalRecoverableWriter",
    "ObjectStoreRecoverableWriter",
    "RecoverableWriter",
    "local_path",
    "recoverable_writer_for",
]


class RecoverableWriter(ABC):
    """Part-file operations on one filesystem; paths are the filesystem's own (no scheme)."""

    #: local paths: fsync + rename; owner markers are registered in the client's temporary directory
    is_local: bool = False
    #: an open part can be persisted at a checkpoint and resumed after a restore (Flink's ``supportsResume``)
    supports_resume: bool = False

    @abstractmethod
    def join(self, *parts: str) -> str: ...

    @abstractmethod
    def url(self, path: str) -> str:
        """The URL a committable names (a plain path for local files)."""

    @abstractmethod
    def open(self, path: str) -> BinaryIO:
        """A new part file for writing (never an existing one)."""

    @abstractmethod
    def close_for_commit(self, stream: BinaryIO) -> None:
        """Make what was written durable under the part's hidden name and close the stream."""

    @abstractmethod
    def discard(self, stream: BinaryIO, path: str) -> None:
        """Close the stream of a part no checkpoint references and remove what it wrote."""

    def persist(self, stream: BinaryIO) -> int:
        """Make what was written to an open part durable; its size (``supports_resume`` writers only)."""
        raise NotImplementedError(f"{type(self).__name__} cannot persist an open part; it rolls at checkpoints")

    def resume(self, path: str, size: int) -> BinaryIO:
        """The part at ``path`` truncated to the ``size`` a checkpoint recorded, open for appending."""
        raise NotImplementedError(f"{type(self).__name__} cannot resume a part; it rolls at checkpoints")

    @abstractmethod
    def commit(self, pending: str, final: str) -> bool:
        """Give the pending part its final name; ``False`` when that happened before. Raises ``StromError``
        when neither exists."""

    def sync(self, directories: set[str]) -> None:
        """Make the commits in ``directories`` durable (local filesystems)."""

    @abstractmethod
    def delete(self, path: str) -> None:
        """Remove a file; nothing if it is gone."""

    @abstractmethod
    def listdir(self, directory: str) -> list[str]:
        """The names of the files in ``directory``; ``[]`` when it does not exist."""

    @abstractmethod
    def walk(self, base: str) -> Iterator[tuple[str, str]]:
        """(directory, name) of every file under ``base``, recursively."""

    @abstractmethod
    def read_text(self, path: str) -> str: ...

    @abstractmethod
    def open_for_reading(self, path: str) -> BinaryIO:
        """A closed part's content (compaction reads its inputs)."""

    @abstractmethod
    def size(self, path: str) -> int: ...

    @abstractmethod
    def create_text(self, path: str, text: str) -> None: ...


def _missing(pending: str, final: str) -> StromError:
    return StromError(
        f"committing part file {final!r} expected it or its pending file {pending!r} to exist; got neither: "
        "the records of this part are lost; hint: files under the FileSink's base path were deleted or moved "
        "by someone else, or the base path is not the same shared directory on every TaskManager"
    )


def _reopen(path: str) -> BinaryIO:
    """An existing part, for writing from any position (closed when the part rolls)."""
    return open(path, "r+b", buffering=1 << 16)


def _unresumable(path: str, size: int, found: str) -> StromError:
    return StromError(
        f"resuming the in-progress part {path!r} of the restored checkpoint expected at least {size} bytes in it; "
        f"got {found}: its records are lost or were committed since; hint: a retained checkpoint cannot be restored "
        "once its job went on and rolled the part — restore the job's latest checkpoint, or a savepoint (savepoints "
        "roll every part)"
    )


class LocalRecoverableWriter(RecoverableWriter):
    is_local = True
    supports_resume = True

    def join(self, *parts: str) -> str:
        return os.path.join(*parts)

    def url(self, path: str) -> str:
        return path

    def open(self, path: str) -> BinaryIO:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        return open(path, "xb", buffering=1 << 16)

    def close_for_commit(self, stream: BinaryIO) -> None:
        try:
            stream.flush()
            os.fsync(stream.fileno())
        finally:
            stream.close()

    def discard(self, stream: BinaryIO, path: str) -> None:
        stream.close()
        self.delete(path)

    def persist(self, stream: BinaryIO) -> int:
        stream.flush()
        os.fsync(stream.fileno())
        return stream.tell()

    def resume(self, path: str, size: int) -> BinaryIO:
        try:
            stream = _reopen(path)
        except FileNotFoundError:
            raise _unresumable(path, size, "no such file") from None
        try:
            found = stream.seek(0, os.SEEK_END)
            if found < size:
                raise _unresumable(path, size, f"{found} bytes")
            stream.truncate(size)
            stream.seek(size)
        except BaseException:
            stream.close()
            raise
        return stream

    def commit(self, pending: str, final: str) -> bool:
        try:
            os.replace(pending, final)
        except FileNotFoundError:
            if os.path.exists(final):
                return False
            raise _missing(pending, final) from None
        return True

    def sync(self, directories: set[str]) -> None:
        for d in directories:
            _fsync_directory(d)

    def delete(self, path: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)

    def listdir(self, directory: str) -> list[str]:
        try:
            return os.listdir(directory)
        except OSError:
            return []

    def walk(self, base: str) -> Iterator[tuple[str, str]]:
        for directory, _, names in os.walk(base):
            for name in names:
                yield directory, name

    def read_text(self, path: str) -> str:
        with open(path, encoding="utf-8") as f:
            return f.read()

    def open_for_reading(self, path: str) -> BinaryIO:
        return open(path, "rb")

    def size(self, path: str) -> int:
        return os.path.getsize(path)

    def create_text(self, path: str, text: str) -> None:
        with open(path, "x", encoding="utf-8") as f:
            f.write(text)


def _fsync_directory(path: str) -> None:
    """Make renames in ``path`` durable (POSIX; a no-op where directories cannot be opened)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)


class ObjectStoreRecoverableWriter(RecoverableWriter):
    """Staging objects committed by server-side copy and delete (any fsspec filesystem; see the module)."""

    def __init__(self, fs: Any) -> None:
        self.fs = fs

    def join(self, *parts: str) -> str:
        return posixpath.join(*parts)

    def url(self, path: str) -> str:
        return unstrip(self.fs, path)

    def open(self, path: str) -> BinaryIO:
        stream: BinaryIO = self.fs.open(path, "wb")
        return stream

    def close_for_commit(self, stream: BinaryIO) -> None:
        stream.close()  # completes the upload: the staging object exists from now on

    def discard(self, stream: BinaryIO, path: str) -> None:
        abort = getattr(stream, "discard", None)  # fsspec's buffered files abort their multipart upload
        if callable(abort):
            abort()
            with contextlib.suppress(AttributeError):
                stream.closed = True  # type: ignore[misc]  # fsspec: discarded, not to be closed (uploaded) again
        else:
            stream.close()
            self.delete(path)

    def _exists(self, path: str) -> bool:
        self.fs.invalidate_cache(posixpath.dirname(path))  # listings cached by another operation are stale
        return bool(self.fs.exists(path))

    def commit(self, pending: str, final: str) -> bool:
        if self._exists(final):  # committed before; a crash may have left the staging object
            self.delete(pending)
            return False
        try:
            self.fs.copy(pending, final)
        except FileNotFoundError:
            if self._exists(final):  # committed meanwhile by an earlier attempt still finishing
                return False
            raise _missing(self.url(pending), self.url(final)) from None
        self.delete(pending)
        return True

    def delete(self, path: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.fs.rm_file(path)
        self.fs.invalidate_cache(posixpath.dirname(path))

    def listdir(self, directory: str) -> list[str]:
        self.fs.invalidate_cache(directory)
        try:
            entries = self.fs.ls(directory, detail=True)
        except (FileNotFoundError, NotADirectoryError):
            return []
        return [posixpath.basename(e["name"].rstrip("/")) for e in entries if e.get("type") == "file"]

    def walk(self, base: str) -> Iterator[tuple[str, str]]:
        self.fs.invalidate_cache(base)
        try:
            found = self.fs.find(base)
        except FileNotFoundError:
            return
        for path in found:
            yield posixpath.dirname(path), posixpath.basename(path)

    def read_text(self, path: str) -> str:
        return bytes(self.fs.cat_file(path)).decode("utf-8")

    def open_for_reading(self, path: str) -> BinaryIO:
        stream: BinaryIO = self.fs.open(path, "rb")
        return stream

    def size(self, path: str) -> int:
        return int(self.fs.size(path))

    def create_text(self, path: str, text: str) -> None:
        self.fs.pipe_file(path, text.encode("utf-8"))


def local_path(base_path: str) -> str:
    """An absolute local path from a plain path or a ``file://`` URI (resolved on the client)."""
    if "://" in base_path:
        _, path = resolve(base_path, role="FileSink base path")
        return os.path.abspath(path)
    return os.path.abspath(base_path)


def recoverable_writer_for(url: str, storage_options: Mapping[str, Any] | None = None) -> tuple[RecoverableWriter, str]:
    """The writer of ``url`` and the path within its filesystem."""
    if is_local(url):
        return LocalRecoverableWriter(), local_path(url)
    fs, path = resolve(url, storage_options, role="FileSink base path")
    return ObjectStoreRecoverableWriter(fs), path.rstrip("/")
