"""``RestClusterClient``: a JobManager's REST API from the client side (Flink's ``RestClusterClient``).

Plain ``urllib`` and JSON — no event loop — so the CLI and a program's ``execute()`` use it from any thread.
Mutating calls carry ``Authorization: Bearer <token>``; :func:`resolve_token` finds the token the way ``strom``'s
commands do: ``--token``, else ``$STROM_REST_TOKEN``, else derived from the cluster directory's secret.

With ``security.ssl.rest.enabled`` in the client's configuration (:meth:`RestClusterClient.from_configuration`) it
calls ``https://`` with the truststore and, with ``security.ssl.rest.authentication-enabled``, presents the keystore
as client certificate. A failed TLS handshake is a :class:`RestClientError` saying what failed, against which URL,
and which option to set.

**Following the leader** (Flink's ``RestClusterClient`` with a ``LeaderRetrievalService``): with
:attr:`RestClusterClient.high_availability` set, a call that gets no answer or a 503 (a new leader still recovering
its jobs) reads the leader from the lease again and retries there, for up to :data:`FAILOVER_TIMEOUT_S` plus four
lease durations. So a submission, a cancel or a savepoint started while the leader dies lands on the next one: a
submission the old leader stored and the new one recovered answers 409 on the retry and counts as submitted (the
job id is the client's), and a savepoint whose trigger the old leader took with it is triggered again on the new
leader.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import secrets
import ssl
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

from strom.config import Configuration, SecurityOptions
from strom.deploy.standalone.cluster_dir import ClusterDirectory
from strom.exceptions import ClusterError
from strom.runtime.net.ssl_utils import (
    create_rest_client_ssl_context,
    is_rest_ssl_authentication_enabled,
    is_rest_ssl_enabled,
)

__all__ = ["FAILOVER_TIMEOUT_S", "TOKEN_ENV", "RestClientError", "RestClusterClient", "resolve_token", "rest_url"]

TOKEN_ENV = "STROM_REST_TOKEN"
#: how long a client with HA settings waits for a leader that answers, plus four lease durations
FAILOVER_TIMEOUT_S = 120.0

log = logging.getLogger(__name__)


class RestClientError(ClusterError):
    """A REST call the JobManager refused; ``status`` is the HTTP status (0: no answer at all). ``transient``: another
    JobManager may answer (no answer, or 503 from a leader still recovering its jobs) — not a TLS handshake this
    client's configuration fails, which retrying cannot fix."""

    def __init__(self, message: str, status: int, *, transient: bool | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.transient = status in (0, 503) if transient is None else transient


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


def rest_url(host: str, port: int, config: Configuration) -> str:
    """``http(s)://host:port`` of a REST API: ``https`` with ``security.ssl.rest.enabled`` in ``config``."""
    scheme = "https" if is_rest_ssl_enabled(config) else "http"
    return f"{scheme}://[{host}]:{port}" if ":" in host else f"{scheme}://{host}:{port}"


_TRUST = SecurityOptions.SSL_REST_TRUSTSTORE.key
_KEYSTORE = SecurityOptions.SSL_REST_KEYSTORE.key
_ENABLED = SecurityOptions.SSL_REST_ENABLED.key
_MUTUAL = SecurityOptions.SSL_REST_AUTHENTICATION_ENABLED.key


def _tls_failure(cause: OSError, url: str, truststore: str, keystore: str) -> str | None:
    """What a TLS failure against ``url`` means and which option fixes it; None if ``cause`` is no TLS failure.
    ``truststore`` / ``keystore``: the client's files ("" for none)."""
    host = url.split("://", 1)[-1].rsplit(":", 1)[0].strip("[]")
    if isinstance(cause, ssl.SSLCertVerificationError):
        if cause.verify_code == 62:  # X509_V_ERR_HOSTNAME_MISMATCH
            return (
                f"expected the JobManager's TLS certificate at {url} to name '{host}'; got {cause.verify_message}; "
                "hint: reach it by a name or address among the certificate's subject alternative names (-m, "
                "rest.address), or give the JobManager a certificate that names this one"
            )
        trusted = f"the truststore {truststore} ({_TRUST})" if truststore else "the system's CA certificates"
        return (
            f"expected a TLS certificate from the JobManager at {url} signed by a CA in {trusted}; got "
            f"{cause.verify_message}; hint: set {_ENABLED}: true and {_TRUST} (a PKCS#12 or PEM file with the CA "
            f"that signed the server's certificate) on this client, e.g. -D {_TRUST}=ca.pem"
        )
    if url.startswith("https://") and isinstance(cause, ConnectionResetError | BrokenPipeError | ssl.SSLEOFError):
        # the server ended the connection in or right after the handshake: mutual TLS did not accept this client
        if keystore:
            hint = f"its truststore must hold the CA that signed this client's certificate ({_KEYSTORE} {keystore})"
        else:
            hint = f"it may require a client certificate (mutual TLS): set {_MUTUAL}: true and {_KEYSTORE} here"
        return f"expected the JobManager at {url} to accept this client's TLS connection; got {cause}; hint: {hint}"
    if not isinstance(cause, ssl.SSLError):
        return None
    text = str(cause)
    if "CERTIFICATE_REQUIRED" in text.upper() or "certificate required" in text:
        hint = f"it requires a client certificate: set {_MUTUAL}: true and {_KEYSTORE} on this client"
    elif any(s in text.upper() for s in ("UNKNOWN_CA", "BAD_CERTIFICATE", "CERTIFICATE_UNKNOWN")):
        hint = f"it does not trust this client's certificate: {_KEYSTORE} must hold one its truststore's CA signed"
    elif "WRONG_VERSION_NUMBER" in text or "RECORD_LAYER" in text.upper():
        hint = f"it serves plain HTTP: call http://, or set {_ENABLED}: false on this client"
    else:
        hint = f"check {_ENABLED}, {_TRUST} and {_KEYSTORE} on both sides"
    return f"expected a TLS connection to the JobManager at {url}; got {text}; hint: {hint}"


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
    def __init__(
        self, base_url: str, *, token: str = "", timeout: float = 30.0, ssl_context: ssl.SSLContext | None = None
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.timeout = timeout
        #: for ``https://`` (``security.ssl.rest.*``); None: the system's CA certificates
        self.ssl_context = ssl_context
        #: the files behind :attr:`ssl_context` ("": none), for error messages
        self.truststore = ""
        self.keystore = ""
        #: HA (a ``HighAvailabilitySettings``): follow the leader the lease names when this one does not answer
        self.high_availability: Any = None
        #: how many times this client moved to a new leader
        self.failovers = 0

    @classmethod
    def from_configuration(
        cls, base_url: str, config: Configuration, *, token: str = "", timeout: float = 30.0
    ) -> RestClusterClient:
        """A client with the TLS settings (``security.ssl.rest.*``) of ``config``."""
        client = cls(base_url, token=token, timeout=timeout, ssl_context=create_rest_client_ssl_context(config))
        if client.ssl_context is not None:
            client.truststore = config.get(SecurityOptions.SSL_REST_TRUSTSTORE)
            if is_rest_ssl_authentication_enabled(config):
                client.keystore = config.get(SecurityOptions.SSL_REST_KEYSTORE)
        return client

    # -- transport ---------------------------------------------------------------------------------------
    def request(self, method: str, path: str, body: bytes | None = None, content_type: str = "") -> Any:
        """One call; with :attr:`high_availability`, retried at the current leader while none answers."""
        since: float | None = None
        while True:
            try:
                return self._request_once(method, path, body, content_type)
            except RestClientError as exc:
                if self.high_availability is None or not exc.transient:
                    raise
                since = self.follow_leader(exc, since)
                time.sleep(0.25)

    def follow_leader(self, exc: ClusterError, since: float | None) -> float:
        """Point :attr:`base_url` at the leader the HA directory names now; raise ``exc``'s story once none
        answered for too long. ``since``: when this wait began (None: now)."""
        from strom.runtime.highavailability.services import read_leader

        settings = self.high_availability
        now = time.monotonic()
        since = now if since is None else since
        lease = None
        with contextlib.suppress(Exception):  # the lease file may be mid-write; the next round reads it again
            lease = read_leader(settings)
        if lease is not None and lease.rest_url and lease.rest_url.rstrip("/") != self.base_url:
            log.warning("JobManager %s lost; following the new leader %s", self.base_url, lease.rest_url)
            self.base_url = lease.rest_url.rstrip("/")
            self.failovers += 1
        limit = FAILOVER_TIMEOUT_S + 4 * settings.lease_duration_ms / 1000
        if now - since > limit:
            raise ClusterError(
                f"expected a JobManager leader that answers within {limit:.0f} s; got {exc}; hint: the cluster's HA "
                f"directory {settings.directory} names the leader (strom cluster status); start a JobManager"
            )
        return since

    def _request_once(self, method: str, path: str, body: bytes | None = None, content_type: str = "") -> Any:
        headers = {"Accept": "application/json"}
        if content_type:
            headers["Content-Type"] = content_type
        if method not in ("GET", "HEAD") and self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        req = urllib.request.Request(self.base_url + path, data=body, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout, context=self.ssl_context) as resp:
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
            reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
            # a certificate or handshake this configuration fails is not a JobManager gone (a reset may be either)
            refused = isinstance(reason, ssl.SSLError) and not isinstance(reason, ssl.SSLEOFError)
            raise RestClientError(self._unreachable(reason), 0, transient=not refused) from None
        return json.loads(raw) if raw else {}

    def _unreachable(self, reason: object) -> str:
        tls = (
            _tls_failure(reason, self.base_url, self.truststore, self.keystore) if isinstance(reason, OSError) else None
        )
        if tls is not None:
            return tls
        hint = (
            "start one (strom cluster start / strom jobmanager) or point -m HOST:PORT (rest.address / rest.port) at it"
        )
        if isinstance(reason, ConnectionResetError) and self.base_url.startswith("http://"):
            hint = f"if it serves HTTPS, set {_ENABLED}: true (and {_TRUST}) on this client; else {hint}"
        return f"expected a strom JobManager's REST API at {self.base_url}; got {reason}; hint: {hint}"

    def get(self, path: str) -> Any:
        return self.request("GET", path)

    def send_json(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        return self.request(method, path, data, "application/json" if data is not None else "")

    # -- Flink's calls -----------------------------------------------------------------------------------
    def submit_job(self, job_graph: bytes, python_files: bytes, *, job_id: str = "") -> str:
        """``POST /jobs`` (Flink's ``JobSubmitHandler``); returns the job id (``job_id``: the graph's, for a retry
        at a new leader that already recovered it)."""
        from strom.web.submission import PYTHON_FILES_ENTRY

        request: dict[str, Any] = {"jobGraphFileName": "job.graph", "jobJarFileNames": [], "jobArtifactFileNames": []}
        parts = [("file_0", "job.graph", job_graph, "application/octet-stream")]
        if python_files:
            request["jobArtifactFileNames"].append({"entryName": PYTHON_FILES_ENTRY, "fileName": "python_files.zip"})
            parts.append(("file_1", "python_files.zip", python_files, "application/zip"))
        parts.insert(0, ("request", "", json.dumps(request).encode(), "application/json"))
        body, content_type = _multipart(parts)
        failovers = self.failovers
        try:
            answer = self.request("POST", "/jobs", body, content_type)
        except RestClientError as exc:
            if exc.status == 409 and job_id and self.failovers > failovers:
                # the old leader stored it before it died and the new one recovered it: submitted
                return job_id
            raise
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

    def savepoint(self, job_id: str, target_directory: str, *, stop: bool = False) -> str:
        """Trigger a savepoint (``stop``: stop-with-savepoint) and wait for its location; a trigger the leader took
        with it when it died is triggered again on the next one."""
        while True:
            trigger = self.stop_with_savepoint if stop else self.trigger_savepoint
            failovers = self.failovers
            trigger_id = trigger(job_id, target_directory)
            try:
                return self.wait_savepoint(job_id, trigger_id)
            except RestClientError as exc:
                if exc.status != 404 or self.failovers == failovers:
                    raise
                log.warning("job %s: the savepoint trigger was lost with its JobManager; triggering again", job_id)

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
