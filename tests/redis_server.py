"""A real Redis server for the tests: Debian's ``redis-server`` (``scripts/ensure-redis.sh``) as a child process on a
free port of 127.0.0.1, without persistence. The fixture ``redis_server`` (tests/conftest.py) gives a fresh database
per test: one server per session, flushed after each test."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from typing import Any

from processes import free_port

__all__ = ["RedisServer"]


@dataclass
class RedisServer:
    directory: str
    port: int
    process: subprocess.Popen[bytes]

    @classmethod
    def start(cls, timeout_s: float = 30.0) -> RedisServer:
        exe = shutil.which("redis-server")
        if exe is None:
            raise RuntimeError("redis-server is not installed; run scripts/ensure-redis.sh (make test does)")
        directory = tempfile.mkdtemp(prefix="strom-redis-")
        port = free_port()
        command = [exe, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        command += ["--dir", directory]
        with open(f"{directory}/redis.log", "wb") as log:
            process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        server = cls(directory, port, process)
        deadline = time.monotonic() + timeout_s
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"redis-server exited with {process.returncode}; see {directory}/redis.log")
            try:
                server.client().ping()
                return server
            except Exception:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def options(self) -> Any:
        from strom.connectors.redis import RedisConnectionOptions

        return RedisConnectionOptions.from_url(self.url)

    def client(self) -> Any:
        import redis

        return redis.Redis(host="127.0.0.1", port=self.port, decode_responses=True, socket_timeout=10)

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        shutil.rmtree(self.directory, ignore_errors=True)
