"""The data-plane connections against misbehaving, authenticated peers: a bad frame closes that connection
with a logged error, fails the channels that depended on it, and leaves the server serving others."""

from __future__ import annotations

import asyncio
import logging

import pytest

from strom.api.serialization import PickleBatchSerializer
from strom.exceptions import ClusterError
from strom.runtime.network.connection_manager import NettyConnectionManager
from strom.runtime.network.input_channel import RemoteInputChannel
from strom.runtime.network.input_gate import InputGate
from strom.runtime.network.partition_manager import ResultPartitionManager
from strom.runtime.network.result_partition import ResultPartitionID
from strom.runtime.rpc.auth import authenticate_client, authenticate_server
from strom.runtime.rpc.framing import FRAME_VERSION, HEADER

pytestmark = pytest.mark.timeout(30)

SECRET = b"s" * 32


async def _manager() -> NettyConnectionManager:
    cm = NettyConnectionManager(ResultPartitionManager(), secret=SECRET, host="127.0.0.1", max_frame_bytes=1 << 20)
    await cm.start()
    return cm


@pytest.mark.parametrize(
    ("header", "logged"),
    [
        (HEADER.pack(5, FRAME_VERSION + 7), "expected frame version 1; got 8"),
        (HEADER.pack(2 << 20, FRAME_VERSION), "expected a frame of at most 1048576 bytes"),
    ],
)
def test_server_closes_a_connection_that_sends_a_bad_frame(
    header: bytes, logged: str, caplog: pytest.LogCaptureFixture
) -> None:
    async def scenario() -> None:
        cm = await _manager()
        try:
            reader, writer = await asyncio.open_connection(*cm.address)
            await authenticate_client(reader, writer, SECRET)
            writer.write(header + b"hello")
            await writer.drain()
            assert await asyncio.wait_for(reader.read(), 5) == b""  # closed by the server
            writer.close()
            await writer.wait_closed()
            # the server itself is unharmed: the next peer authenticates fine
            reader2, writer2 = await asyncio.open_connection(*cm.address)
            await authenticate_client(reader2, writer2, SECRET)
            writer2.close()
            await writer2.wait_closed()
        finally:
            await cm.close()

    with caplog.at_level(logging.ERROR):
        asyncio.run(scenario())
    assert any(logged in r.getMessage() and "closing connection" in r.getMessage() for r in caplog.records)


def test_a_bad_frame_from_the_producer_fails_the_channel_with_the_reason(caplog: pytest.LogCaptureFixture) -> None:
    async def scenario() -> RemoteInputChannel:
        async def rogue(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                await authenticate_server(reader, writer, SECRET)
                await reader.read(1)  # the partition request arrives ...
                writer.write(HEADER.pack(3, 99) + b"bad")  # ... and is answered with a frame of an unknown version
                await writer.drain()
                await reader.read()
            finally:
                writer.close()

        server = await asyncio.start_server(rogue, "127.0.0.1", 0)
        cm = await _manager()
        woke = asyncio.Event()
        loop = asyncio.get_running_loop()
        gate = InputGate(0, lambda: loop.call_soon_threadsafe(woke.set), floating_buffers=2)
        channel = RemoteInputChannel(
            gate,
            0,
            ResultPartitionID("r", 0, "a" * 32),
            0,
            serializer=PickleBatchSerializer(),
            request=lambda ch: cm.request_subpartition(ch, server.sockets[0].getsockname()[:2]),
            recycle=cm.recycle,
            cancel_request=cm.cancel_request,
        )
        channel.initial_credit = gate.credit.add_channel(0, 2)
        gate.set_channels([channel])
        gate.request_partitions()
        try:
            await asyncio.wait_for(woke.wait(), 5)
        finally:
            await cm.close()
            server.close()
            await server.wait_closed()
        return channel

    with caplog.at_level(logging.ERROR):
        channel = asyncio.run(scenario())
    with pytest.raises(ClusterError, match="expected frame version 1; got 99"):
        channel.poll()
    assert any("closing it" in r.getMessage() for r in caplog.records)
