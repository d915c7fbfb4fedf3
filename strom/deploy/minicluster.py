"""``MiniCluster``: a JobManager in this process and TaskManagers as child processes (or threads).

The JobManager runs on an asyncio loop in a background thread (:class:`ActiveCluster`). Each
TaskManager is ``python -m strom.runtime.taskexecutor``; it reads the cluster secret and its launch
token from its stdin and exits when that pipe closes, so closing the cluster — normally, on Ctrl-C, on an
error, or because this process died — leaves no TaskManager behind. ``close()`` waits for them and kills
any that linger.

Like Flink's active ResourceManagers, the MiniCluster starts a replacement process for every TaskManager
that is lost while the cluster runs, so a job that restarts after a crash finds its slots again. The lost
process itself is killed (it may be frozen rather than dead) and reaped then, not when the cluster closes.
A thread per process waits for its end and reports it (:meth:`ActiveCluster._worker_terminated`): a process that
exits before its TaskManager registered is a start failure, replaced and counted against
``resourcemanager.start-worker.max-failure-rate``; the error names its exit code and its log.
Checkpoints go to ``execution.checkpointing.dir`` or, when that is unset, to a temporary directory the
MiniCluster removes when it closes. The TaskManagers' working directories (``tm_<resource id>``, where local
recovery keeps its copies) go below ``process.working-dir`` or, when that is unset, below a temporary directory
the MiniCluster removes when it closes; a replacement takes the lost TaskManager's resource id and so its working
directory.

With ``minicluster.taskmanager-mode: thread`` the TaskManagers are threads of this process instead
(:class:`~strom.deploy.task_manager_thread.TaskManagerThread`, as Flink's MiniCluster runs them in its JVM): the same
TaskExecutors over the same loopback RPC and network, without process starts — the fast test tier. A lost one is
asked to close (a thread cannot be killed), ``close()`` joins every thread (bounded) and there are no pids.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import replace
from typing import TYPE_CHECKING

from strom.config import (
    Configuration,
    CoreOptions,
)
from strom.deploy.active_cluster import ActiveCluster
from strom.deploy.prestarted_task_managers import (
    TASK_MANAGER_MODULE,
    THREAD,
    PrestartedTaskManagers,
    task_manager_environment,
    task_manager_mode,
)
from strom.runtime.metrics.job_metrics import job_manager_readings
from strom.runtime.metrics.prometheus import PrometheusReporter, Reading, prometheus_settings
from strom.runtime.taskexecutor.log_files import log_file_name
from strom.runtime.taskexecutor.task_manager_configuration import TaskManagerConfiguration

if TYPE_CHECKING:
    from strom.deploy.task_manager_thread import TaskManagerThread

__all__ = ["MiniCluster", "task_manager_arguments", "task_manager_command"]

log = logging.getLogger(__name__)

_THREAD_JOIN_TIMEOUT = 10.0  # seconds close() waits for the TaskManager threads, together


class MiniCluster(ActiveCluster):
    kind = "the MiniCluster"

    def __init__(
        self, config: Configuration, *, num_task_managers: int, prestarted: PrestartedTaskManagers | None = None
    ) -> None:
        super().__init__(config, num_task_managers=num_task_managers)
        #: ``minicluster.taskmanager-mode``: TaskManagers as child processes or as threads of this process
        self.task_manager_mode = task_manager_mode(config)
        #: TaskManager processes started before this cluster (the local executor's); it owns them from now on
        self._prestarted = prestarted
        self.threads: list[TaskManagerThread] = []
        self._thread_of: dict[str, TaskManagerThread] = {}  # tm id -> its thread (thread mode)
        self.processes: list[subprocess.Popen[bytes]] = []
        self._process_of: dict[str, subprocess.Popen[bytes]] = {}  # tm id -> its process
        self.prometheus = prometheus_settings(config)  # metrics.reporter.prom.*: None unless configured
        self._reporter: PrometheusReporter | None = None
        #: the URL of the JobManager's Prometheus endpoint (``""`` without a reporter)
        self.metrics_url = ""
        #: the TaskManagers' log directory: a new one per cluster (in ``env.log.dir``, else temporary)
        self.log_dir = ""
        self._temporary_log_dir = False
        #: the base of the TaskManagers' working directories (``process.working-dir``, else a temporary one)
        self.working_dir = ""
        self._temporary_working_dir = False

    def _create_working_dir(self) -> None:
        configured = self.task_manager_configuration.working_dir
        if configured:
            self.working_dir = configured
            return
        self.working_dir = tempfile.mkdtemp(prefix=f"strom-working-dir-{os.getpid()}-")
        self._temporary_working_dir = True

    def _task_manager_settings(self, tm_id: str, log_dir: str) -> TaskManagerConfiguration:
        """What TaskManager ``tm_id`` starts with: this cluster's log and working directories, its resource id."""
        return replace(
            self.task_manager_configuration,
            log_dir=log_dir,
            working_dir=self.working_dir,
            resource_id=self.resource_id_of(tm_id),
        )

    def _create_log_dir(self) -> None:
        if self.task_manager_mode == THREAD:
            return  # TaskManager threads write no log files: their records go to this process's logging
        configured = self.config.get(CoreOptions.FLINK_LOG_DIR)
        if configured:
            os.makedirs(configured, mode=0o700, exist_ok=True)
            prefix = f"minicluster-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}-"
            self.log_dir = tempfile.mkdtemp(prefix=prefix, dir=configured)
        else:
            self.log_dir = tempfile.mkdtemp(prefix=f"strom-logs-{os.getpid()}-")
            self._temporary_log_dir = True
        log.info("the MiniCluster's TaskManagers log into %s", self.log_dir)

    def start(self) -> MiniCluster:
        self._create_log_dir()
        self._create_working_dir()
        super().start()
        if self.prometheus is not None:
            self._reporter = PrometheusReporter(self._job_manager_readings, self.prometheus, owner="the JobManager")
            try:
                self.metrics_url = self._reporter.start()
            except BaseException:
                self.close()
                raise
        return self

    def close(self) -> None:
        self._close_reporter()
        if self._prestarted is not None:
            self._prestarted.close()  # those it did not take (a cluster whose start failed)
        try:
            super().close()
        finally:
            if self._temporary_log_dir and self.log_dir:
                shutil.rmtree(self.log_dir, ignore_errors=True)
            if self._temporary_working_dir and self.working_dir:
                shutil.rmtree(self.working_dir, ignore_errors=True)

    def _close_reporter(self) -> None:
        reporter, self._reporter = self._reporter, None
        if reporter is not None:
            reporter.close()

    def _job_manager_readings(self) -> list[Reading]:
        """A scrape of the JobManager's endpoint (its HTTP thread): read on the JobManager's loop."""
        if self.dispatcher is None:
            return []
        dispatcher = self.dispatcher

        async def read() -> list[Reading]:
            return job_manager_readings(dispatcher)

        return self.run(read(), timeout=10.0)

    def _launch_task_manager(self, tm_id: str, launch_token: str) -> None:
        if self.task_manager_mode == THREAD:
            self._launch_task_manager_thread(tm_id, launch_token)
            return
        assert self.dispatcher is not None
        settings = self._task_manager_settings(tm_id, self.log_dir)
        arguments = task_manager_arguments(
            settings, jm_address=self.dispatcher.address, tm_id=tm_id, parent_pid=os.getpid()
        )
        proc = self._prestarted.take(tm_id) if self._prestarted is not None else None
        lines = [self.secret.hex().encode(), launch_token.encode()]
        if settings.internal_ssl is not None:  # its passwords, never on the command line
            lines.append(json.dumps(settings.sensitive_properties()).encode())
        if proc is None:
            cmd = [sys.executable, "-m", TASK_MANAGER_MODULE, *arguments]
            # its own process group: a terminal's Ctrl-C reaches the client only, which stops the TaskManagers in order
            proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, env=task_manager_environment(), process_group=0)
            _write_lines(proc, lines)
        else:  # prestarted, its imports done (or under way): the rest of its command line first
            with contextlib.suppress(BrokenPipeError):  # it ended already: _watch reports it, as any start failure
                _write_lines(proc, [json.dumps(arguments).encode(), *lines])
        with self._lock:  # even when the cluster closed meanwhile: _stop_task_managers then waits for it
            self.processes.append(proc)
            self._process_of[tm_id] = proc
        threading.Thread(target=self._watch, args=(tm_id, proc), name=f"strom-watch-{tm_id}", daemon=True).start()

    def _launch_task_manager_thread(self, tm_id: str, launch_token: str) -> None:
        from strom.deploy.task_manager_thread import TaskManagerThread  # the TaskExecutor's runtime: thread mode only

        assert self.dispatcher is not None
        settings = self._task_manager_settings(tm_id, "")  # threads write no log files
        spec = settings.spec(tm_id=tm_id, launch_token=launch_token, jm_address=self.dispatcher.address)
        spec = replace(spec, owns_process=False)  # a thread: the TaskExecutor must not end this process

        def on_exit(diagnostics: str) -> None:
            self._worker_terminated(tm_id, diagnostics)

        host = TaskManagerThread(spec, self.secret, on_exit=on_exit)
        with self._lock:  # even when the cluster closed meanwhile: _stop_task_managers then stops it
            self.threads.append(host)
            self._thread_of[tm_id] = host
        host.start()

    def _watch(self, tm_id: str, proc: subprocess.Popen[bytes]) -> None:
        """TaskManager ``tm_id``'s own thread: wait for its process to end (reaping it) and report that."""
        code = proc.wait()
        how = f"exited with code {code}"
        if code < 0:
            with contextlib.suppress(ValueError):
                how = f"was killed by {signal.Signals(-code).name} (exit code {code})"
        self._worker_terminated(tm_id, f"(pid {proc.pid}) {how}; {self._log_of(tm_id)}")

    def _log_of(self, tm_id: str) -> str:
        """Where TaskManager ``tm_id``'s output is: its error output went to this process's standard error; its
        log file is named when it outlives the cluster (``env.log.dir``), else its last lines are quoted."""
        path = os.path.join(self.log_dir, log_file_name(tm_id))
        try:
            with open(path, "rb") as f:
                f.seek(max(0, os.fstat(f.fileno()).st_size - 2048))
                lines = f.read().decode(errors="replace").splitlines()[-5:]
        except OSError:
            return "its error output is above (it wrote no log file)"
        if not self._temporary_log_dir:
            return f"its error output is above, its log is {path}"
        tail = " | ".join(ln.strip() for ln in lines if ln.strip())
        return f"its error output is above; the end of its log: {tail or '(empty)'}"

    def _start_failure_hint(self) -> str:
        if self.task_manager_mode == THREAD:
            return (
                "a TaskManager thread runs the TaskExecutor in this process (minicluster.taskmanager-mode: thread): "
                "its error is in the message; 'process' starts them as child processes"
            )
        return (
            f"a TaskManager is `{sys.executable} -m strom.runtime.taskexecutor` with this process's sys.path as "
            "PYTHONPATH: check that it starts (its error output, its log); set env.log.dir to keep the logs"
        )

    def _release_task_manager(self, tm_id: str) -> None:
        """Kill the lost TaskManager's process (it may hang or be stopped, not dead) and reap it; a thread is asked
        to close and joined (bounded)."""
        with self._lock:
            host = self._thread_of.get(tm_id)
        if host is not None:
            host.stop()
            if not host.join(timeout=10):
                log.warning("the lost TaskManager %s did not stop within 10 s (its thread stays)", tm_id)
            return
        with self._lock:
            proc = self._process_of.get(tm_id)
        if proc is None or proc.poll() is not None:  # poll() reaps one that died by itself
            return
        log.info("killing the lost TaskManager %s (pid %d)", tm_id, proc.pid)
        proc.send_signal(signal.SIGKILL)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            log.warning("the lost TaskManager %s (pid %d) did not die within 10 s of SIGKILL", tm_id, proc.pid)

    def _stop_task_managers(self) -> None:
        self._stop_task_manager_threads()
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
                try:
                    p.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    log.warning("TaskManager pid %d did not die within 5 s of SIGKILL", p.pid)

    def _stop_task_manager_threads(self) -> None:
        """Ask every TaskManager thread to close, then join them (together at most ``_THREAD_JOIN_TIMEOUT``)."""
        with self._lock:
            threads = list(self.threads)
        for host in threads:
            host.stop()
        deadline = time.monotonic() + _THREAD_JOIN_TIMEOUT
        for host in threads:
            if not host.join(timeout=max(0.1, deadline - time.monotonic())):
                log.warning(
                    "TaskManager %s did not stop within %.0f s (its thread stays)", host.tm_id, _THREAD_JOIN_TIMEOUT
                )

    @property
    def task_manager_pids(self) -> list[int]:
        """Every TaskManager process the cluster started, replacements included (none in thread mode)."""
        with self._lock:
            return [p.pid for p in self.processes]

    @property
    def live_task_manager_pids(self) -> list[int]:
        """The TaskManager processes running now (lost ones not)."""
        with self._lock:
            return [p.pid for p in self.processes if p.poll() is None]


def _write_lines(proc: subprocess.Popen[bytes], lines: list[bytes]) -> None:
    assert proc.stdin is not None
    proc.stdin.write(b"".join(line + b"\n" for line in lines))
    proc.stdin.flush()


def task_manager_arguments(
    settings: TaskManagerConfiguration, *, jm_address: tuple[str, int], tm_id: str, parent_pid: int
) -> list[str]:
    """A TaskManager process's arguments: whom it joins and who it is as flags, its settings as Flink's ``-D``
    dynamic properties (parsed by ``strom.runtime.taskexecutor.__main__``); the secret and token go to its stdin."""
    host, port = jm_address
    identity = [f"--jm-host={host}", f"--jm-port={port}", f"--tm-id={tm_id}", f"--parent-pid={parent_pid}"]
    properties = [f"-D{item}" for item in settings.dynamic_properties()]
    return [*identity, *properties]


def task_manager_command(
    settings: TaskManagerConfiguration, *, jm_address: tuple[str, int], tm_id: str, parent_pid: int
) -> list[str]:
    """A TaskManager process's command line: ``python -m strom.runtime.taskexecutor`` and its arguments."""
    arguments = task_manager_arguments(settings, jm_address=jm_address, tm_id=tm_id, parent_pid=parent_pid)
    return [sys.executable, "-m", TASK_MANAGER_MODULE, *arguments]
