"""``TaskManagerThread``: one TaskManager of the MiniCluster hosted on a thread of the client process.

Flink's MiniCluster runs its TaskManagers inside its own JVM; ``minicluster.taskmanager-mode: thread`` does the
same here: each TaskManager is a thread of this process running :func:`~strom.runtime.taskexecutor.runner.
run_task_manager` on an asyncio loop of its own — the same TaskExecutor, RPC and network stack as a child process,
talking to the JobManager over loopback TCP, only without a process start (an interpreter and strom's imports,
about a second each). The TaskManagers then share this process's GIL, so it is for tests, not for throughput.

A TaskManager owns its process's settings; a thread does not (:attr:`TaskManagerSpec.owns_process` is False): it
leaves the interpreter's garbage collector and switch interval alone, writes no log files (its records go to this
process's logging, as every TaskManager's do in Flink's MiniCluster), installs no signal handler and does not watch
a standard input; a stuck task closes its TaskExecutor instead of ending the process. What the process entry
(``python -m strom.runtime.taskexecutor``) does besides — ``basicConfig``, ``PR_SET_PDEATHSIG``, ignoring SIGINT —
it does not do either.

:meth:`stop` asks the TaskExecutor to close on its loop (as a closed standard input asks a process) — once it has
registered, so that a close never races its start; :meth:`join` waits, bounded, for the thread, which ends after
the loop closed and its default executor's threads were joined. The ``on_exit`` callback runs on the thread as its
last act, with how it ended.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable

from strom.runtime.task_group import AsyncTaskGroup
from strom.runtime.taskexecutor.runner import TaskManagerSpec, run_task_manager
from strom.runtime.taskexecutor.task_executor import TaskExecutor

__all__ = ["TaskManagerThread"]


class TaskManagerThread:
    """TaskManager ``spec.tm_id`` on the thread ``strom-taskmanager-<id>``."""

    def __init__(self, spec: TaskManagerSpec, secret: bytes, *, on_exit: Callable[[str], None]) -> None:
        if spec.owns_process:
            raise ValueError(
                f"expected a TaskManagerSpec with owns_process=False for TaskManager {spec.tm_id} on a thread; got "
                "True; hint: a thread must leave the process's collector, switch interval and exit alone"
            )
        self.spec = spec
        self._secret = secret
        self._on_exit = on_exit
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._executor: TaskExecutor | None = None
        self._stop_requested = False
        self._closing: asyncio.Task[None] | None = None
        self._tasks = AsyncTaskGroup(f"TaskManager thread {spec.tm_id}")  # owns the close task
        self.thread = threading.Thread(target=self._run, name=f"strom-taskmanager-{spec.tm_id}", daemon=True)

    @property
    def tm_id(self) -> str:
        return self.spec.tm_id

    def start(self) -> None:
        self.thread.start()

    def _run(self) -> None:
        how = "ended"
        try:
            asyncio.run(self._serve())
        except Exception as exc:
            how = f"could not run: {type(exc).__name__}: {exc}"
        except BaseException as exc:  # the thread's last act reports it, whatever ended it
            how = f"was stopped by {type(exc).__name__}"
        self._on_exit(f"(thread {self.thread.name}) {how}")

    async def _serve(self) -> None:
        try:
            await run_task_manager(self.spec, self._secret, started=self._started)
        finally:  # on the loop: a stop() from now on has nothing to close (asyncio.run's teardown follows)
            with self._lock:
                self._loop = self._executor = None
            await self._tasks.stop(grace=5.0)  # the close task ended with the TaskExecutor, normally

    def _started(self, executor: TaskExecutor) -> None:
        """On the TaskManager's loop, once the TaskExecutor registered: from now on :meth:`stop` closes it. A stop
        asked for earlier waits for this point — a TaskExecutor closed while it registers would leave its new
        JobManager connection open — or for the failed start, after which ``run_task_manager`` closes it."""
        with self._lock:
            self._loop, self._executor = asyncio.get_running_loop(), executor
            stop = self._stop_requested
        if stop:
            self._close_soon(executor)

    def _close_soon(self, executor: TaskExecutor) -> None:
        """On the loop: close the TaskExecutor — unless it ended already (no task is started in the teardown)."""
        with self._lock:
            current = self._executor is executor
        if current and self._closing is None:  # awaited through executor.terminated, which run_task_manager awaits
            self._closing = self._tasks.create_task(executor.close(), name=f"close {self.tm_id}")

    def stop(self) -> None:
        """Any thread: ask the TaskExecutor to close (it cancels its tasks, then its servers and connections)."""
        with self._lock:
            self._stop_requested = True
            loop, executor = self._loop, self._executor
        if loop is None or executor is None:
            return  # not registered yet (_started sees the request) or already ended
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
            loop.call_soon_threadsafe(self._close_soon, executor)

    def join(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the thread to end; whether it did."""
        if self.thread.ident is not None:
            self.thread.join(timeout)
        return not self.thread.is_alive()

    @property
    def alive(self) -> bool:
        return self.thread.is_alive()
