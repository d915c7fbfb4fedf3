"""Unauthenticated peers are disconnected before anything they send is decoded; jobs carry on. With internal TLS,
every connection inside the cluster is encrypted and mutually authenticated."""

from __future__ import annotations

import asyncio
import logging
import os
import pickle
import socket
import ssl
import struct
import time
from pathlib import Path

import psutil
import pytest
from tls_certificates import STORE_PASSWORD, TRUST_PASSWORD, make_pki

from strom import StreamExecutionEnvironment
from strom.config import Configuration
from strom.runtime.net.internal_ssl import InternalSslSettings
from strom.runtime.rpc.auth import authenticate_client
from strom.runtime.rpc.framing import FRAME_VERSION


class Exploit:
    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self) -> tuple[object, ...]:
        return (os.mkdir, (self.path,))


def _attack(address: tuple[str, int], payload: bytes) -> bytes:
    """Connect without the secret, send ``payload``, return what the server sent until it hung up."""
    received = b""
    with socket.create_connection(address, timeout=15) as s:
        s.sendall(payload)
        s.settimeout(15)
        while True:
            chunk = s.recv(4096)
            if not chunk:
                return received  # the server closed the connection
            received += chunk


def slow(x: int) -> int:
    time.sleep(0.0002)
    return x


@pytest.mark.timeout(90)
def test_garbage_and_pickles_from_unauthenticated_peers_are_never_decoded(tmp_path: Path) -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    stream = env.from_sequence(0, 19_999).map(slow).rebalance().map(lambda x: x + 1)
    marker = tmp_path / "pwned"
    evil = pickle.dumps(Exploit(str(marker)))
    framed = struct.pack("!IB", len(evil), FRAME_VERSION) + evil
    with stream.execute_and_collect() as results:
        it = iter(results)
        got = [next(it)]  # the job is running
        cluster = results._client._cluster
        assert cluster.dispatcher is not None
        targets = [cluster.dispatcher.address]
        for tm in cluster.dispatcher.resource_manager.slot_manager.task_managers.values():
            targets += [tm.rpc_address, tm.data_address]
        assert len(targets) == 5
        for address in targets:
            for payload in (b"\x00" * 200 + b"GET / HTTP/1.1\r\n\r\n", framed, framed * 3):
                reply = _attack(address, payload)
                assert reply.startswith(b"STROM\x01")  # only the challenge was ever sent back
                assert len(reply) == 6 + 32
        got.extend(it)
    assert not marker.exists()
    assert sorted(got) == list(range(1, 20_001))


def _send_as_member(address: tuple[str, int], secret: bytes, data: bytes) -> bytes:
    """Authenticate with the cluster secret, send ``data`` (then end our side), return what came back."""

    async def exchange() -> bytes:
        reader, writer = await asyncio.open_connection(*address)
        try:
            await authenticate_client(reader, writer, secret)
            writer.write(data)
            await writer.drain()
            writer.write_eof()
            return await asyncio.wait_for(reader.read(), 15)  # returns once the endpoint hung up
        finally:
            writer.close()

    return asyncio.run(exchange())


def _frame(payload: bytes) -> bytes:
    return struct.pack("!IB", len(payload), FRAME_VERSION) + payload


#: what asyncio prints for an exception that escaped a connection's task
UNHANDLED = ("never retrieved", "Unhandled exception", "Traceback")


@pytest.mark.processes  # reads each TaskManager process's standard error, told apart by its [tm-id] prefix
@pytest.mark.timeout(90)
def test_garbled_frames_from_a_member_close_that_connection_with_one_logged_frame_error(
    capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    """A peer holding the cluster secret but sending truncated or garbled frames loses its connection with one
    logged error per connection, on a TaskManager's data and RPC endpoints and on the JobManager's; the running
    job and the endpoints carry on."""
    data_garbage = [
        _frame(bytes([1, 0, 0])),  # a truncated PartitionRequest
        _frame(b""),  # an empty frame
        _frame(bytes([2, 0, 0, 0, 1])),  # a truncated AddCredit
        _frame(bytes([4])) + _frame(b"never read"),  # a truncated CancelPartitionRequest
    ]
    rpc_garbage = [
        _frame(b"\x80\x05garbage"),  # not a pickle
        struct.pack("!IB", 1000, FRAME_VERSION) + b"short",  # a frame cut short by the end of the stream
        struct.pack("!IB", 5, FRAME_VERSION + 1) + b"hello",  # an unknown frame version
    ]
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    stream = env.from_sequence(0, 19_999).map(slow).rebalance().map(lambda x: x + 1)
    with caplog.at_level(logging.WARNING), stream.execute_and_collect() as results:
        it = iter(results)
        got = [next(it)]  # the job is running
        cluster = results._client._cluster
        assert cluster.dispatcher is not None
        tms = list(cluster.dispatcher.resource_manager.slot_manager.task_managers.values())
        for tm in tms:
            for data in data_garbage:
                assert _send_as_member(tm.data_address, cluster.secret, data) == b""  # closed, nothing answered
            for data in rpc_garbage:
                assert _send_as_member(tm.rpc_address, cluster.secret, data) == b""
        for data in rpc_garbage:
            assert _send_as_member(cluster.dispatcher.address, cluster.secret, data) == b""
        got.extend(it)
    assert sorted(got) == list(range(1, 20_001))  # the job's own connections carried on
    _, err = capfd.readouterr()  # the TaskManagers' stderr: they inherit ours
    tm_lines = err.splitlines()
    assert not [line for line in tm_lines if any(u in line for u in UNHANDLED)], err[-3000:]
    for tm in tms:
        data_errors = [line for line in tm_lines if f"[{tm.tm_id}] " in line and "data server: closing conn" in line]
        assert len(data_errors) == len(data_garbage), data_errors
        rpc_errors = [line for line in tm_lines if f"taskexecutor-{tm.tm_id}: closing connection" in line]
        assert len(rpc_errors) == len(rpc_garbage), rpc_errors
    jm_errors = [r.getMessage() for r in caplog.records if r.getMessage().startswith("jobmanager: closing connection")]
    assert len(jm_errors) == len(rpc_garbage), jm_errors
    assert not [r for r in caplog.records if any(u in r.getMessage() for u in UNHANDLED)]


def _tls_reply(address: tuple[str, int], context: ssl.SSLContext | None) -> tuple[bytes, dict[str, object] | None]:
    """What ``address`` sends first: over TLS with ``context`` (and the peer's certificate), else over plain TCP."""
    with socket.create_connection(address, timeout=15) as raw:
        if context is None:
            raw.sendall(b"\x00" * 64)
            raw.settimeout(15)
            try:
                return raw.recv(64), None
            except ConnectionResetError:
                return b"", None
        with context.wrap_socket(raw, server_hostname=address[0]) as tls:
            tls.settimeout(15)
            peer = tls.getpeercert()
            return tls.recv(6), peer


@pytest.mark.processes  # the passwords' way to a TaskManager process (its stdin, not its command line)
@pytest.mark.timeout(120)
def test_internal_tls_encrypts_rpc_and_data_connections(tmp_path: Path) -> None:
    """``security.ssl.internal.enabled``: the job runs across two TaskManager processes with every RPC and data
    connection over mutual TLS — a plain TCP peer gets no strom challenge, only a TLS client with the cluster's
    certificate does — and the stores' passwords never appear on a TaskManager's command line."""
    pki = make_pki(tmp_path / "pki")
    settings = {
        "security.ssl.internal.enabled": "true",
        "security.ssl.internal.keystore": str(pki.server_p12),
        "security.ssl.internal.keystore-password": STORE_PASSWORD,
        "security.ssl.internal.truststore": str(pki.ca_p12),
        "security.ssl.internal.truststore-password": TRUST_PASSWORD,
    }
    env = StreamExecutionEnvironment.get_execution_environment(Configuration(settings))
    env.set_parallelism(2)
    stream = env.from_sequence(0, 19_999).map(slow).rebalance().map(lambda x: x + 1)
    ours = InternalSslSettings.from_configuration(Configuration(settings))
    assert ours is not None
    client = ours.contexts().client
    with stream.execute_and_collect() as results:
        it = iter(results)
        got = [next(it)]  # the job is running: data flows between the TaskManagers
        cluster = results._client._cluster
        assert cluster.dispatcher is not None
        targets = [cluster.dispatcher.address]
        pids = []
        for tm in cluster.dispatcher.resource_manager.slot_manager.task_managers.values():
            targets += [tm.rpc_address, tm.data_address]
            pids.append(tm.pid)
        assert len(targets) == 5
        for address in targets:
            plain, _ = _tls_reply(address, None)
            assert not plain.startswith(b"STROM")  # a TLS server: a plain peer is never challenged
            challenge, peer = _tls_reply(address, client)
            assert challenge == b"STROM\x01"  # the strom handshake runs inside TLS
            assert peer is not None and peer["subject"] == ((("commonName", "strom jobmanager"),),)
        for pid in pids:
            command_line = " ".join(psutil.Process(pid).cmdline())
            assert "strom.runtime.taskexecutor" in command_line  # its settings: argv, or stdin when prestarted
            assert STORE_PASSWORD not in command_line and TRUST_PASSWORD not in command_line
        got.extend(it)
    assert sorted(got) == list(range(1, 20_001))
