"""Unauthenticated peers: nothing they send is decoded; other connections carry on."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import pickle
import struct
from pathlib import Path

import pytest

from strom.runtime.rpc import RpcClient, RpcServer, rpc_method
from strom.runtime.rpc.auth import MAGIC, NONCE_BYTES, new_secret
from strom.runtime.rpc.framing import FRAME_VERSION

SECRET = new_secret()


class Exploit:
    """Unpickling this creates a directory — the side effect must never happen."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self) -> tuple[object, ...]:
        return (os.mkdir, (self.path,))


class Endpoint:
    def __init__(self) -> None:
        self.release = asyncio.Event()

    @rpc_method
    def add(self, a: int, b: int) -> int:
        return a + b

    @rpc_method
    async def wait_for_release(self) -> str:
        await self.release.wait()
        return "released"


async def _attack(address: tuple[str, int], payload: bytes) -> bytes:
    """Connect without the secret, read the greeting, send ``payload``; return all the server sent."""
    reader, writer = await asyncio.open_connection(*address)
    try:
        greeting = await asyncio.wait_for(reader.readexactly(len(MAGIC) + NONCE_BYTES), 5)
        writer.write(payload)
        await writer.drain()
        try:
            rest = await asyncio.wait_for(reader.read(), 15)  # returns once the server hung up
        except ConnectionResetError:
            rest = b""
        return greeting + rest
    finally:
        writer.close()
        with contextlib.suppress(ConnectionResetError):
            await writer.wait_closed()


@pytest.mark.timeout(20)
def test_garbage_and_pickles_from_unauthenticated_peers_are_never_decoded(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    marker = tmp_path / "pwned"
    evil = pickle.dumps(Exploit(str(marker)), protocol=5)
    assert len(evil) < 1000
    framed = struct.pack("!IB", len(evil), FRAME_VERSION) + evil
    # A pickle framed so that it fills the 64-byte answer slot exactly, and one padded behind a header.
    payloads = [
        b"\x00" * 200 + b"GET / HTTP/1.1\r\n\r\n",
        framed,
        framed * 3,
        (framed + b"\x00" * 64)[:64],
    ]

    async def main() -> None:
        endpoint = Endpoint()
        async with RpcServer(endpoint, secret=SECRET, name="victim") as server:
            async with await RpcClient.connect(*server.address, secret=SECRET) as client:
                in_flight = asyncio.ensure_future(client.call("wait_for_release", timeout=15))
                for payload in payloads:
                    reply = await _attack(server.address, payload)
                    assert reply.startswith(MAGIC)
                    assert len(reply) == len(MAGIC) + NONCE_BYTES  # only the challenge was ever sent
                    assert await client.call("add", 1, 2) == 3  # the authenticated client is unaffected
                assert not in_flight.done()
                endpoint.release.set()
                assert await asyncio.wait_for(in_flight, 5) == "released"
            stats = server.statistics()
            assert stats.connections_rejected == len(payloads)
            assert stats.connections_accepted == 1

    with caplog.at_level(logging.WARNING, logger="strom.runtime.rpc.rpc_service"):
        asyncio.run(main())
    assert not marker.exists()
    # every rejection is reported, rate-limited: the first at once, the others counted in the warning at close
    warnings = [r.getMessage() for r in caplog.records]
    assert len([w for w in warnings if "rejected connection from 127.0.0.1" in w]) == 1
    assert [w for w in warnings if f"{len(payloads) - 1} more connections rejected since the last warning" in w]


@pytest.mark.timeout(20)
def test_peer_that_connects_and_says_nothing_does_not_block_others() -> None:
    async def main() -> None:
        async with RpcServer(Endpoint(), secret=SECRET) as server:
            idle_reader, idle_writer = await asyncio.open_connection(*server.address)
            await idle_reader.readexactly(len(MAGIC) + NONCE_BYTES)
            async with await RpcClient.connect(*server.address, secret=SECRET) as client:
                assert await client.call("add", 20, 22) == 42
            idle_writer.write_eof()  # it gives up without answering: the server rejects it and hangs up
            assert await asyncio.wait_for(idle_reader.read(), 5) == b""
            assert server.statistics().connections_rejected == 1
            idle_writer.close()
            await idle_writer.wait_closed()

    asyncio.run(main())
