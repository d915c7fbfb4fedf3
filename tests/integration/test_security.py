"""Unauthenticated peers are disconnected before anything they send is decoded; jobs carry on."""

from __future__ import annotations

import os
import pickle
import socket
import struct
import time
from pathlib import Path

import pytest

from strom import StreamExecutionEnvironment
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
