"""``RestClusterClient``: a JobManager's REST API from the client side (Flink's ``RestClusterClient``).

Plain ``urllib`` and JSON — no event loop — so the CLI and a program's ``execute()`` use it from any thread.
Mutating calls carry ``Authorization: Bearer <token>``; :func:`resolve_token` finds the token the way ``strom``'s
commands do: ``--token``, else ``$STROM_REST_TOKEN``, else derived from the cluster directory's secret.
"""

from __future__ import annotations

import json
import os
import secrets
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

from strom.deploy.standalone.cluster_dir import ClusterDirectory
from strom.exceptions import ClusterError

__all__ = ["TOKEN_ENV", "RestClientError", "RestClusterClient", "resolve_token"]

TOKEN_ENV = "STROM_REST_TOKEN"


class RestClientError(ClusterError):
    """A REST call the JobManager refused; ``status`` is the HTTP status (0: no answer at all)."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


def resolve_token(explicit: str | None, directory: ClusterDirectory | None) -> str:
    """``explicit``, else ``$STROM_REST_TOKEN``, else the token of the cluster directory's secret, else ``""``."""
    if explicit:
        return explicit
    env = os.environ.get(TOKEN_ENV, "")
    if env:
        return env
    if directory is not None and directory.secret_file.exists():
        from strom.web.auth import rest_token

        return rest_token(directory.read_secret())
    return ""


def _multipart(fields: list[tuple[str, str, bytes, str]]) -> tuple[bytes, str]:
    """A ``multipart/form-data`` body of (name, filename, data, content type) parts and its content type."""
    boundary = "strom-" + secrets.token_hex(16)
    out = bytearray()
    for name, filename, data, content_type in fields:
        out += f"--{boundary}\r\n".encode()
        disposition = f'form-data; name="{name}"' + (f'; filename="{filename}"' if filename else "")
        out += f"Content-Disposition: {disposition}\r\nContent-Type: {content_type}\r\n\r\n".encode()
        out += data + b"\r\n"
    out += f"--{boundary}--\r\n".encode()
    return bytes(out), f"multipart/form-data; boundary={boundary}"


class RestClusterClient:
    def __init__(self, base_url: str, *, token: str = "", timeout: float = 30.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.timeout = timeout

    # -- transport ---------------------------------------------------------------------------------------
    def request(self, method: str, path: str, body: bytes | None = None, content_type: str = "") -> Any:
        headers = {"Accept": "application/json"}
        if content_type:
            headers["Content-Type"] = content_type
        if method not in ("GET", "HEAD") and self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        req = urllib.request.Request(self.base_url + path, data=body, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                raw = resp.read()
        except urllib.error.HTTPError as exc:
            text = exc.read().decode(errors="replace")
            try:
                errors = json.loads(text).get("errors") or [text]
            except (ValueError, AttributeError):
                errors = [text]
            hint = ""
            if exc.code == 401:
                hint = f"; hint: pass --token, set ${TOKEN_ENV}, or use the cluster directory holding its secret"
            raise RestClientError(
                f"{method} {path} refused with HTTP {exc.code}: {'; '.join(map(str, errors))}{hint}", exc.code
            ) from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise RestClientError(
                f"expected a strom JobManager's REST API at {self.base_url}; got {reason}; hint: start one (strom "
                "cluster start / strom jobmanager) or point -m HOST:PORT (rest.address / rest.port) at it",
                0,
            ) from None
        return json.loads(raw) if raw else {}

    def get(self, path: str) -> Any:
        return self.request("GET", path)

    def send_json(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        return self.request(method, path, data, "application/json" if data is not None else "")

    # -- Flink's calls -----------------------------------------------------------------------------------
    def submit_job(self, job_graph: bytes, python_files: bytes) -> str:
        """``POST /jobs`` (Flink's ``JobSubmitHandler``); returns the job id."""
        from strom.web.submission import PYTHON_FILES_ENTRY

        request: dict[str, Any] = {"jobGraphFileName": "job.graph", "jobJarFileNames": [], "jobArtifactFileNames": []}
        parts = [("file_0", "job.graph", job_graph, "application/octet-stream")]
        if python_files:
            request["jobArtifactFileNames"].append({"entryName": PYTHON_FILES_ENTRY, "fileName": "python_files.zip"})
            parts.append(("file_1", "python_files.zip", python_files, "application/zip"))
        parts.insert(0, ("request", "", json.dumps(request).encode(), "application/json"))
        body, content_type = _multipart(parts)
        answer = self.request("POST", "/jobs", body, content_type)
        return str(answer["jobUrl"]).rsplit("/", 1)[-1]

    def execution_result(self, job_id: str) -> dict[str, Any] | None:
        """``job-execution-result`` once the job ended, else None."""
        answer = self.get(f"/jobs/{job_id}/execution-result")
        if answer.get("status", {}).get("id") != "COMPLETED":
            return None
        result: dict[str, Any] = answer["job-execution-result"]
        return result

    def cancel(self, job_id: str) -> None:
        self.request("PATCH", f"/jobs/{job_id}?mode=cancel")

    def trigger_savepoint(self, job_id: str, target_directory: str, *, cancel_job: bool = False) -> str:
        body = {"target-directory": target_directory, "cancel-job": cancel_job}
        return str(self.send_json("POST", f"/jobs/{job_id}/savepoints", body)["request-id"])

    def stop_with_savepoint(self, job_id: str, target_directory: str) -> str:
        body = {"targetDirectory": target_directory, "drain": False}
        return str(self.send_json("POST", f"/jobs/{job_id}/stop", body)["request-id"])

    def wait_savepoint(
        self, job_id: str, trigger_id: str, *, timeout: float = 600.0, poll: Callable[[], None] | None = None
    ) -> str:
        """Wait for a savepoint operation; its location, or :class:`RestClientError` with its failure."""
        deadline = time.monotonic() + timeout
        delay = 0.05
        while True:
            answer = self.get(f"/jobs/{job_id}/savepoints/{trigger_id}")
            if answer.get("status", {}).get("id") == "COMPLETED":
                operation = answer.get("operation", {})
                if "location" in operation:
                    return str(operation["location"])
                cause = operation.get("failure-cause", {})
                raise RestClientError(
                    f"the savepoint of job {job_id} failed: {cause.get('stack-trace') or cause.get('class')}", 0
                )
            if time.monotonic() > deadline:
                raise RestClientError(
                    f"expected the savepoint of job {job_id} within {timeout:.0f} s; it is still in progress "
                    f"(trigger {trigger_id}); hint: GET /jobs/{job_id}/savepoints/{trigger_id}",
                    0,
                )
            if poll is not None:
                poll()
            time.sleep(delay)
            delay = min(delay * 2, 0.5)
