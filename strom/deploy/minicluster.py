"""``MiniCluster``: a JobManager in this process and TaskManagers as child processes.

The JobManager (Dispatcher, ResourceManager, JobMasters) runs on an asyncio loop in a background
thread; callers cross into it with :meth:`MiniCluster.run`. Each TaskManager is
``python -m strom.runtime.taskexecutor``; it reads the cluster secret from its stdin and exits when that
pipe closes, so closing the cluster — normally, on Ctrl-C, on an error, or because this process died —
leaves no TaskManager behind. ``close()`` waits for them and kills any that linger.

Like Flink's active ResourceManagers, the MiniCluster starts a replacement process for every TaskManager
that is lost while the cluster runs, so a job that restarts after a crash finds its slots again.
Checkpoints go to ``execution.checkpointing.dir`` or, when that is unset, to a temporary directory the
MiniCluster removes when it closes.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import Coroutine
from typing import Any, TypeVar

from strom.config import (
    ClusterOptions,
    Configuration,
    ExecutionOptions,
    HeartbeatOptions,
    NetworkOptions,
    TaskManagerOptions,
)
from strom.exceptions import ClusterError
from strom.runtime.jobmaster.dispatcher import Dispatcher
from strom.runtime.rpc.auth import new_secret

__all__ = ["MiniCluster"]

log = logging.getLogger(__name__)
T = TypeVar("T")

_LIVE: weakref.WeakSet[MiniCluster] = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    for cluster in list(_LIVE):
        cluster.close()


class MiniCluster:
    def __init__(self, config: Configuration, *, num_task_managers: int) -> None:
        self.config = config
        self.num_task_managers = max(1, num_task_managers)
        self.slots_per_task_manager = config.get(TaskManagerOptions.NUM_TASK_SLOTS)
        self.secret = new_secret()
        self.processes: list[subprocess.Popen[bytes]] = []
        self.dispatcher: Dispatcher | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._closed = False
        self._lock = threading.Lock()
        self._next_tm = 0
        self._checkpoint_dir = ""

    # -- lifecycle ---------------------------------------------------------------------------------
    def start(self) -> MiniCluster:
        _LIVE.add(self)
        loop = asyncio.new_event_loop()
        self._loop = loop
        self._thread = threading.Thread(target=loop.run_forever, name="strom-jobmanager", daemon=True)
        self._thread.start()
        try:
            self.run(self._start_dispatcher())
            for _ in range(self.num_task_managers):
                self.processes.append(self._spawn_task_manager(self._new_tm_id()))
            self._wait_for_registration()
        except BaseException:
            self.close()
            raise
        return self

    async def _start_dispatcher(self) -> None:
        c = self.config
        self.dispatcher = Dispatcher(
            secret=self.secret,
            host=c.get(ClusterOptions.JOBMANAGER_HOST),
            heartbeat_interval=c.get(HeartbeatOptions.INTERVAL),
            heartbeat_timeout=c.get(HeartbeatOptions.TIMEOUT),
            slot_timeout=c.get(ClusterOptions.SLOT_REQUEST_TIMEOUT),
            default_checkpoint_dir=self._default_checkpoint_dir,
        )
        self.dispatcher.resource_manager.listeners.append(self._task_manager_lost)
        await self.dispatcher.start()

    def _new_tm_id(self) -> str:
        with self._lock:
            self._next_tm += 1
            return f"tm-{self._next_tm}"

    def _default_checkpoint_dir(self) -> str:
        """A temporary checkpoint directory, created on first use, removed on close."""
        with self._lock:
            if not self._checkpoint_dir:
                self._checkpoint_dir = tempfile.mkdtemp(prefix="strom-checkpoints-")
            return self._checkpoint_dir

    def _task_manager_lost(self, tm_id: str, message: str) -> None:
        """On the JobManager loop: start a replacement TaskManager process (off the loop)."""
        if self._closed:
            return
        loop = asyncio.get_running_loop()
        loop.run_in_executor(None, self._start_replacement, tm_id)

    def _start_replacement(self, lost_tm_id: str) -> None:
        with self._lock:
            if self._closed:
                return
        tm_id = self._new_tm_id()
        log.info("starting TaskManager %s to replace the lost %s", tm_id, lost_tm_id)
        try:
            proc = self._spawn_task_manager(tm_id)
        except Exception as exc:
            log.warning("could not start a replacement TaskManager: %s", exc)
            return
        with self._lock:
            if not self._closed:
                self.processes.append(proc)
                return
        with contextlib.suppress(OSError):
            assert proc.stdin is not None
            proc.stdin.close()

    def _spawn_task_manager(self, tm_id: str) -> subprocess.Popen[bytes]:
        assert self.dispatcher is not None
        c = self.config
        host, port = self.dispatcher.address
        cmd = [
            sys.executable,
            "-m",
            "strom.runtime.taskexecutor",
            f"--jm-host={host}",
            f"--jm-port={port}",
            f"--tm-id={tm_id}",
            f"--host={c.get(TaskManagerOptions.HOST)}",
            f"--slots={self.slots_per_task_manager}",
            f"--parent-pid={os.getpid()}",
            f"--heartbeat-interval={c.get(HeartbeatOptions.INTERVAL)}",
            f"--heartbeat-timeout={c.get(HeartbeatOptions.TIMEOUT)}",
            f"--cancellation-timeout={c.get(ExecutionOptions.CANCELLATION_TIMEOUT)}",
            f"--max-frame-bytes={c.get(NetworkOptions.MAX_FRAME_BYTES)}",
        ]
        env = dict(os.environ)
        paths = [p or os.getcwd() for p in sys.path]
        env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, env=env, start_new_session=False)
        assert proc.stdin is not None
        proc.stdin.write(self.secret.hex().encode() + b"\n")
        proc.stdin.flush()
        return proc

    def _wait_for_registration(self) -> None:
        assert self.dispatcher is not None
        timeout = self.config.get(ClusterOptions.REGISTRATION_TIMEOUT)
        fut = self.submit(self.dispatcher.resource_manager.wait_for_task_managers(self.num_task_managers, timeout))
        while True:
            try:
                fut.result(timeout=0.05)
                return
            except TimeoutError:
                for p in self.processes:
                    if p.poll() is not None:
                        fut.cancel()
                        raise ClusterError(
                            f"expected TaskManager pid {p.pid} to start; it exited with code {p.returncode}; "
                            "hint: see its error output above"
                        ) from None

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        _LIVE.discard(self)
        loop = self._loop
        dispatcher = self.dispatcher
        running = loop is not None and dispatcher is not None and loop.is_running()
        if running:
            assert dispatcher is not None
            self.call_soon(dispatcher.prepare_shutdown)
        self._stop_task_managers()
        if running:
            assert dispatcher is not None
            try:
                self.run(dispatcher.close(), timeout=10)
            except Exception as exc:
                log.debug("closing the dispatcher: %s", exc)
        if loop is not None:
            loop.call_soon_threadsafe(loop.stop)
            if self._thread is not None:
                self._thread.join(timeout=10)
            if not loop.is_running():
                loop.close()
        if self._checkpoint_dir:
            shutil.rmtree(self._checkpoint_dir, ignore_errors=True)

    def _stop_task_managers(self) -> None:
        with self._lock:
            processes = list(self.processes)
        for p in processes:
            if p.stdin is not None:
                with contextlib.suppress(OSError):
                    p.stdin.close()  # the TaskManager's cue to shut down
        deadline = time.monotonic() + 10
        for p in processes:
            try:
                p.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                log.warning("TaskManager pid %d did not stop in time; killing it", p.pid)
                p.kill()
                p.wait(timeout=5)

    def __enter__(self) -> MiniCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- crossing into the JobManager loop ---------------------------------------------------------
    def submit(self, coro: Coroutine[Any, Any, T]) -> Any:
        if self._loop is None or (self._closed and not self._loop.is_running()):
            coro.close()
            raise ClusterError("the MiniCluster is not running")
        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        fut = self.submit(coro)
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:  # short waits keep Ctrl-C responsive
            try:
                return fut.result(timeout=0.2)  # type: ignore[no-any-return]
            except TimeoutError:
                if deadline is not None and time.monotonic() > deadline:
                    fut.cancel()
                    raise

    def call_soon(self, fn: Any, *args: Any) -> None:
        assert self._loop is not None
        self._loop.call_soon_threadsafe(fn, *args)

    @property
    def task_manager_pids(self) -> list[int]:
        """Every TaskManager process the cluster started, replacements included."""
        with self._lock:
            return [p.pid for p in self.processes]

    @property
    def live_task_manager_pids(self) -> list[int]:
        """The TaskManager processes running now (lost ones not)."""
        with self._lock:
            return [p.pid for p in self.processes if p.poll() is None]
