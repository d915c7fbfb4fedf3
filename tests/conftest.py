"""Shared fixtures, the test tiers' markers, and the MiniCluster mode of each test.

Markers are assigned here, by path and by fixture (:func:`pytest_collection_modifyitems`), so they cannot drift:

- ``unit`` / ``integration`` / ``e2e``: the directory (``tests/unit``, ``tests/integration``, ``tests/e2e``);
- ``processes``: needs TaskManager *processes* — every e2e test (CLI, standalone cluster, Spark), the files of
  :data:`PROCESS_FILES` (kills, pids, TaskManager logs, process lifecycle and start failures), and tests marked so
  by hand (they kill a TaskManager, count or measure its process by pid, or read its log or standard error);
- ``services``: uses a PostgreSQL, Redis, Kafka (noida-db) or S3 (moto) server (:data:`SERVICE_FIXTURES`);
- ``spark``: Apache Spark (pyspark and Java): integration and e2e ``test_spark_*`` files and the ``spark_standalone``
  fixture (unit tests of the Spark code start no Spark);
- ``browser``: headless Chromium (``test_dashboard.py``, ``test_service_done_when.py``, or by hand);
- ``slow``: long suites, by hand.

The MiniCluster mode (``minicluster.taskmanager-mode``): a unit or integration test not marked ``processes`` runs
its jobs on TaskManager *threads* (the option is the context configuration of every environment it makes, as
Flink's ``TestStreamEnvironment.setAsContext`` hands tests its MiniCluster), unless pytest runs with
``--taskmanager-mode=process``; a ``processes`` or ``spark`` test always gets processes. Every test leaves no
TaskManager process behind; a thread-mode test also no thread it started and no listening port, and it cannot signal
this process (whose pid its TaskManagers report) with ``os.kill``.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from hypothesis import settings
from kafka_broker import KafkaBroker
from postgres_server import PostgresDatabase, PostgresServer
from processes import running_task_managers
from redis_server import RedisServer
from s3_server import MotoS3Server, S3Bucket, moto_s3_server, s3_bucket
from spark_cluster import SparkStandaloneCluster

from strom import Configuration, StreamExecutionEnvironment
from strom.config import ClusterOptions

# No deadline per example: the suite runs on loaded 2-core machines, where one example may take 10x its usual time
# (a test's own timeout still bounds it). Tests that set their own settings keep them.
settings.register_profile("strom", deadline=None)
settings.load_profile("strom")

#: integration test files whose every test needs TaskManager processes (kills, pids, their logs, their lifecycle)
PROCESS_FILES = frozenset(
    {
        "test_process_lifecycle.py",
        "test_task_manager_logs.py",
        "test_task_manager_settings.py",  # the interpreter settings of TaskManager processes
        "test_task_manager_start_failures.py",
    }
)
#: fixtures of external servers (the ``services`` marker)
SERVICE_FIXTURES = frozenset(
    {"postgres_server", "postgres_db", "redis_server", "kafka_broker", "s3_server", "_moto_server"}
)
BROWSER_FILES = frozenset({"test_dashboard.py", "test_service_done_when.py"})
TIERS = ("unit", "integration", "e2e")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--taskmanager-mode",
        choices=("thread", "process"),
        default="thread",
        help="how the MiniCluster of a test not marked 'processes' hosts its TaskManagers (default: thread; "
        "'process' runs every test on TaskManager processes, as users get them)",
    )
    parser.addoption(
        "--pyflink-examples",
        metavar="DIR",
        default=None,
        help="an installed PyFlink's pyflink/examples directory: runs the tests marked 'pyflink' (PyFlink's own "
        "example programs on strom; `make check-pyflink`), which are deselected without it",
    )


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's, which reads the xdist_group markers given here
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("pyflink_examples") is None:  # PyFlink's own programs: only where PyFlink is installed
        deselected = [item for item in items if item.get_closest_marker("pyflink")]
        if deselected:
            config.hook.pytest_deselected(items=deselected)
            items[:] = [item for item in items if not item.get_closest_marker("pyflink")]
    for item in items:
        path = Path(str(item.path))
        parts = path.parts
        for tier in TIERS:
            if tier in parts:
                item.add_marker(tier)
        fixtures = set(getattr(item, "fixturenames", ()))
        if "e2e" in parts or path.name in PROCESS_FILES:
            item.add_marker("processes")
        if fixtures & SERVICE_FIXTURES:
            item.add_marker("services")
        if (path.name.startswith("test_spark_") and "unit" not in parts) or "spark_standalone" in fixtures:
            item.add_marker("spark")
        if path.name in BROWSER_FILES:
            item.add_marker("browser")
        for heavy in ("spark", "browser"):  # `make test` runs on two pytest-xdist workers (--dist loadgroup):
            if item.get_closest_marker(heavy):  # one JVM or one Chromium at a time, on one of them
                item.add_marker(pytest.mark.xdist_group(heavy))
                break


@pytest.hookimpl(trylast=True)  # after pytest-xdist's own hook, which appends "@<group>" to a grouped test's nodeid
def pytest_collection_finish(session: pytest.Session) -> None:
    """Under ``--dist loadgroup`` every grouped test's nodeid carries its group — else xdist would spread the Spark
    and browser tests over every worker (pytest 9 broke that silently: the pin in pyproject.toml)."""
    if not session.config.getoption("loadgroup", default=False):
        return
    ungrouped = [i.nodeid for i in session.items if i.get_closest_marker("xdist_group") and "@" not in i.nodeid]
    if ungrouped:
        raise pytest.UsageError(
            f"expected pytest-xdist to put the xdist_group tests on one worker each; got {len(ungrouped)} without "
            f"their group (e.g. {ungrouped[0]}); hint: pytest {pytest.__version__} with this pytest-xdist does not "
            "group: install the versions pyproject.toml's dev extra allows"
        )


@pytest.fixture(autouse=True)
def minicluster_mode(request: pytest.FixtureRequest) -> Iterator[str]:
    """The test's ``minicluster.taskmanager-mode`` (see the module's docstring); yields it."""
    node = request.node
    if (
        any(node.get_closest_marker(m) for m in ("processes", "spark"))
        or request.config.getoption("--taskmanager-mode") == "process"
    ):
        yield "process"
        return
    StreamExecutionEnvironment.set_context_configuration(
        Configuration({ClusterOptions.TASK_MANAGER_MODE.key: "thread"})
    )
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setattr(os, "kill", _kill_but_not_this_process)
    try:
        yield "thread"
    finally:
        monkeypatch.undo()
        StreamExecutionEnvironment.set_context_configuration(None)


_os_kill = os.kill


def _kill_but_not_this_process(pid: int, sig: int) -> None:
    """``os.kill`` in a thread-mode test: a TaskManager's pid there is this process's, so a test that would kill it
    fails instead of ending the whole run."""
    if pid == os.getpid() and sig not in (0, signal.SIGINT):
        raise AssertionError(
            f"expected a TaskManager process to send signal {sig} to; got this test process ({pid}), whose threads "
            "host the TaskManagers; hint: mark the test @pytest.mark.processes"
        )
    _os_kill(pid, sig)


def _listening_ports() -> set[int]:
    return {c.laddr.port for c in psutil.Process().net_connections("tcp") if c.status == psutil.CONN_LISTEN}


def _task_manager_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("strom-taskmanager-")]


@pytest.fixture(autouse=True)
def no_leaked_task_manager_threads(minicluster_mode: str) -> Iterator[None]:
    """A thread-mode test leaves no TaskManager thread, no thread it started and no listening port of this process
    behind (fsspec's process-wide I/O thread excepted; the servers of session fixtures are child processes)."""
    if minicluster_mode != "thread":
        yield
        return
    threads, ports = set(threading.enumerate()), _listening_ports()
    yield
    deadline = time.monotonic() + 5  # a closing pool's worker may take a moment to end
    while True:
        leaked = [t for t in threading.enumerate() if t not in threads and not _is_session_thread(t)]
        open_ports = _listening_ports() - ports
        if not (leaked or open_ports) or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert not _task_manager_threads(), f"TaskManager threads left running: {_task_manager_threads()}"
    assert not leaked, f"threads left running: {[t.name for t in leaked]}"
    assert not open_ports, f"ports left listening: {sorted(open_ports)}"


def _is_session_thread(thread: threading.Thread) -> bool:
    """Threads that outlive a test by design: fsspec's process-wide I/O loop (s3fs starts it on first use; a
    TaskManager process has its own) and the workers of that loop's default executor."""
    if thread.name == "fsspecIO":
        return True
    return thread.name.startswith("asyncio_") and any(t.name == "fsspecIO" for t in threading.enumerate())


@pytest.fixture(autouse=True)
def strom_log_level_restored() -> Iterator[None]:
    """A test whose environment sets ``logging.level`` gives this process's ``strom`` logger that level (as it
    does a user's client); the next test in the same worker starts with the level as it was."""
    log = logging.getLogger("strom")
    level = log.level
    yield
    log.setLevel(level)


@pytest.fixture(autouse=True)
def no_leaked_task_managers() -> Iterator[None]:
    yield
    leaked = running_task_managers()
    for p in leaked:
        with contextlib.suppress(psutil.Error):  # it ended meanwhile
            p.kill()
    psutil.wait_procs(leaked, timeout=10)  # reaps them (our descendants' children are their parents' to reap)
    assert not leaked, f"TaskManager processes left running: {[p.pid for p in leaked]}"


@pytest.fixture(scope="session")
def _moto_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MotoS3Server]:
    with moto_s3_server(str(tmp_path_factory.mktemp("moto"))) as server:
        yield server


@pytest.fixture
def s3_server(_moto_server: MotoS3Server, monkeypatch: pytest.MonkeyPatch) -> Iterator[S3Bucket]:
    """A fresh bucket on a real S3-compatible server (moto, a child process on 127.0.0.1): hand
    ``s3_server.storage_options`` to connectors; its credentials and endpoint are also in this process's
    environment for the test (TaskManagers inherit it). The bucket is emptied and deleted afterwards."""
    with s3_bucket(_moto_server) as bucket:
        for name, value in bucket.env.items():
            monkeypatch.setenv(name, value)
        yield bucket


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A real PostgreSQL server (Debian's binaries, ``initdb`` into a temporary directory) on 127.0.0.1, one per
    session, started on first use and removed at the end."""
    server = PostgresServer.start()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def postgres_db(postgres_server: PostgresServer) -> Iterator[PostgresDatabase]:
    """A fresh database on the test server (``.url``, ``.connection_options()``, ``.query(...)``); dropped after
    the test, with the server started again if the test stopped it."""
    db = postgres_server.create_database()
    try:
        yield db
    finally:
        if postgres_server.process is None:
            postgres_server.start_again()
        db.drop()


@pytest.fixture(scope="session")
def _redis_server() -> Iterator[RedisServer]:
    server = RedisServer.start()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def redis_server(_redis_server: RedisServer) -> Iterator[RedisServer]:
    """A real redis-server on 127.0.0.1 (one per session; ``.options()`` for the connector, ``.client()`` for the
    test's checks), flushed after each test."""
    yield _redis_server
    with _redis_server.client() as client:
        client.flushall()


@pytest.fixture(scope="session")
def kafka_broker() -> Iterator[KafkaBroker]:
    """A Kafka-protocol broker (noida-db, tests/kafka_broker.py) on 127.0.0.1, one per session: ``.bootstrap_servers``,
    ``.create_topic(name, partitions)``, ``.produce(...)``, ``.read_committed(topic)``; tests use topics of their own
    names. A test that stops it (``.stop()``) starts it again (``.start_again()``) before it ends."""
    broker = KafkaBroker.start()
    try:
        yield broker
    finally:
        broker.close()


@pytest.fixture(scope="session")
def spark_standalone() -> Iterator[SparkStandaloneCluster]:
    """A real Spark standalone cluster on 127.0.0.1 (tests/spark_cluster.py): a master and two workers of 3 cores
    and 2g each, separate JVM processes from pyspark's launcher, one per session, started on first use (~10 s).
    ``.master_url`` (``spark://127.0.0.1:PORT``), ``.spark_settings()`` (the ``spark.*`` keys of an application:
    2 executors × 2 cores by default, so that a second application still gets a core per worker),
    ``.alive_workers()``, ``.worker_pids()``, ``.worker_of(pid)``, ``.kill_worker(i)``. A test that kills a worker
    calls ``.restart_killed_workers()`` before it ends (in a ``finally``), so later tests find two workers."""
    cluster = SparkStandaloneCluster.start()
    try:
        yield cluster
    finally:
        cluster.close()


@pytest.fixture
def pyflink_examples(request: pytest.FixtureRequest) -> Path:
    """``--pyflink-examples DIR``: an installed PyFlink's ``pyflink/examples`` (its own programs, the reference for
    what a PyFlink program prints; never a dependency of the suite). A wrong directory fails the test."""
    configured = request.config.getoption("pyflink_examples")
    where = Path(str(configured))
    assert where.is_dir(), f"expected --pyflink-examples to name PyFlink's pyflink/examples directory; got {where}"
    return where
