"""The ``strom`` command (Flink's ``flink`` CLI and cluster scripts).

    strom run job.py                                   # on an embedded MiniCluster (default)
    strom run --target spark --spark-master 'local[4]' job.py
    strom cluster start --taskmanagers 2               # a standalone cluster in the background
    strom run -m 127.0.0.1:8081 -d -p 4 job.py         # submitted over REST; prints the job id
    strom list | info JOB | cancel JOB | stop JOB --savepoint-path DIR | savepoint JOB DIR
    strom jobmanager / strom taskmanager --jobmanager HOST:PORT   # foreground processes (containers, systemd)

Every command reads ``config.yaml`` of the configuration directory (``--conf-dir``, else ``$STROM_CONF_DIR``;
Flink's ``$FLINK_CONF_DIR/config.yaml``) and sets ``-D key=value`` over it; the processes ``strom cluster start``
starts read the same file. ``run``'s options become the defaults of every ``StreamExecutionEnvironment`` the
program creates (Flink's context environment), so the program itself needs no change to run on another target.

Exit codes: 0 success; 1 the job failed or was cancelled, or the cluster refused or could not be reached;
2 usage (unknown option, missing file, malformed value); 130 interrupted (Ctrl-C).
"""

from __future__ import annotations

import argparse
import datetime
import json
import logging
import os
import runpy
import sys
import traceback
from pathlib import Path
from typing import Any

from strom.api.environment import StreamExecutionEnvironment, make_importable
from strom.client import startup_split
from strom.client.executor_service_loader import DEFAULT_EXECUTOR_SERVICE_LOADER
from strom.client.job_client import interrupted_job
from strom.client.remote_executor import RemoteExecutor
from strom.client.spark_executor import SparkExecutor
from strom.client.startup_split import mark_program_start
from strom.config import (
    CheckpointingOptions,
    ClusterOptions,
    Configuration,
    CoreOptions,
    DeploymentOptions,
    PythonOptions,
    RestOptions,
    SparkOptions,
    TaskManagerOptions,
)
from strom.exceptions import ClusterError, ConfigurationError, JobExecutionError, StromError
from strom.global_configuration import CONF_FILENAME, ENV_CONF_DIR, load_configuration

__all__ = ["main"]

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, as a shell reports a command whose reader went away
_RUNNING_STATES = ("INITIALIZING", "CREATED", "RUNNING", "FAILING", "CANCELLING", "RESTARTING", "SUSPENDED")


class UsageError(Exception):
    """A malformed command line: exit code 2."""


def _defines(items: list[str] | None, conf: Configuration | None = None) -> Configuration:
    conf = conf or Configuration()
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep:
            raise UsageError(f"expected -D key=value; got '{item}'")
        try:
            conf.set_string(key.strip(), value.strip())
        except ConfigurationError as exc:
            raise UsageError(str(exc)) from None
    return conf


def _configuration(ns: argparse.Namespace) -> Configuration:
    """The configuration file's options (``--conf-dir``, else ``$STROM_CONF_DIR``: ``config.yaml``) with ``-D`` set
    over them (Flink's ``GlobalConfiguration.loadConfiguration(dynamicProperties)``) — those a ``strom cluster``
    command kept off this process's command line (passwords) included, once: they leave the environment here."""
    return load_configuration(getattr(ns, "conf_dir", None), _defines([*_hidden_defines(), *(ns.define or [])]))


def _hidden_defines() -> list[str]:
    from strom.config_security import SENSITIVE_DEFINES_ENV

    raw = os.environ.pop(SENSITIVE_DEFINES_ENV, "")
    try:
        items = json.loads(raw) if raw else []
    except ValueError:
        items = None
    if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
        raise UsageError(f"expected {SENSITIVE_DEFINES_ENV} to be a JSON list of key=value; got a malformed value")
    return items


def _host_port(text: str, what: str, default_port: int | None = None) -> tuple[str, int]:
    from strom.deploy.standalone.cluster_dir import parse_host_port

    try:
        return parse_host_port(text, what, default_port)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _directory(ns: argparse.Namespace) -> Any:
    from strom.deploy.standalone.cluster_dir import ClusterDirectory, default_cluster_dir

    return ClusterDirectory(default_cluster_dir(getattr(ns, "cluster_dir", None)))


# -- strom run ---------------------------------------------------------------------------------------------
def _run_configuration(ns: argparse.Namespace) -> Configuration:
    conf = _configuration(ns)
    if ns.target is not None:
        conf.set(DeploymentOptions.TARGET, ns.target)
    if ns.spark_master is not None:
        conf.set(SparkOptions.MASTER, ns.spark_master)
        if ns.target is None:
            conf.set(DeploymentOptions.TARGET, SparkExecutor.NAME)
    if ns.jobmanager is not None:
        host, port = _host_port(ns.jobmanager, "-m (the JobManager's REST address)", RestOptions.PORT.default)
        conf.set(RestOptions.ADDRESS, host)
        conf.set(RestOptions.PORT, port)
        conf.set(DeploymentOptions.TARGET, RemoteExecutor.NAME)
    remote = conf.get(DeploymentOptions.TARGET) == RemoteExecutor.NAME
    if ns.detached:
        if not remote:
            raise UsageError("expected -m HOST:PORT (or -D execution.target=remote) with -d; got an embedded run")
        conf.set(DeploymentOptions.ATTACHED, False)
    if ns.parallelism is not None:
        conf.set(CoreOptions.DEFAULT_PARALLELISM, ns.parallelism)
    if ns.from_savepoint is not None:
        conf.set(CheckpointingOptions.SAVEPOINT_PATH, ns.from_savepoint)
    if ns.allow_non_restored_state:
        conf.set(CheckpointingOptions.SAVEPOINT_IGNORE_UNCLAIMED_STATE, True)
    if ns.slots is not None:
        conf.set(TaskManagerOptions.NUM_TASK_SLOTS, ns.slots)
    _python_dependencies(ns, conf)
    if ns.taskmanagers is not None:
        spark = conf.get(DeploymentOptions.TARGET) == SparkExecutor.NAME
        conf.set(SparkOptions.TASK_MANAGERS if spark else ClusterOptions.NUM_TASK_MANAGERS, ns.taskmanagers)
    return conf


def _python_dependencies(ns: argparse.Namespace, conf: Configuration) -> None:
    """``-pyfs``, ``-pyreq`` and ``-pyarch`` as Flink's CLI: ``python.files``, ``python.requirements`` and
    ``python.archives`` (their paths made absolute: the client reads them when the job graph is made)."""

    def absolute(entry: str) -> str:
        path, sep, rest = entry.strip().partition("#")
        return os.path.abspath(os.path.expanduser(path)) + sep + rest

    if ns.py_files:
        conf.set(PythonOptions.PYTHON_FILES, ",".join(absolute(p) for p in ns.py_files.split(",") if p.strip()))
    if ns.py_requirements:
        path, sep, cache = ns.py_requirements.partition("#")
        conf.set(PythonOptions.PYTHON_REQUIREMENTS, absolute(path) + (sep + absolute(cache) if cache else ""))
    if ns.py_archives:
        conf.set(PythonOptions.PYTHON_ARCHIVES, ",".join(absolute(a) for a in ns.py_archives.split(",") if a.strip()))


def _run(ns: argparse.Namespace) -> int:
    if ns.python is not None:  # -py FILE [ARGS...]: what argparse took for the script is the program's first argument
        ns.args = [ns.script, *ns.args] if ns.script is not None else ns.args
        ns.script = ns.python
    if ns.script is None:
        raise UsageError("expected a Python program (strom run job.py, or -py job.py); got none")
    script = Path(ns.script)
    if not script.is_file():
        raise UsageError(f"expected a Python file; got '{ns.script}' (not found)")
    for value, name in ((ns.taskmanagers, "--taskmanagers"), (ns.slots, "--slots"), (ns.parallelism, "-p")):
        if value is not None and value < 1:
            raise UsageError(f"expected {name} >= 1; got {value}")
    conf = _run_configuration(ns)
    _run_credentials(ns)
    StreamExecutionEnvironment.set_context_configuration(conf)
    submitted = _watch_submissions(conf)
    try:  # the program's jobs run through the executor of its target: first what it needs in place for the program
        executor_factory = DEFAULT_EXECUTOR_SERVICE_LOADER.get_executor_factory(conf)
    except ConfigurationError:
        executor_factory = None  # an unknown target: the program's execute() refuses it, as without strom run
    if executor_factory is not None:
        try:
            executor_factory.prepare_program(conf, script.stem)
        except ClusterError as exc:
            print(f"strom run: {exc}", file=sys.stderr)
            return EXIT_FAILED
    sys.argv = [str(script), *ns.args]
    sys.path.insert(0, str(script.parent.resolve()))
    submitted_before = StreamExecutionEnvironment.submitted_jobs
    if ns.startup_split:
        _print_startup_split()
    mark_program_start()
    try:
        for path in (ns.py_files or "").split(","):
            if path.strip():
                make_importable(path.strip(), "-pyfs")
        runpy.run_path(str(script), run_name="__main__")
    except KeyboardInterrupt as interrupt:  # Ctrl-C: one line, not a traceback through strom's waits
        job = interrupted_job(interrupt)
        running = [c for c in submitted if c.attached and c._outcome is None]
        if running:
            for c in running:
                print(
                    f"strom run: interrupted; job {c.job_id} keeps running on the cluster (strom cancel "
                    f"{c.job_id} stops it)",
                    file=sys.stderr,
                )
        else:
            print(f"job {job} cancelled" if job is not None else "strom run: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED  # 128 + SIGINT, as a shell reports a command that Ctrl-C ended
    except JobExecutionError as failed:  # strom's message (with the user's traceback, if theirs); no frames
        _finish_progress(submitted)
        print(f"strom run: {failed}", file=sys.stderr)  # of strom's client waits unless logging at DEBUG
        if logging.getLogger("strom").isEnabledFor(logging.DEBUG):
            traceback.print_exception(failed, file=sys.stderr)
        return EXIT_FAILED
    except StromError as refused:  # the program is invalid, or a remote cluster refused it or could not be reached
        print(f"strom run: {refused}", file=sys.stderr)
        return EXIT_FAILED
    _finish_progress(submitted)
    if StreamExecutionEnvironment.submitted_jobs == submitted_before:
        print(
            "strom run: The program didn't contain a Flink job. Perhaps you forgot to call execute() on the execution "
            "environment.",
            file=sys.stderr,
        )
        return EXIT_FAILED
    return EXIT_OK


def _print_startup_split() -> None:
    """``--startup-split``: each job's start-up split (logged at INFO by its client) goes to standard error."""
    split_log = logging.getLogger(startup_split.__name__)
    split_log.setLevel(logging.INFO)
    split_log.propagate = False  # printed once, whatever the program's own logging does
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("strom run: %(message)s"))
    split_log.addHandler(handler)


def _run_credentials(ns: argparse.Namespace) -> None:
    """``--token`` and ``--cluster-dir`` reach the program's submissions as ``$STROM_REST_TOKEN`` and
    ``$STROM_CLUSTER_DIR`` do: the program runs in this process, whose environment its remote executor reads."""
    from strom.deploy.standalone.cluster_dir import CLUSTER_DIR_ENV
    from strom.deploy.standalone.rest_client import TOKEN_ENV

    if ns.token:
        os.environ[TOKEN_ENV] = ns.token
    if ns.cluster_dir:
        os.environ[CLUSTER_DIR_ENV] = str(Path(ns.cluster_dir).expanduser().absolute())


def _watch_submissions(conf: Configuration) -> list[Any]:
    """Print every remote job's id as it is submitted (Flink's line); attach progress to attached ones."""
    from strom.client.remote_executor import SUBMISSION_LISTENERS
    from strom.client.remote_job_client import RemoteJobClient
    from strom.deploy.standalone.progress import ProgressReporter

    submitted: list[RemoteJobClient] = []

    def on_submit(client: RemoteJobClient) -> None:
        submitted.append(client)
        print(f"Job has been submitted with JobID {client.job_id}", flush=True)
        if client.attached:
            progress = ProgressReporter()
            client.progress = progress
            client.log_sink = lambda records: _print_log_records(records, progress)

    SUBMISSION_LISTENERS.append(on_submit)
    return submitted


def _print_log_records(records: list[dict[str, Any]], progress: Any) -> None:
    """The job's log lines (``GET /jobs/<id>/log-records``) on standard error, as a TaskManager formats them."""
    for r in records:
        stamp = r.get("timestamp") or 0
        when = datetime.datetime.fromtimestamp(stamp / 1000).strftime("%Y-%m-%d %H:%M:%S,%f")[:-3] if stamp else ""
        where = f"[{r['taskmanager']}] " if r.get("taskmanager") else ""
        print(f"{when} {r.get('level')} {where}{r.get('logger')}: {r.get('message')}".lstrip(), file=sys.stderr)
    sys.stderr.flush()
    if getattr(progress, "live", False):  # the live block is drawn again below the lines, not over them
        progress._drawn = 0


def _finish_progress(submitted: list[Any]) -> None:
    for client in submitted:
        if client.attached and client._outcome is not None and client.progress is not None:
            client.progress.finish(client)


# -- client commands over REST -------------------------------------------------------------------------------
def _rest(ns: argparse.Namespace, *, token: bool = False) -> Any:
    """The REST client of a client command: ``-m`` (else the configuration's or the cluster directory's address),
    over HTTPS with the TLS options of ``-D`` (``security.ssl.rest.*``)."""
    from strom.client.remote_executor import high_availability_of, remote_rest_url
    from strom.deploy.standalone.rest_client import RestClusterClient, resolve_token, rest_url

    conf = _configuration(ns)
    high_availability = None
    if ns.jobmanager:
        host, port = _host_port(ns.jobmanager, "-m (the JobManager's REST address)", RestOptions.PORT.default)
        url = rest_url(host, port, conf)
    else:
        if ns.cluster_dir:
            os.environ["STROM_CLUSTER_DIR"] = ns.cluster_dir
        url = remote_rest_url(conf)
        high_availability = high_availability_of(conf)  # HA: calls follow the leader through a failover
    client = RestClusterClient.from_configuration(
        url, conf, token=resolve_token(ns.token, _directory(ns)) if token else ""
    )
    client.high_availability = high_availability
    return client


def _job_id(text: str) -> str:
    job = text.strip().lower()
    if len(job) != 32 or any(ch not in "0123456789abcdef" for ch in job):
        raise UsageError(f"expected a job id (32 hexadecimal characters); got '{text}'; hint: strom list")
    return job


def _list(ns: argparse.Namespace) -> int:
    jobs = _rest(ns).get("/jobs/overview")["jobs"]
    running = [j for j in jobs if j["state"] in _RUNNING_STATES]
    ended = [j for j in jobs if j["state"] not in _RUNNING_STATES]

    def show(title: str, rows: list[dict[str, Any]], empty: str) -> None:
        if not rows:
            print(empty)
            return
        print(f"------------------ {title} -------------------")
        for j in sorted(rows, key=lambda j: j.get("start-time", 0)):
            started = datetime.datetime.fromtimestamp(j.get("start-time", 0) / 1000).strftime("%d.%m.%Y %H:%M:%S")
            print(f"{started} : {j['jid']} : {j['name']} ({j['state']})")
        print("--------------------------------------------------------------")

    show("Running/Restarting Jobs", running, "No running jobs.")
    if ns.all:
        show("Terminated Jobs", ended, "No terminated jobs.")
    return EXIT_OK


def _info(ns: argparse.Namespace) -> int:
    print(json.dumps(_rest(ns).get(f"/jobs/{_job_id(ns.job)}/plan")["plan"], indent=2))
    return EXIT_OK


def _wait_ended(rest: Any, job_id: str) -> str:
    from strom.client.remote_job_client import RemoteJobClient

    client = RemoteJobClient(rest, job_id, "")
    return str(client._wait_outcome().get("application-status"))


def _cancel(ns: argparse.Namespace) -> int:
    rest = _rest(ns, token=True)
    job = _job_id(ns.job)
    rest.cancel(job)
    status = _wait_ended(rest, job)
    print(f"Cancelled job {job}." if status == "CANCELED" else f"Job {job} ended {status}.")
    return EXIT_OK if status == "CANCELED" else EXIT_FAILED


def _savepoint(ns: argparse.Namespace) -> int:
    rest = _rest(ns, token=True)
    job = _job_id(ns.job)
    print(f"Triggering savepoint for job {job}.", flush=True)
    location = rest.savepoint(job, os.path.abspath(ns.directory))
    print(f"Savepoint completed. Path: {location}")
    return EXIT_OK


def _stop(ns: argparse.Namespace) -> int:
    if not ns.savepoint_path:
        raise UsageError("expected --savepoint-path DIR (strom has no default savepoint directory); got none")
    rest = _rest(ns, token=True)
    job = _job_id(ns.job)
    print(f"Suspending job {job}.", flush=True)
    location = rest.savepoint(job, os.path.abspath(ns.savepoint_path), stop=True)
    _wait_ended(rest, job)
    print(f"Savepoint completed. Path: {location}")
    return EXIT_OK


# -- processes ----------------------------------------------------------------------------------------------
def _jobmanager(ns: argparse.Namespace) -> int:
    from strom.deploy.standalone.jobmanager import run_job_manager

    conf = _configuration(ns)
    return run_job_manager(
        conf, _directory(ns), secret_file=Path(ns.secret_file) if ns.secret_file else None, name=ns.name or ""
    )


def _taskmanager(ns: argparse.Namespace) -> int:
    from strom.deploy.standalone.taskmanager import run_standalone_task_manager

    conf = _configuration(ns)
    directory = _directory(ns)
    if ns.jobmanager_rpc:
        address = _host_port(ns.jobmanager_rpc, "--jobmanager (the JobManager's RPC address)")
    else:
        found = directory.read_addresses()
        if found is None:
            raise UsageError(
                f"expected --jobmanager HOST:PORT; got none (and no running JobManager in {directory.path})"
            )
        address = (found.rpc_host, found.rpc_port)
    secret = directory.read_secret(Path(ns.secret_file) if ns.secret_file else None)
    return run_standalone_task_manager(
        conf, address, secret, proposed_id=ns.tm_id or "", log_dir=str(directory.path / "log")
    )


def _cluster(ns: argparse.Namespace) -> int:
    from strom.deploy.standalone import cluster

    directory = _directory(ns)
    if ns.action == "start":
        if ns.taskmanagers < 0:
            raise UsageError(f"expected --taskmanagers >= 0; got {ns.taskmanagers}")
        if ns.jobmanagers < 1:
            raise UsageError(f"expected --jobmanagers >= 1; got {ns.jobmanagers}")
        conf = _configuration(ns)  # checked here, before any process starts
        from strom.runtime.net.ssl_utils import create_rest_server_ssl_context

        create_rest_server_ssl_context(conf)  # the REST server's TLS stores too
        a = cluster.start_cluster(
            directory, ns.taskmanagers, [f"-D{d}" for d in ns.define or []], config=conf, job_managers=ns.jobmanagers
        )
        standbys = f" and {ns.jobmanagers - 1} standby JobManager(s)" if ns.jobmanagers > 1 else ""
        print(
            f"strom cluster started: JobManager pid {a.pid}, REST {a.rest_url}, RPC {a.rpc_host}:{a.rpc_port}"
            f"{standbys}, {ns.taskmanagers} TaskManager(s); cluster directory {directory.path}"
        )
        return EXIT_OK
    if ns.action == "add-taskmanager":
        conf = _configuration(ns)
        names = cluster.add_task_managers(
            directory, ns.taskmanagers or 1, [f"-D{d}" for d in ns.define or []], config=conf
        )
        print(f"started {', '.join(names)}")
        return EXIT_OK
    if ns.action == "token":  # for Flink's own CLI: FLINK_REST_CLIENT_HEADERS="Authorization:Bearer <token>"
        from strom.deploy.standalone.rest_client import resolve_token

        token = resolve_token(None, directory)
        if not token:
            raise UsageError(
                f"expected a cluster directory holding the cluster's secret; got none in {directory.path}; hint: "
                "--cluster-dir DIR of the cluster (strom cluster start wrote it there), or $STROM_REST_TOKEN"
            )
        print(token)
        return EXIT_OK
    if ns.action == "stop":
        stopped = cluster.stop_cluster(directory)
        print(f"stopped {', '.join(stopped)}" if stopped else f"no cluster was running in {directory.path}")
        return EXIT_OK
    info = cluster.status(directory, _configuration(ns))
    print(json.dumps(info, indent=2))
    return EXIT_OK if info["overview"] is not None else EXIT_FAILED


# -- argument parsing -----------------------------------------------------------------------------------------
def _client_options(p: argparse.ArgumentParser, *, token: bool = True) -> None:
    p.add_argument(
        "-m",
        "--jobmanager",
        metavar="HOST:PORT",
        help="the JobManager's REST address (default: "
        "rest.address/rest.port, else the cluster directory's JobManager, else 127.0.0.1:8081)",
    )
    p.add_argument(
        "--cluster-dir", metavar="DIR", help="the cluster directory (default $STROM_CLUSTER_DIR or ~/.strom/cluster)"
    )
    if token:
        p.add_argument("--token", help="the REST token (default $STROM_REST_TOKEN, else from the cluster secret)")
    p.add_argument(
        "-D",
        dest="define",
        action="append",
        metavar="KEY=VALUE",
        help="a configuration option (e.g. security.ssl.rest.enabled=true, security.ssl.rest.truststore=FILE)",
    )
    _conf_dir_option(p)


def _conf_dir_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--conf-dir",
        metavar="DIR",
        help=f"the configuration directory, whose {CONF_FILENAME} -D overrides (default ${ENV_CONF_DIR}; else none)",
    )


def _parser() -> argparse.ArgumentParser:
    from strom import __version__

    parser = argparse.ArgumentParser(prog="strom", description="strom: Flink's runtime in Python")
    parser.add_argument("--version", action="version", version=f"strom {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run a DataStream program (a Python file)")
    _client_options(run)
    run.add_argument("-d", "--detached", action="store_true", help="return once the cluster accepted the job")
    run.add_argument("-p", "--parallelism", type=int, help="parallelism.default of the program")
    run.add_argument("-s", "--from-savepoint", metavar="PATH", help="start from this savepoint or checkpoint")
    run.add_argument("-n", "--allow-non-restored-state", action="store_true", help="drop state no operator claims")
    run.add_argument(
        "-t",
        "--target",
        choices=DEFAULT_EXECUTOR_SERVICE_LOADER.get_executor_names(),
        help="local: an embedded MiniCluster (default); spark; remote",
    )
    run.add_argument("-py", "--python", metavar="FILE", help="the program (Flink's spelling; or as the first argument)")
    run.add_argument(
        "-pyfs",
        "--pyFiles",
        dest="py_files",
        metavar="PATHS",
        help="comma-separated modules, packages or directories the program and its functions import (python.files)",
    )
    run.add_argument(
        "-pyreq",
        "--pyRequirements",
        dest="py_requirements",
        metavar="FILE[#DIR]",
        help="requirements.txt the TaskManagers install, optionally #a directory of the packages (python.requirements)",
    )
    run.add_argument(
        "-pyarch",
        "--pyArchives",
        dest="py_archives",
        metavar="ARCHIVES",
        help="comma-separated archive[#target_dir] extracted into the job's working directory (python.archives)",
    )
    run.add_argument("--spark-master", metavar="URL", help="Spark master (implies --target spark); default local[*]")
    run.add_argument("--taskmanagers", type=int, metavar="N", help="TaskManagers to start (default: as the job needs)")
    run.add_argument("--slots", type=int, metavar="S", help="slots per TaskManager")
    run.add_argument(
        "--startup-split",
        action="store_true",
        help="print where each job's time went: interpreter and imports, program, cluster, deploy, run, shutdown",
    )
    run.add_argument("script", nargs="?", help="the program (a Python file), unless -py names it")
    run.add_argument("args", nargs=argparse.REMAINDER, help="the program's arguments")
    lst = sub.add_parser("list", help="list running jobs (-a: all)")
    _client_options(lst, token=False)
    lst.add_argument("-a", "--all", action="store_true", help="also jobs that ended")
    for name, helptext in (("info", "show a job's plan"), ("cancel", "cancel a job")):
        p = sub.add_parser(name, help=helptext)
        _client_options(p, token=name != "info")
        p.add_argument("job", metavar="JOB_ID")
    stop = sub.add_parser("stop", help="stop a job with a savepoint")
    _client_options(stop)
    stop.add_argument("job", metavar="JOB_ID")
    stop.add_argument("--savepoint-path", "-p", metavar="DIR", help="where the savepoint goes")
    sp = sub.add_parser("savepoint", help="take a savepoint of a running job")
    _client_options(sp)
    sp.add_argument("job", metavar="JOB_ID")
    sp.add_argument("directory", metavar="DIR")
    jm = sub.add_parser("jobmanager", help="run a standalone JobManager in the foreground")
    tm = sub.add_parser("taskmanager", help="run a TaskManager in the foreground that joins a JobManager")
    tm.add_argument(
        "--jobmanager",
        dest="jobmanager_rpc",
        metavar="HOST:PORT",
        help="the JobManager's RPC address (default: the cluster directory's JobManager)",
    )
    tm.add_argument("--tm-id", help="the TaskManager's id (default: one the ResourceManager assigns, tm-<n>)")
    jm.add_argument(
        "--name", help="its log file's name, <env.log.dir>/<name>.log (default jobmanager; with HA jobmanager-<pid>)"
    )
    for p in (jm, tm):
        p.add_argument("--cluster-dir", metavar="DIR", help="default $STROM_CLUSTER_DIR or ~/.strom/cluster")
        p.add_argument("--secret-file", metavar="FILE", help="the cluster secret (default <cluster-dir>/secret)")
        p.add_argument("-D", dest="define", action="append", metavar="KEY=VALUE", help="a configuration option")
        _conf_dir_option(p)
    cl = sub.add_parser("cluster", help="a standalone cluster as background processes")
    cl.add_argument(
        "action",
        choices=("start", "add-taskmanager", "stop", "status", "token"),
        help="token: print the REST token (for Flink's CLI: FLINK_REST_CLIENT_HEADERS='Authorization:Bearer <token>')",
    )
    cl.add_argument("--taskmanagers", type=int, default=None, metavar="N", help="TaskManagers to start (start: 1)")
    cl.add_argument(
        "--jobmanagers", type=int, default=1, metavar="N", help="start: a leader and N-1 standbys (needs HA; default 1)"
    )
    cl.add_argument("--cluster-dir", metavar="DIR", help="default $STROM_CLUSTER_DIR or ~/.strom/cluster")
    cl.add_argument("-D", dest="define", action="append", metavar="KEY=VALUE", help="a configuration option")
    _conf_dir_option(cl)
    sub.add_parser("demo", help="run the word-count example")
    return parser


_COMMANDS = {
    "run": _run,
    "list": _list,
    "info": _info,
    "cancel": _cancel,
    "stop": _stop,
    "savepoint": _savepoint,
    "jobmanager": _jobmanager,
    "taskmanager": _taskmanager,
    "cluster": _cluster,
}


def main(argv: list[str] | None = None) -> int:
    ns = _parser().parse_args(argv)  # exits 2 on a usage error, as argparse does
    if ns.command == "demo":
        from strom.examples_demo import run_demo

        run_demo()
        return EXIT_OK
    if getattr(ns, "conf_dir", None):  # the processes and programs it starts read the same file
        os.environ[ENV_CONF_DIR] = os.path.abspath(os.path.expanduser(ns.conf_dir))
    if ns.command == "cluster" and ns.taskmanagers is None:
        ns.taskmanagers = 1 if ns.action == "start" else None
    try:
        code = _COMMANDS[ns.command](ns)
        sys.stdout.flush()  # here, where a reader that went away is caught, not in the interpreter's exit
        return code
    except BrokenPipeError:  # `strom cluster token | head`: the reader left; end quietly, as a SIGPIPE would
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # the interpreter's last flush must not fail again
        return EXIT_BROKEN_PIPE
    except UsageError as exc:
        print(f"strom {ns.command}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except ConfigurationError as exc:  # e.g. a TLS store that cannot be read (security.ssl.rest.*)
        print(f"strom {ns.command}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except ClusterError as exc:
        print(f"strom {ns.command}: {exc}", file=sys.stderr)
        return EXIT_FAILED


if __name__ == "__main__":
    sys.exit(main())
