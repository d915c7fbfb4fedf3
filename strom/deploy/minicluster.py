"""``MiniCluster``: a JobManager in this process and TaskManagers as child processes.

The JobManager (Dispatcher, ResourceManager, JobMasters) runs on an asyncio loop in a background
thread; callers cross into it with :meth:`MiniCluster.run`. Each TaskManager is
``python -m strom.runtime.taskexecutor``; it reads the cluster secret from its stdin and exits when that
pipe closes, so closing the cluster — normally, on Ctrl-C, on an error, or because this process died —
leaves no TaskManager behind. ``close()`` waits for them and kills any that linger.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import logging
import os
import subprocess
import sys
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

    # -- lifecycle ---------------------------------------------------------------------------------
    def start(self) -> MiniCluster:
        _LIVE.add(self)
        loop = asyncio.new_event_loop()
        self._loop = loop
        self._thread = threading.Thread(target=loop.run_forever, name="strom-jobmanager", daemon=True)
        self._thread.start()
        try:
            self.run(self._start_dispatcher())
            for i in range(self.num_task_managers):
                self.processes.append(self._spawn_task_manager(f"tm-{i + 1}"))
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
        )
        await self.dispatcher.start()

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

    def _stop_task_managers(self) -> None:
        for p in self.processes:
            if p.stdin is not None:
                with contextlib.suppress(OSError):
                    p.stdin.close()  # the TaskManager's cue to shut down
        deadline = time.monotonic() + 10
        for p in self.processes:
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
        return [p.pid for p in self.processes]
