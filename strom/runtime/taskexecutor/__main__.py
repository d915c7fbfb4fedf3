"""TaskManager process entry point (Flink's ``TaskManagerRunner`` main).

    python -m strom.runtime.taskexecutor --jm-host=127.0.0.1 --jm-port=6123 --tm-id=tm-1 -Dheartbeat.interval=1s

Its settings arrive as ``-Dkey=value`` of the options they come from (Flink's dynamic properties), the launcher's
:class:`~strom.runtime.taskexecutor.task_manager_configuration.TaskManagerConfiguration` rendered once.

The cluster secret (hex) and the launch token arrive as the first two lines of standard input, never
on the command line or in the environment; with internal TLS on, a third line holds the JSON object of its
passwords (:meth:`TaskManagerConfiguration.sensitive_properties`). Standard input stays open for the life of
the process: when it closes — the parent MiniCluster exited, however it died — the TaskManager shuts down. On Linux the
kernel also sends it SIGKILL when its parent dies (``PR_SET_PDEATHSIG``). So no TaskManager outlives
its cluster.

A TaskManager the MiniCluster started before its JobManager ran (:mod:`strom.deploy.prestarted_task_managers`) has
only its id, its parent and ``--command-line-on-stdin`` on its command line: the rest of it comes as the first line of
standard input (a JSON list), before the secret; standard input closing first ends it (exit 0).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ctypes
import json
import logging
import os
import signal
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass

from strom.exceptions import ConfigurationError
from strom.runtime.taskexecutor import COMMAND_LINE_ON_STDIN
from strom.runtime.taskexecutor.runner import run_task_manager
from strom.runtime.taskexecutor.task_executor import TaskExecutor
from strom.runtime.taskexecutor.task_manager_configuration import TaskManagerConfiguration

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


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskManagerArguments:
    """A TaskManager process's command line: whom it joins, who it is, its settings."""

    jm_address: tuple[str, int]
    tm_id: str
    parent_pid: int
    configuration: TaskManagerConfiguration


def parse_arguments(argv: list[str] | None = None, sensitive: Mapping[str, str] | None = None) -> TaskManagerArguments:
    """The command line :func:`strom.deploy.minicluster.task_manager_command` builds: flags for whom the TaskManager
    joins and who it is, ``-Dkey=value`` for its settings (Flink's dynamic properties; options not given keep
    their defaults). Exits 2 on a malformed one."""
    p = argparse.ArgumentParser(prog="strom-taskmanager")
    p.add_argument("--jm-host", required=True)
    p.add_argument("--jm-port", type=int, required=True)
    p.add_argument("--tm-id", required=True)
    p.add_argument("--parent-pid", type=int, default=0)
    p.add_argument("-D", dest="define", action="append", default=[], metavar="KEY=VALUE", help="a setting's option")
    args = p.parse_args(argv)
    try:
        configuration = TaskManagerConfiguration.from_dynamic_properties(args.define, sensitive)
    except ConfigurationError as exc:
        p.error(str(exc))
    return TaskManagerArguments(
        jm_address=(args.jm_host, args.jm_port),
        tm_id=args.tm_id,
        parent_pid=args.parent_pid,
        configuration=configuration,
    )


def _read_stdin() -> tuple[bytes, str]:
    """The cluster secret and the launch token from standard input."""
    try:
        secret = bytes.fromhex(sys.stdin.buffer.readline().strip().decode())
        token = sys.stdin.buffer.readline().strip().decode()
    except ValueError:
        secret, token = b"", ""
    if not secret or not token:
        print("strom taskmanager: expected the cluster secret (hex) and a launch token on stdin", file=sys.stderr)
        sys.exit(2)
    return secret, token


def _read_passwords() -> dict[str, str]:
    """The internal TLS passwords from standard input's next line (a JSON object of options)."""
    try:
        passwords = json.loads(sys.stdin.buffer.readline())
    except ValueError:
        passwords = None
    if not isinstance(passwords, dict) or not all(isinstance(v, str) for v in passwords.values()):
        print("strom taskmanager: expected the internal TLS passwords (a JSON object) on stdin", file=sys.stderr)
        sys.exit(2)
    return {str(k): v for k, v in passwords.items()}


def _read_command_line() -> list[str]:
    """A prestarted TaskManager's command line (a JSON list of strings) from standard input's first line; its end
    before one arrived: the cluster did not need this process, which exits 0."""
    line = sys.stdin.buffer.readline()
    if not line:
        sys.exit(0)
    try:
        argv = json.loads(line)
    except ValueError:
        argv = None
    if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
        print("strom taskmanager: expected its command line (a JSON list of strings) on stdin", file=sys.stderr)
        sys.exit(2)
    return argv


def main(argv: list[str] | None = None) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C goes to the client, which stops us in order
    if COMMAND_LINE_ON_STDIN in (sys.argv[1:] if argv is None else argv):  # prestarted: its imports are done
        argv = _read_command_line()
    secret, token = _read_stdin()
    args = parse_arguments(argv)
    if args.configuration.internal_ssl is not None:  # its passwords follow on stdin
        args = parse_arguments(argv, _read_passwords())
    settings = args.configuration
    if args.parent_pid:
        _die_with_parent(args.parent_pid)
    logging.basicConfig(
        level=settings.log_level,
        format=f"%(asctime)s %(levelname)s [{args.tm_id}] %(name)s: %(message)s",
    )
    spec = settings.spec(tm_id=args.tm_id, launch_token=token, jm_address=args.jm_address)
    try:
        asyncio.run(run_task_manager(spec, secret, started=_started))
    except Exception as exc:
        print(f"strom taskmanager {args.tm_id}: could not run: {exc}", file=sys.stderr)
        os._exit(1)
    os._exit(0)  # task threads are daemons; do not wait for a stuck one


if __name__ == "__main__":
    main()
