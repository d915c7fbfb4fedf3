"""How the heap keyed state backend snapshots asynchronously (Flink's ``HeapSnapshotStrategy``).

Flink's heap backend keeps its state in ``CopyOnWriteStateMap``s: the synchronous part of a checkpoint only bumps a
version, and entries written afterwards are copied first, so the asynchronous part serializes a point-in-time view
while the task goes on. strom lets the kernel do the copying: the synchronous part ``fork()``s the TaskManager
process — the child shares every page copy-on-write, so it sees the state exactly as it was at the fork, whatever
the task thread changes afterwards — and the child serializes the key groups in the canonical format
(:meth:`~strom.runtime.state.heap_keyed_state_backend.HeapKeyedStateBackend.write_key_groups`) into an anonymous
in-memory file (``memfd``) and announces each key group (number, size) on a pipe. The supplier, called by the
checkpoint's asynchronous part in the parent, takes each key group's bytes out of the file as it is announced
(``pread``: one copy, the GIL released for all of it) and reaps the child.

Why not the bytes through the pipe: the parent's reading thread needs the GIL after every pipe-full, and while the
task thread processes records it gets it only every switch interval (5 ms), so a pipe of 1 MiB drained at about
200 MB/s and the child waited on it (500 MB: 2.1 s for the supplier with an idle task thread, 6.9–8.4 s with a busy
one, measured in-process); with the file the child never waits and the parent takes the GIL once per key group.

The pause of the task is the fork (page tables: about 2 ms per GB of heap), not the pickling; the pickling runs
on another core, outside the task's GIL. The child runs nothing but that loop: garbage collection off, default
signal handlers, every inherited file descriptor but the pipe and the file closed (so a killed TaskManager's
connections close at once), no logging, no locks, no threads, and it leaves with ``os._exit``. A child that fails
sends the error's message (an unpicklable value names its state, as the synchronous path does); one that dies
leaves a short stream of announcements, and either way the supplier raises and the checkpoint is declined, never
hung: :meth:`ForkedSnapshot.cancel` (an aborted checkpoint, a snapshot never resolved) kills and reaps the child.

Where ``fork`` is not available (not Linux), when turned off, for small state, or if the fork fails, the snapshot
is serialized in the synchronous part, as before, and the supplier hands the bytes over. A fork costs the
TaskManager far more than its 1.5–2 ms on the task thread: until every page has been written once after it, each
first write to a page (the task thread's, the allocator's) takes a copy-on-write fault, and the child copies every
page whose objects it pickles. Small state is therefore pickled on the task thread: always below
``fork_min_entries`` stored entries, and below ``sync_max_entries`` when the last snapshot's bytes per entry put
this one under ``sync_max_bytes`` (the first snapshot, with no such estimate, forks from ``fork_min_entries`` on).
Measured (``docs/benchmarks.md``, "What a heap snapshot costs"): in a 150 MB process doing W2's kind of
work, a snapshot of 2 000 / 10 000 / 40 000 small entries cost +36–49 / +73–90 / +250 ms of CPU forked against
+10 / +0–23 / +45–78 ms pickled on the task thread; pickling takes ~1 µs per small entry and ~2 ms per MB, so
20 000 entries or 8 MB bound the pause it adds at ~20 ms.

    >>> strategy = HeapSnapshotStrategy(use_fork=False)
    >>> strategy.async_snapshot(lambda: iter([(3, b"x")]), entries=1)()
    {3: b'x'}
"""

from __future__ import annotations

import contextlib
import gc
import logging
import os
import signal
import struct
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from typing import BinaryIO, NoReturn

from strom.exceptions import CheckpointError, SerializationError

__all__ = [
    "FORK_SUPPORTED",
    "SYNC_MAX_BYTES",
    "SYNC_MAX_ENTRIES",
    "ForkedSnapshot",
    "HeapSnapshotStrategy",
    "KeyGroupDumper",
    "KeyGroupWriter",
]

log = logging.getLogger(__name__)

#: ``fork()`` with copy-on-write pages and ``close_range``: Linux
FORK_SUPPORTED = sys.platform == "linux" and hasattr(os, "fork")
#: below this many stored entries (keys × states) a snapshot is pickled at once: about 1 ms of pickling, the cost of
#: forking a TaskManager process (measured: 1.2 ms for 500 small values, 1.5 ms for 5 000, 30 ms for 1 GB of state)
FORK_MIN_ENTRIES = 1_000
#: below this many entries and :data:`SYNC_MAX_BYTES` (estimated from the last snapshot) a snapshot is pickled on the
#: task thread too: cheaper for the TaskManager than a fork and its copy-on-write faults, a pause of ~20 ms at most
SYNC_MAX_ENTRIES = 20_000
SYNC_MAX_BYTES = 8 << 20

#: the canonical bytes of each non-empty key group, in key-group order
KeyGroupWriter = Callable[[], Iterator[tuple[int, bytes]]]
#: the same bytes written one key group after the other into a file: (key group, length)
KeyGroupDumper = Callable[[BinaryIO], Iterator[tuple[int, int]]]

_HEADER = struct.Struct("<qQ")  # key group (or a marker below), length of its bytes (next in the file)
_END = -1  # every key group was written
_ERROR = -2  # followed, on the pipe, by "<exception type>\0<message>" in UTF-8
_MAX_IO = 0x7FFFF000  # Linux moves at most this many bytes in one read() / write()
_FILE_BUFFER = 1 << 20  # the child's buffer in front of its file (the pickler writes ~64 KB frames)


class HeapSnapshotStrategy:
    """Forks for the asynchronous part where it can (``use_fork=None``: where :data:`FORK_SUPPORTED`)."""

    def __init__(
        self,
        *,
        use_fork: bool | None = None,
        fork_min_entries: int = FORK_MIN_ENTRIES,
        sync_max_entries: int = SYNC_MAX_ENTRIES,
        sync_max_bytes: int = SYNC_MAX_BYTES,
    ) -> None:
        self.use_fork = FORK_SUPPORTED if use_fork is None else use_fork and FORK_SUPPORTED
        self.fork_min_entries = fork_min_entries
        self.sync_max_entries = sync_max_entries
        self.sync_max_bytes = sync_max_bytes
        #: the last snapshot's bytes per stored entry (``None``: no snapshot yet)
        self.bytes_per_entry: float | None = None

    def async_snapshot(
        self, write: KeyGroupWriter, *, entries: int, dump: KeyGroupDumper | None = None
    ) -> Callable[[], dict[int, bytes]]:
        """The synchronous part: fork (or serialize now); returns the supplier of the key groups' bytes. ``dump``
        (optional): how a forked child writes the same bytes straight into its file."""
        if self.use_fork and self.forks(entries):
            try:
                return ForkedSnapshot.start(write, dump=dump, on_size=lambda size: self._measured(size, entries))
            except OSError as exc:  # no memory for the page tables, too many processes: the old way still works
                log.warning("forking for an asynchronous snapshot failed (%s); serializing synchronously", exc)
        blobs = dict(write())
        self._measured(sum(map(len, blobs.values())), entries)
        return lambda: blobs

    def forks(self, entries: int) -> bool:
        """Whether a snapshot of ``entries`` stored entries forks (where forking is on) or is pickled at once."""
        if entries < self.fork_min_entries:
            return False
        per = self.bytes_per_entry
        return per is None or entries >= self.sync_max_entries or entries * per >= self.sync_max_bytes

    def _measured(self, size: int, entries: int) -> None:
        if entries:
            self.bytes_per_entry = size / entries


class ForkedSnapshot:
    """A child process serializing the key groups as they were at the fork; calling it reads them (once)."""

    def __init__(self, pid: int, fd: int, data_fd: int, on_size: Callable[[int], None] | None = None) -> None:
        self.pid = pid
        self._on_size = on_size
        self._fd = fd
        self._data_fd = data_fd
        self._lock = threading.Lock()
        self._reading = False
        self._status: int | None = None  # the child's exit code once reaped (negative: killed by that signal)

    @classmethod
    def start(
        cls,
        write: KeyGroupWriter,
        *,
        dump: KeyGroupDumper | None = None,
        on_size: Callable[[int], None] | None = None,
    ) -> ForkedSnapshot:
        """Fork the child writing ``write()``'s key groups (with ``dump`` if given); ``on_size`` gets their total size
        once all were read."""
        data = _anonymous_file()
        try:
            r, w = os.pipe()
        except BaseException:
            os.close(data)
            raise
        try:
            pid = os.fork()
        except BaseException:
            for fd in (r, w, data):
                os.close(fd)
            raise
        if pid == 0:  # the child: never returns
            _run_child(write, dump, w, data)
        os.close(w)
        return cls(pid, r, data, on_size)

    def __call__(self) -> dict[int, bytes]:
        """The asynchronous part: every key group's bytes; raises if the child failed, died or was cancelled."""
        return dict(self.stream())

    def stream(self) -> Iterator[tuple[int, bytes]]:
        """The key groups' bytes one by one as the child announces them (the checkpoint file is written meanwhile);
        raises, after the ones it gave, if the child failed, died or was cancelled. Taken once."""
        with self._lock:
            if self._reading or self._status is not None:
                raise CheckpointError(
                    f"expected to read the snapshot of process {self.pid} once; got a second read or a cancelled "
                    "snapshot; hint: a supplier of keyed state is called exactly once per checkpoint"
                )
            self._reading = True
        return self._read()

    def _read(self) -> Iterator[tuple[int, bytes]]:
        count = size = 0
        error = b""
        complete = False
        try:
            with open(self._fd, "rb") as f:
                while True:
                    head = f.read(_HEADER.size)
                    if len(head) < _HEADER.size:
                        break  # the child died
                    kg, length = _HEADER.unpack(head)
                    if kg >= 0:
                        data = _pread(self._data_fd, length, size)
                        if len(data) < length:
                            break
                        size += length
                        count += 1
                        yield kg, data
                    elif kg == _ERROR:
                        error = f.read(length)
                        break
                    else:
                        complete = True
                        break
        finally:
            os.close(self._data_fd)
            if not complete and not error:
                with contextlib.suppress(ProcessLookupError):  # a stream closed early: the child is not needed
                    os.kill(self.pid, signal.SIGKILL)
            status = self._reap()
        if error:
            raise _child_error(error)
        if complete and status == 0 and self._on_size is not None:
            self._on_size(size)
        if not complete or status != 0:
            raise CheckpointError(
                f"expected the snapshot process {self.pid} to write every key group of the keyed state; it "
                f"{_describe_status(status)} after {count} key groups ({size} bytes); "
                "hint: it was cancelled (the checkpoint was aborted) or killed — the kernel's OOM killer picks it "
                "when the TaskManager runs short of memory, as the child copies the pages it touches"
            )

    def cancel(self) -> None:
        """Kill the child and reap it (Flink cancels the snapshot's future); a read in progress then raises."""
        with self._lock:
            if self._status is not None:
                return
            os.kill(self.pid, signal.SIGKILL)
            if self._reading:
                return  # the reader sees the end of the pipe and reaps
        os.close(self._fd)
        os.close(self._data_fd)
        self._reap()

    def _reap(self) -> int:
        with self._lock:
            if self._status is None:
                try:
                    _, status = os.waitpid(self.pid, 0)
                    self._status = os.waitstatus_to_exitcode(status)
                except ChildProcessError:  # reaped by someone else (SIGCHLD ignored): the stream tells
                    self._status = 0
            return self._status

    def __del__(self) -> None:
        # a snapshot dropped without being read (its checkpoint failed elsewhere) — or whose stream was taken but never
        # started (a generator that never ran has no ``finally`` to run): leave no process and no descriptor behind
        if self._status is None:
            with contextlib.suppress(Exception):
                if not self._reading:
                    self.cancel()
                    return
                os.kill(self.pid, signal.SIGKILL)
                os.close(self._fd)
                os.close(self._data_fd)
                self._reap()


def _run_child(write: KeyGroupWriter, dump: KeyGroupDumper | None, fd: int, data: int) -> NoReturn:
    """The forked child: serialize, write, announce, leave. Nothing here may return into the parent's code."""
    code = 3
    try:
        gc.disable()
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2, signal.SIGALRM):
            signal.signal(sig, signal.SIG_DFL)  # the TaskManager's handlers are not the child's
        low, high = sorted((fd, data))
        os.closerange(3, low)
        os.closerange(low + 1, high)
        os.closerange(high + 1, max(high + 2, os.sysconf("SC_OPEN_MAX")))
        try:
            if dump is not None:  # pickled straight into the file, a frame at a time: no buffer of a key group
                with open(data, "wb", buffering=_FILE_BUFFER, closefd=False) as file:
                    for kg, length in dump(file):
                        _write_all(fd, _HEADER.pack(kg, length))
            else:
                for kg, blob in write():
                    _write_all(data, blob)
                    _write_all(fd, _HEADER.pack(kg, len(blob)))
            _write_all(fd, _HEADER.pack(_END, 0))
            code = 0
        except Exception as exc:
            message = f"{type(exc).__name__}\0{exc}".encode("utf-8", "replace")
            _write_all(fd, _HEADER.pack(_ERROR, len(message)) + message)
            code = 1
    finally:
        os._exit(code)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view[:_MAX_IO]) :]


def _pread(fd: int, size: int, offset: int) -> bytes:
    """``size`` bytes at ``offset`` (fewer: the file ends there)."""
    data = os.pread(fd, min(size, _MAX_IO), offset)
    if len(data) == size or not data:
        return data
    parts = [data]
    got = len(data)
    while got < size:
        more = os.pread(fd, min(size - got, _MAX_IO), offset + got)
        if not more:
            break
        parts.append(more)
        got += len(more)
    return b"".join(parts)


def _anonymous_file() -> int:
    """A file in memory only, gone with its last descriptor (``memfd``; else an unlinked temporary file)."""
    try:
        return os.memfd_create("strom-heap-snapshot", os.MFD_CLOEXEC)
    except (AttributeError, OSError):
        fd, path = tempfile.mkstemp(prefix="strom-heap-snapshot-")
        os.unlink(path)
        return fd


def _child_error(data: bytes) -> Exception:
    kind, _, message = data.decode("utf-8", "replace").partition("\0")
    if kind == "SerializationError":
        return SerializationError(message)
    return CheckpointError(
        f"expected the snapshot process to serialize the keyed state; got {kind}: {message}; hint: keep plain "
        "data in state"
    )


def _describe_status(status: int) -> str:
    if status < 0:
        try:
            return f"was killed by {signal.Signals(-status).name}"
        except ValueError:
            return f"was killed by signal {-status}"
    return f"exited with code {status}" if status else "ended its stream early"
