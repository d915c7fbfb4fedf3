"""TaskManager process entry point (Flink's ``TaskManagerRunner`` main).

    python -m strom.runtime.taskexecutor --jm-host 127.0.0.1 --jm-port 6123 --tm-id tm-1 --slots 1

The cluster secret (hex) and the launch token arrive as the first two lines of standard input, never
on the command line or in the environment. Standard input stays open for the life of the process: when
it closes — the parent MiniCluster exited, however it died — the TaskManager shuts down. On Linux the
kernel also sends it SIGKILL when its parent dies (``PR_SET_PDEATHSIG``). So no TaskManager outlives
its cluster.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ctypes
import logging
import os
import signal
import sys
import threading

from strom.runtime.metrics.prometheus import PrometheusSettings
from strom.runtime.taskexecutor.runner import TaskManagerSpec, run_task_manager
from strom.runtime.taskexecutor.task_executor import TaskExecutor
from strom.runtime.taskexecutor.thread_switching import DEFAULT_SWITCH_INTERVAL_MS

log = logging.getLogger("strom.runtime.taskexecutor")


def _die_with_parent(parent_pid: int) -> None:
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass
    if os.getppid() != parent_pid:  # the parent died before prctl took effect
        os._exit(0)


def _watch_stdin(loop: asyncio.AbstractEventLoop, executor: TaskExecutor) -> None:
    try:
        while sys.stdin.buffer.read(1024):
            pass
    except (OSError, ValueError):
        pass
    with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(executor.shutdown)  # closes it as a task of its own task group


def _started(executor: TaskExecutor) -> None:
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, executor.shutdown)
    threading.Thread(target=_watch_stdin, args=(loop, executor), name="stdin-watch", daemon=True).start()


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="strom-taskmanager")
    p.add_argument("--jm-host", required=True)
    p.add_argument("--jm-port", type=int, required=True)
    p.add_argument("--tm-id", required=True)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--slots", type=int, default=1)
    p.add_argument("--parent-pid", type=int, default=0)
    p.add_argument("--heartbeat-interval", type=float, default=1.0)
    p.add_argument("--heartbeat-timeout", type=float, default=10.0)
    p.add_argument("--cancellation-timeout", type=float, default=30.0)
    p.add_argument("--max-frame-bytes", type=int, default=256 * 1024 * 1024)
    p.add_argument("--switch-interval-ms", type=float, default=DEFAULT_SWITCH_INTERVAL_MS)
    p.add_argument("--log-level", default="WARNING", help="the cluster's logging.level")
    p.add_argument("--prometheus-ports", default="", help="metrics.reporter.prom.port; empty: no reporter")
    p.add_argument("--prometheus-host", default="127.0.0.1", help="metrics.reporter.prom.host")
    p.add_argument("--log-dir", default="", help="env.log.dir: where taskmanager-<id>.log goes; empty: no log file")
    p.add_argument("--max-log-files", type=int, default=10, help="env.log.max")
    args = p.parse_args(argv)
    if args.parent_pid:
        _die_with_parent(args.parent_pid)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C goes to the client, which stops us in order
    logging.basicConfig(
        level=args.log_level,
        format=f"%(asctime)s %(levelname)s [{args.tm_id}] %(name)s: %(message)s",
    )
    try:
        secret = bytes.fromhex(sys.stdin.buffer.readline().strip().decode())
        token = sys.stdin.buffer.readline().strip().decode()
    except ValueError:
        secret, token = b"", ""
    if not secret or not token:
        print("strom taskmanager: expected the cluster secret (hex) and a launch token on stdin", file=sys.stderr)
        sys.exit(2)
    spec = TaskManagerSpec(
        tm_id=args.tm_id,
        launch_token=token,
        jm_address=(args.jm_host, args.jm_port),
        host=args.host,
        num_slots=args.slots,
        heartbeat_interval=args.heartbeat_interval,
        heartbeat_timeout=args.heartbeat_timeout,
        cancellation_timeout=args.cancellation_timeout,
        max_frame_bytes=args.max_frame_bytes,
        switch_interval_ms=args.switch_interval_ms,
        prometheus=(
            PrometheusSettings(ports=args.prometheus_ports, host=args.prometheus_host)
            if args.prometheus_ports
            else None
        ),
        log_dir=args.log_dir,
        max_log_files=args.max_log_files,
    )
    try:
        asyncio.run(run_task_manager(spec, secret, started=_started))
    except Exception as exc:
        print(f"strom taskmanager {args.tm_id}: could not run: {exc}", file=sys.stderr)
        os._exit(1)
    os._exit(0)  # task threads are daemons; do not wait for a stuck one


if __name__ == "__main__":
    main()
