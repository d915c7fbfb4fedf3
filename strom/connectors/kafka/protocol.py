"""The two Kafka protocol requests the exactly-once ``KafkaSink`` sends itself: ``FindCoordinator`` (v1, the
transaction coordinator of a transactional id) and ``EndTxn`` (v0, commit or abort the transaction of a producer id
and epoch).

confluent-kafka (librdkafka) cannot resume another process's transaction, as Flink's ``FlinkKafkaInternalProducer``
does by setting a producer's id and epoch; a committable restored after a crash is committed by sending ``EndTxn``
for its producer id and epoch, which is what the Java client's ``commitTransaction`` sends. A commit repeated for a
transaction already committed is answered without error by the coordinator (its retry rule), so the commit is
idempotent as the Committer contract requires.
"""

from __future__ import annotations

import socket
import struct
import time

from strom.exceptions import ConnectorError

__all__ = ["RETRIABLE", "end_txn", "find_coordinator"]

FIND_COORDINATOR = 10
END_TXN = 26
#: errors that go away when asked again (coordinator loading or moved, a transaction still completing)
RETRIABLE = frozenset({7, 14, 15, 16, 51})  # REQUEST_TIMED_OUT, COORDINATOR_LOAD/NOT_AVAILABLE, NOT_COORDINATOR, ...


def _string(s: str) -> bytes:
    data = s.encode()
    return struct.pack(">h", len(data)) + data


def _request(address: tuple[str, int], api_key: int, version: int, body: bytes, timeout_s: float) -> bytes:
    """One request and its response's body (after the correlation id), on a connection of its own."""
    header = struct.pack(">hhi", api_key, version, 1) + _string("strom-kafka-sink")
    frame = header + body
    with socket.create_connection(address, timeout=timeout_s) as conn:
        conn.sendall(struct.pack(">i", len(frame)) + frame)
        size = struct.unpack(">i", _read(conn, 4))[0]
        response = _read(conn, size)
    return response[4:]


def _read(conn: socket.socket, n: int) -> bytes:
    out = bytearray()
    while len(out) < n:
        chunk = conn.recv(n - len(out))
        if not chunk:
            raise ConnectionError("the broker closed the connection")
        out += chunk
    return bytes(out)


def _addresses(bootstrap_servers: str) -> list[tuple[str, int]]:
    out = []
    for entry in bootstrap_servers.split(","):
        host, _, port = entry.strip().rpartition(":")
        out.append((host.split("://")[-1].strip("[]"), int(port)))
    return out


def find_coordinator(bootstrap_servers: str, transactional_id: str, timeout_s: float) -> tuple[str, int]:
    """The host and port of ``transactional_id``'s transaction coordinator."""
    last: object = None
    for address in _addresses(bootstrap_servers):
        try:
            body = _request(address, FIND_COORDINATOR, 1, _string(transactional_id) + b"\x01", timeout_s)
        except OSError as exc:
            last = exc
            continue
        _throttle, error, message_len = struct.unpack_from(">ihh", body, 0)
        pos = 8 + max(message_len, 0)
        if error:
            last = f"error code {error}"
            continue
        _node, host_len = struct.unpack_from(">ih", body, pos)
        host = body[pos + 6 : pos + 6 + host_len].decode()
        (port,) = struct.unpack_from(">i", body, pos + 6 + host_len)
        return host, port
    raise ConnectorError(
        f"expected a transaction coordinator for {transactional_id!r} from {bootstrap_servers}; got {last}; "
        "hint: the job's restart strategy retries"
    )


def end_txn(
    bootstrap_servers: str, transactional_id: str, producer_id: int, epoch: int, commit: bool, timeout_s: float
) -> int:
    """Commits (or aborts) the transaction of ``producer_id`` / ``epoch``; returns the Kafka error code (0: done,
    also for a commit repeated after it succeeded), retrying the retriable ones until ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    body = _string(transactional_id) + struct.pack(">qhb", producer_id, epoch, 1 if commit else 0)
    while True:
        error: int = 15
        try:
            coordinator = find_coordinator(bootstrap_servers, transactional_id, timeout_s)
            answer = _request(coordinator, END_TXN, 0, body, timeout_s)
            error = struct.unpack_from(">ih", answer, 0)[1]
        except (OSError, ConnectorError):
            if time.monotonic() > deadline:
                raise
        if error not in RETRIABLE or time.monotonic() > deadline:
            return error
        time.sleep(0.1)
