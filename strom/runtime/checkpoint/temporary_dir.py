"""The client's temporary checkpoint directory and whether its owner still lives.

A cluster started without ``execution.checkpointing.dir`` checkpoints into ``<tmp>/strom-checkpoints-<pid>-<random>``,
created on first use and removed when the cluster closes. Its ``.owner.lock`` is ``flock``ed by the client for as
long as the cluster lives; the kernel releases the lock when the process dies, however it dies. So anyone on the
machine can tell a directory whose checkpoints a running job may still restore from one that was *abandoned* —
whose checkpoints nothing will ever restore, and whose jobs' leftovers may go (the directory itself at the next
cluster start, the ``FileSink``'s uncommitted part files at the next start or the next writer into their directory).
"""

from __future__ import annotations

import fcntl
import os
import tempfile

__all__ = [
    "OWNER_LOCK",
    "TEMP_CHECKPOINTS_PREFIX",
    "create_temporary_checkpoint_dir",
    "is_abandoned",
    "owner_pid",
]

#: the temporary checkpoint directory of a cluster: ``<tmp>/strom-checkpoints-<pid>-<random>``
TEMP_CHECKPOINTS_PREFIX = "strom-checkpoints-"
#: inside it, locked (``flock``) by the owning process for as long as it lives
OWNER_LOCK = ".owner.lock"


def create_temporary_checkpoint_dir() -> tuple[str, int]:
    """A fresh temporary checkpoint directory and the descriptor of its owner lock, held until the cluster
    closes — or its process dies, however: the kernel then releases the lock."""
    path = tempfile.mkdtemp(prefix=f"{TEMP_CHECKPOINTS_PREFIX}{os.getpid()}-")
    fd = os.open(os.path.join(path, OWNER_LOCK), os.O_CREAT | os.O_RDWR, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    return path, fd


def owner_pid(path: str) -> int | None:
    """The pid in the name of a temporary checkpoint directory; ``None`` when ``path`` is not named like one."""
    name = os.path.basename(os.path.normpath(path))
    pid_text = name[len(TEMP_CHECKPOINTS_PREFIX) :].split("-", 1)[0]
    if not name.startswith(TEMP_CHECKPOINTS_PREFIX) or not pid_text.isdigit():
        return None
    return int(pid_text)


def is_abandoned(path: str) -> bool:
    """Whether the temporary checkpoint directory ``path`` has no living owner: it is gone, or nobody holds its
    owner lock, or — not yet locked by a process that just made it — its pid is not running. A path not named
    like a temporary checkpoint directory is never abandoned."""
    pid = owner_pid(path)
    if pid is None:
        return False
    try:
        fd = os.open(os.path.join(path, OWNER_LOCK), os.O_RDWR)
    except FileNotFoundError:
        return not os.path.isdir(path) or (pid != os.getpid() and not _pid_running(pid))
    except OSError:
        return False  # not ours to judge (permissions)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False  # its owner lives
    finally:
        os.close(fd)  # also releases the lock just taken
    return True


def _pid_running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
