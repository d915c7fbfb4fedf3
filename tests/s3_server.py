"""A real S3-compatible server for the tests: moto's server mode in a child process on 127.0.0.1.

``MotoS3Server`` starts ``moto_server`` on a free port and waits until it answers; ``S3Bucket`` is one fresh
bucket on it with what a test hands to strom: ``storage_options`` for fsspec/s3fs (the sink's and source's
builders) and ``env`` for processes (TaskManagers inherit the client's environment). The fixtures live in
tests/conftest.py: ``s3_server`` gives a fresh bucket per test on one server per session, emptied and deleted
at the end of the test; the server process is stopped at the end of the session.

moto keeps everything in memory and checks no signature, so the credentials are placeholders.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from processes import free_port

__all__ = ["MotoS3Server", "S3Bucket", "moto_s3_server", "s3_bucket"]

ACCESS_KEY = "strom-test-key"
SECRET_KEY = "strom-test-secret"
REGION = "us-east-1"


@dataclass
class MotoS3Server:
    """A running ``moto_server`` child process; ``stop()`` ends it (and is idempotent)."""

    process: subprocess.Popen[bytes]
    endpoint_url: str
    log_path: str

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        with contextlib.suppress(OSError):
            os.unlink(self.log_path)


def _moto_command(port: int) -> list[str]:
    exe = shutil.which("moto_server", path=os.path.dirname(sys.executable)) or shutil.which("moto_server")
    if exe is not None:
        return [exe, "-H", "127.0.0.1", "-p", str(port)]
    return [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)]


def start_moto_server(log_dir: str, *, timeout_s: float = 30.0) -> MotoS3Server:
    """Starts moto's server on a free port of 127.0.0.1; retries on another port if that one was taken."""
    last = ""
    for _ in range(3):
        port = free_port()
        log_path = os.path.join(log_dir, f"moto-{port}.log")
        with open(log_path, "wb") as log:
            process = subprocess.Popen(
                _moto_command(port), stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
            )
        server = MotoS3Server(process=process, endpoint_url=f"http://127.0.0.1:{port}", log_path=log_path)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and process.poll() is None:
            try:
                with urllib.request.urlopen(f"{server.endpoint_url}/moto-api/", timeout=2):
                    return server
            except urllib.error.HTTPError:
                return server  # it answers
            except OSError:
                time.sleep(0.05)
        with open(log_path, "rb") as f:
            last = f.read().decode(errors="replace")[-2000:]
        server.stop()
    raise RuntimeError(f"moto_server did not start on 127.0.0.1 within {timeout_s} s; its output: {last}")


@dataclass
class S3Bucket:
    """One bucket of the server: ``url("out")`` is ``s3://<bucket>/out``."""

    server: MotoS3Server
    name: str
    storage_options: dict[str, Any] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)

    @property
    def endpoint_url(self) -> str:
        return self.server.endpoint_url

    def url(self, key: str = "") -> str:
        return f"s3://{self.name}/{key}" if key else f"s3://{self.name}"

    def filesystem(self) -> Any:
        """A fresh s3fs filesystem on the bucket's server (no instance or listing cache)."""
        import s3fs

        return s3fs.S3FileSystem(skip_instance_cache=True, use_listings_cache=False, **self.storage_options)

    def list_keys(self, prefix: str = "") -> list[str]:
        """Every object key under ``prefix`` (relative to the bucket), sorted."""
        fs = self.filesystem()
        root = f"{self.name}/{prefix}".rstrip("/")
        try:
            found = fs.find(root)
        except FileNotFoundError:
            return []
        return sorted(p[len(self.name) + 1 :] for p in found)

    def read(self, key: str) -> bytes:
        return bytes(self.filesystem().cat_file(f"{self.name}/{key}"))


def storage_options_of(endpoint_url: str) -> dict[str, Any]:
    return {
        "key": ACCESS_KEY,
        "secret": SECRET_KEY,
        "endpoint_url": endpoint_url,
    }


def env_of(endpoint_url: str) -> dict[str, str]:
    return {
        "AWS_ACCESS_KEY_ID": ACCESS_KEY,
        "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
        "AWS_ENDPOINT_URL": endpoint_url,
        "AWS_DEFAULT_REGION": REGION,
    }


@contextlib.contextmanager
def moto_s3_server(log_dir: str) -> Iterator[MotoS3Server]:
    server = start_moto_server(log_dir)
    try:
        yield server
    finally:
        server.stop()


@contextlib.contextmanager
def s3_bucket(server: MotoS3Server) -> Iterator[S3Bucket]:
    """A fresh bucket on ``server``; emptied and deleted afterwards."""
    import s3fs

    options = storage_options_of(server.endpoint_url)
    bucket = S3Bucket(server=server, name=f"strom-{uuid.uuid4().hex[:12]}", storage_options=options)
    bucket.env = env_of(server.endpoint_url)
    fs = s3fs.S3FileSystem(skip_instance_cache=True, use_listings_cache=False, **options)
    fs.mkdir(bucket.name)  # us-east-1: moto rejects that region as an explicit location constraint
    try:
        yield bucket
    finally:
        with contextlib.suppress(OSError):
            fs.rm(bucket.name, recursive=True)
        with contextlib.suppress(OSError):
            fs.rmdir(bucket.name)
