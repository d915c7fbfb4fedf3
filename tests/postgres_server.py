"""A real PostgreSQL server for the tests: Debian's ``postgres`` binary, ``initdb`` into a temporary directory,
listening on a free port of 127.0.0.1 (installed by ``scripts/ensure-postgres.sh``).

``PostgresServer.start`` creates the cluster (superuser ``strom``, trust authentication on loopback: a test
server) with ``max_prepared_transactions`` for the exactly-once sink, and runs ``postgres`` as a child process;
``stop()``/``start_again()`` restart it on the same port and data (prepared transactions survive, as on a real
server); ``close()`` stops it and removes its directory. As root, the server runs as the ``postgres`` user (it
refuses to run as root). The fixtures live in tests/conftest.py: ``postgres_server`` (one per session, started on
first use) and ``postgres_db`` (a fresh database per test, dropped after it).
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from processes import free_port

__all__ = ["PostgresDatabase", "PostgresServer"]

SUPERUSER = "strom"


def _bin(name: str) -> str:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), key=lambda p: int(p.split("/")[4]))
    if found:
        return found[-1]
    exe = shutil.which(name)
    if exe is None:
        raise RuntimeError(f"PostgreSQL's {name} is not installed; run scripts/ensure-postgres.sh (make test does)")
    return exe


@dataclass
class PostgresServer:
    directory: str
    port: int
    process: subprocess.Popen[bytes] | None = None
    _user: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def start(cls) -> PostgresServer:
        directory = tempfile.mkdtemp(prefix="strom-postgres-")
        user: dict[str, Any] = {}
        if os.geteuid() == 0:  # postgres refuses to run as root
            pw = pwd.getpwnam("postgres")
            os.chown(directory, pw.pw_uid, pw.pw_gid)
            user = {"user": pw.pw_uid, "group": pw.pw_gid, "extra_groups": []}
        data = os.path.join(directory, "data")
        subprocess.run(
            [_bin("initdb"), "-D", data, "-U", SUPERUSER, "--auth=trust", "-E", "UTF8", "--no-sync"],
            check=True,
            capture_output=True,
            timeout=120,
            **user,
        )
        server = cls(directory, free_port(), _user=user)
        with open(os.path.join(data, "postgresql.conf"), "a") as conf:
            conf.write(
                "\nlisten_addresses = '127.0.0.1'\n"
                f"unix_socket_directories = '{directory}'\n"
                "max_prepared_transactions = 64\n"
                "max_connections = 100\n"
                "fsync = off\n"
                "synchronous_commit = off\n"
            )
        server.start_again()
        return server

    @property
    def data(self) -> str:
        return os.path.join(self.directory, "data")

    def start_again(self, timeout_s: float = 60.0) -> None:
        """Start ``postgres`` on this server's port and data and wait until it accepts connections."""
        log = open(os.path.join(self.directory, "postgres.log"), "ab")  # noqa: SIM115 (kept by the child)
        self.process = subprocess.Popen(
            [_bin("postgres"), "-D", self.data, "-p", str(self.port)],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            **self._user,
        )
        log.close()
        deadline = time.monotonic() + timeout_s
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"postgres exited with {self.process.returncode}; see {self.directory}/postgres.log")
            try:
                self.connect("postgres").close()
                return
            except Exception:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    def stop(self) -> None:
        """Fast shutdown (SIGINT), as ``pg_ctl stop -m fast``: open transactions are aborted, prepared ones kept."""
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            process.send_signal(2)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.directory, ignore_errors=True)

    def connect(self, dbname: str) -> Any:
        import psycopg

        return psycopg.connect(
            host="127.0.0.1", port=self.port, user=SUPERUSER, dbname=dbname, autocommit=True, connect_timeout=5
        )

    def url(self, dbname: str) -> str:
        return f"jdbc:postgresql://127.0.0.1:{self.port}/{dbname}"

    def create_database(self) -> PostgresDatabase:
        name = "t_" + uuid.uuid4().hex[:12]
        with self.connect("postgres") as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return PostgresDatabase(self, name)


@dataclass
class PostgresDatabase:
    """One database of the test server: ``url`` for the JDBC connector, ``connect()`` for the test's checks."""

    server: PostgresServer
    name: str

    @property
    def url(self) -> str:
        return self.server.url(self.name)

    def connection_options(self) -> Any:
        from strom.connectors.jdbc import JdbcConnectionOptions

        return JdbcConnectionOptions.JdbcConnectionOptionsBuilder().with_url(self.url).with_user_name(SUPERUSER).build()

    def connect(self) -> Any:
        return self.server.connect(self.name)

    def query(self, sql: str, params: Any = None) -> list[tuple[Any, ...]]:
        """Rows of a query; ``[]`` for a statement without rows (CREATE TABLE, ...)."""
        with self.connect() as conn:
            cur = conn.execute(sql, params)
            return list(cur.fetchall()) if cur.description is not None else []

    def prepared_transactions(self) -> list[str]:
        return [r[0] for r in self.query("SELECT gid FROM pg_prepared_xacts WHERE database = current_database()")]

    def drop(self) -> None:
        if self.server.process is None:
            return
        with contextlib.suppress(Exception), self.server.connect("postgres") as conn:
            for gid in self.prepared_transactions():
                with self.server.connect(self.name) as own:
                    own.execute(f"ROLLBACK PREPARED '{gid}'")
            conn.execute(f"DROP DATABASE IF EXISTS {self.name} WITH (FORCE)")
