"""The data-plane connections against misbehaving, authenticated peers: a bad frame closes that connection
with a logged error, fails the channels that depended on it, and leaves the server serving others."""

from __future__ import annotations

import asyncio
import gc
import logging
import pickle
from collections.abc import Awaitable, Callable

import pytest

from strom.api.serialization import PickleBatchSerializer
from strom.exceptions import ClusterError
from strom.runtime.network import messages as m
from strom.runtime.network.connection_manager import NettyConnectionManager
from strom.runtime.network.events import EndOfPartitionEvent
from strom.runtime.network.input_channel import RemoteInputChannel
from strom.runtime.network.input_gate import InputGate
from strom.runtime.network.partition_manager import ResultPartitionManager
from strom.runtime.network.result_partition import ResultPartitionID
from strom.runtime.rpc.auth import authenticate_client, authenticate_server
from strom.runtime.rpc.framing import FRAME_VERSION, HEADER, encode_frame, read_frame

pytestmark = pytest.mark.timeout(30)

SECRET = b"s" * 32


PID = ResultPartitionID("r", 0, "a" * 32)
#: what asyncio logs for an exception that escaped a connection's task
UNHANDLED = ("never retrieved", "Unhandled exception", "Traceback")


async def _manager() -> NettyConnectionManager:
    cm = NettyConnectionManager(ResultPartitionManager(), secret=SECRET, host="127.0.0.1", max_frame_bytes=1 << 20)
    await cm.start()
    return cm


def _remote_channel(
    cm: NettyConnectionManager, gate: InputGate, index: int, address: tuple[str, int]
) -> RemoteInputChannel:
    channel = RemoteInputChannel(
        gate,
        index,
        PID,
        index,
        serializer=PickleBatchSerializer(),
        request=lambda ch: cm.request_subpartition(ch, address),
        recycle=cm.recycle,
        cancel_request=cm.cancel_request,
    )
    channel.initial_credit = gate.credit.add_channel(index, 2)
    return channel


async def _channel_against(
    rogue: Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]],
) -> RemoteInputChannel:
    """A remote channel of a fresh manager that requests its subpartition from the producer ``rogue`` and is
    polled once it has been woken (by data or by a failure)."""
    server = await asyncio.start_server(rogue, "127.0.0.1", 0)
    cm = await _manager()
    woke = asyncio.Event()
    loop = asyncio.get_running_loop()
    gate = InputGate(0, lambda: loop.call_soon_threadsafe(woke.set), floating_buffers=2)
    channel = _remote_channel(cm, gate, 0, server.sockets[0].getsockname()[:2])
    gate.set_channels([channel])
    gate.request_partitions()
    try:
        await asyncio.wait_for(woke.wait(), 5)
    finally:
        await cm.close()
        server.close()
        await server.wait_closed()
    return channel


def _unhandled(caplog: pytest.LogCaptureFixture) -> list[str]:
    gc.collect()  # a task whose exception nobody retrieved is reported when it is collected
    return [r.getMessage() for r in caplog.records if any(u in r.getMessage() for u in UNHANDLED) or r.exc_info]


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

        return await _channel_against(rogue)

    with caplog.at_level(logging.ERROR):
        channel = asyncio.run(scenario())
    with pytest.raises(ClusterError, match="expected frame version 1; got 99"):
        channel.poll()
    assert any("closing it" in r.getMessage() for r in caplog.records)


GARBLED_REQUESTS = {
    "empty frame": b"",
    "truncated partition request": bytes([m.PARTITION_REQUEST, 0, 0]),
    "truncated credit": bytes([m.ADD_CREDIT, 0, 0, 0, 1]),
    "truncated cancel": bytes([m.CANCEL_REQUEST]),
    "garbled partition id": m.REQUEST_HEADER.pack(m.PARTITION_REQUEST, 1, 2, 0) + b"\xff\xfe",
    "unknown type": bytes([9, 1, 2, 3]),
}


@pytest.mark.parametrize("payload", GARBLED_REQUESTS.values(), ids=GARBLED_REQUESTS.keys())
def test_a_garbled_request_closes_that_connection_with_one_logged_frame_error(
    payload: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    async def scenario() -> None:
        cm = await _manager()
        try:
            reader, writer = await asyncio.open_connection(*cm.address)
            await authenticate_client(reader, writer, SECRET)
            writer.write(encode_frame(payload))
            await writer.drain()
            assert await asyncio.wait_for(reader.read(), 5) == b""  # closed by the server
            writer.close()
            await writer.wait_closed()
            reader2, writer2 = await asyncio.open_connection(*cm.address)  # the server serves on
            await authenticate_client(reader2, writer2, SECRET)
            writer2.write(encode_frame(m.encode_cancel(5)))  # a well-formed request is fine
            await writer2.drain()
            writer2.close()
            await writer2.wait_closed()
        finally:
            await cm.close()

    with caplog.at_level(logging.WARNING):
        asyncio.run(scenario())
    assert not _unhandled(caplog)
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1 and "data server: closing connection" in errors[0] and "expected" in errors[0]


GARBLED_RESPONSES = {
    "empty frame": b"",
    "truncated buffer header": bytes([m.BUFFER_RESPONSE, 0, 0, 0, 1, 0]),
    "unknown buffer kind": m.BUFFER_HEADER.pack(m.BUFFER_RESPONSE, 1, 0, 0, 7) + b"x",
    "truncated error": bytes([m.ERROR_RESPONSE, 0]),
    "unknown type": bytes([9]),
}


@pytest.mark.parametrize("payload", GARBLED_RESPONSES.values(), ids=GARBLED_RESPONSES.keys())
def test_a_garbled_response_fails_the_channels_of_that_connection_with_one_logged_frame_error(
    payload: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    async def scenario() -> RemoteInputChannel:
        async def rogue(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                await authenticate_server(reader, writer, SECRET)
                await read_frame(reader, max_bytes=1 << 20)  # the partition request arrives ...
                writer.write(encode_frame(payload))  # ... and is answered with garbage
                await writer.drain()
                await reader.read()
            finally:
                writer.close()

        return await _channel_against(rogue)

    with caplog.at_level(logging.WARNING):
        channel = asyncio.run(scenario())
    with pytest.raises(ClusterError, match=r"data connection to TaskManager .* closed: expected"):
        channel.poll()
    assert not _unhandled(caplog)
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1 and "closing it" in errors[0]


def test_a_channel_released_while_its_request_is_in_flight_never_sends_it(caplog: pytest.LogCaptureFixture) -> None:
    """A task that fails (or is cancelled) right after deploying releases its channels while their partition
    requests are still connecting; the request must not go out then, or the answer finds no channel."""

    async def scenario() -> tuple[list[int], InputGate]:
        requested: list[int] = []

        async def producer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                await authenticate_server(reader, writer, SECRET)
                while (frame := await read_frame(reader, max_bytes=1 << 20)) is not None:
                    if frame[0] == m.PARTITION_REQUEST:
                        rid, _, index, _ = m.decode_partition_request(frame)
                        requested.append(index)
                        end = pickle.dumps(EndOfPartitionEvent())
                        writer.write(encode_frame(m.encode_buffer_header(rid, 0, 0, m.END_OF_PARTITION_BUFFER) + end))
            finally:
                writer.close()

        server = await asyncio.start_server(producer, "127.0.0.1", 0)
        cm = await _manager()
        woke = asyncio.Event()
        loop = asyncio.get_running_loop()
        gate = InputGate(0, lambda: loop.call_soon_threadsafe(woke.set), floating_buffers=2)
        address = server.sockets[0].getsockname()[:2]
        released, kept = _remote_channel(cm, gate, 0, address), _remote_channel(cm, gate, 1, address)
        gate.set_channels([released, kept])
        gate.request_partitions()
        released.release()  # before the loop ran the requests: the connection is not even open yet
        try:
            await asyncio.wait_for(woke.wait(), 5)  # the kept channel's end of partition arrived
            assert isinstance(kept.poll(), EndOfPartitionEvent)
        finally:
            await cm.close()
            server.close()
            await server.wait_closed()
        return requested, gate

    with caplog.at_level(logging.WARNING):
        requested, gate = asyncio.run(scenario())
    assert requested == [1]  # only the channel still open asked for its subpartition
    assert not _unhandled(caplog)
    gate.credit.validate()
