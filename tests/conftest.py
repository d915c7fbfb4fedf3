"""Shared fixtures: every test leaves no TaskManager process behind."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import psutil
import pytest
from postgres_server import PostgresDatabase, PostgresServer
from processes import running_task_managers
from redis_server import RedisServer
from s3_server import MotoS3Server, S3Bucket, moto_s3_server, s3_bucket
from spark_cluster import SparkStandaloneCluster


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
