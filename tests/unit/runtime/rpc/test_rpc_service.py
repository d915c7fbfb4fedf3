"""RpcServer / RpcClient: calls, errors, timeouts, connection loss and frame limits."""

from __future__ import annotations

import asyncio
import struct
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from strom.exceptions import RpcError
from strom.runtime.rpc import RpcClient, RpcInvocation, RpcServer, RpcServerStatistics, rpc_method
from strom.runtime.rpc.auth import authenticate_client, new_secret
from strom.runtime.rpc.framing import FRAME_VERSION, encode_frame
from strom.runtime.rpc.messages import encode

SECRET = new_secret()


class Unpicklable(Exception):
    def __init__(self, message: str, extra: int) -> None:  # pickling drops `extra`: unpickling fails
        super().__init__(message)
        self.extra = extra


class Endpoint:
    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.told: asyncio.Queue[Any] = asyncio.Queue()

    @rpc_method
    def add(self, a: int, b: int = 0) -> int:
        return a + b

    @rpc_method
    async def concat(self, value: str, *, suffix: str = "") -> str:
        await asyncio.sleep(0)
        return value + suffix

    @rpc_method
    def apply(self, fn: Callable[[int], int], value: int) -> int:
        return fn(value)

    @rpc_method
    def fail(self) -> None:
        raise ValueError("boom")

    @rpc_method
    def fail_unpicklably(self) -> None:
        raise Unpicklable("cannot travel", 7)

    @rpc_method
    async def wait_for_release(self) -> str:
        await self.release.wait()
        return "released"

    @rpc_method
    def note(self, value: Any) -> None:
        self.told.put_nowait(value)

    @rpc_method
    def blob(self, size: int) -> bytes:
        return b"x" * size

    def not_exposed(self) -> str:
        return "secret"


def run(body: Callable[[RpcServer, Endpoint], Awaitable[None]], **server_kwargs: Any) -> None:
    async def main() -> None:
        endpoint = Endpoint()
        async with RpcServer(endpoint, secret=SECRET, name="test", **server_kwargs) as server:
            await body(server, endpoint)

    asyncio.run(main())


@pytest.mark.timeout(20)
def test_sync_and_async_methods_with_args_kwargs_and_closures() -> None:
    async def body(server: RpcServer, endpoint: Endpoint) -> None:
        async with await RpcClient.connect(*server.address, secret=SECRET) as client:
            assert await client.call("add", 2, b=3) == 5
            assert await client.call("add", 40) == 40
            assert await client.call("concat", "a", suffix="b") == "ab"
            offset = 21
            assert await client.call("apply", lambda x: x + offset, 21) == 42
            results = await asyncio.gather(*(client.call("add", i, i) for i in range(20)))
            assert results == [2 * i for i in range(20)]
        assert client.closed
        stats = server.statistics()
        assert isinstance(stats, RpcServerStatistics)
        assert stats.connections_accepted == 1 and stats.connections_rejected == 0
        assert stats.calls_served == 24

    run(body)


@pytest.mark.timeout(20)
def test_remote_exceptions_are_reraised_with_their_type() -> None:
    async def body(server: RpcServer, endpoint: Endpoint) -> None:
        async with await RpcClient.connect(*server.address, secret=SECRET) as client:
            with pytest.raises(ValueError, match="boom") as info:
                await client.call("fail")
            assert any("remote traceback" in note and "boom" in note for note in info.value.__notes__)
            with pytest.raises(RpcError, match="Unpicklable: cannot travel"):
                await client.call("fail_unpicklably")
            with pytest.raises(TypeError):
                await client.call("add")  # missing argument: the remote TypeError
            assert await client.call("add", 1, 1) == 2  # the connection is still fine

    run(body)


@pytest.mark.timeout(20)
def test_only_marked_methods_can_be_called() -> None:
    async def body(server: RpcServer, endpoint: Endpoint) -> None:
        async with await RpcClient.connect(*server.address, secret=SECRET) as client:
            for name in ("not_exposed", "__init__", "__class__", "release", "missing"):
                with pytest.raises(RpcError, match=rf"expected one of the endpoint's rpc methods .*got '{name}'"):
                    await client.call(name)
            assert await client.call("add", 1) == 1

    run(body)


@pytest.mark.timeout(20)
def test_call_timeout_raises_rpc_error_and_slow_calls_do_not_block_others() -> None:
    async def body(server: RpcServer, endpoint: Endpoint) -> None:
        async with await RpcClient.connect(*server.address, secret=SECRET) as client:
            with pytest.raises(RpcError, match=r"to answer within 0\.2 s"):
                await client.call("wait_for_release", timeout=0.2)
            slow = asyncio.ensure_future(client.call("wait_for_release", timeout=10))
            assert await client.call("add", 1, 2) == 3  # served while `slow` is still running
            assert not slow.done()
            endpoint.release.set()
            assert await asyncio.wait_for(slow, 10) == "released"

    run(body)


@pytest.mark.timeout(20)
def test_tell_is_oneway() -> None:
    async def body(server: RpcServer, endpoint: Endpoint) -> None:
        async with await RpcClient.connect(*server.address, secret=SECRET) as client:
            await client.tell("note", {"k": 1})
            await client.tell("fail")  # failures of oneway calls are only logged remotely
            assert await asyncio.wait_for(endpoint.told.get(), 5) == {"k": 1}
            assert await client.call("add", 1) == 1

    run(body)


@pytest.mark.timeout(20)
def test_server_close_fails_pending_calls_and_fires_on_disconnect_once() -> None:
    async def main() -> None:
        server = RpcServer(Endpoint(), secret=SECRET)
        await server.start()
        client = await RpcClient.connect(*server.address, secret=SECRET)
        lost: asyncio.Queue[str] = asyncio.Queue()
        client.on_disconnect = lambda: lost.put_nowait("lost")
        pending = [asyncio.ensure_future(client.call("wait_for_release", timeout=None)) for _ in range(3)]
        assert await client.call("add", 1) == 1  # the three invocations reached the server before this one
        await server.close()
        await server.close()  # idempotent
        for call in pending:
            with pytest.raises(RpcError, match=r"expected a response from .*; got a lost connection"):
                await asyncio.wait_for(call, 5)
        assert await asyncio.wait_for(lost.get(), 5) == "lost"
        assert client.closed
        with pytest.raises(RpcError, match="expected an open connection"):
            await client.call("add", 1)
        await client.close()
        await client.close()
        assert lost.empty()

    asyncio.run(main())


@pytest.mark.timeout(20)
def test_explicit_close_fails_pending_calls_without_on_disconnect() -> None:
    async def body(server: RpcServer, endpoint: Endpoint) -> None:
        client = await RpcClient.connect(*server.address, secret=SECRET)
        fired: list[str] = []
        client.on_disconnect = lambda: fired.append("lost")
        pending = asyncio.ensure_future(client.call("wait_for_release", timeout=None))
        assert await client.call("add", 1) == 1
        await client.close()
        with pytest.raises(RpcError, match=r"got a closed client"):
            await asyncio.wait_for(pending, 5)
        assert fired == []
        assert client.closed

    run(body)


@pytest.mark.timeout(20)
def test_oversize_frame_from_an_authenticated_peer_closes_only_its_connection() -> None:
    async def body(server: RpcServer, endpoint: Endpoint) -> None:
        good = await RpcClient.connect(*server.address, secret=SECRET)
        in_flight = asyncio.ensure_future(good.call("wait_for_release", timeout=10))
        # an authenticated raw peer announces a frame above the server's limit
        reader, writer = await asyncio.open_connection(*server.address)
        await authenticate_client(reader, writer, SECRET)
        writer.write(struct.pack("!IB", 64 * 1024 + 1, FRAME_VERSION) + b"x" * 100)
        await writer.drain()
        assert await asyncio.wait_for(reader.read(), 5) == b""  # the server hung up
        writer.close()
        await writer.wait_closed()
        # an RpcClient whose own limit is larger sends an oversize invocation: it loses its connection
        big = await RpcClient.connect(*server.address, secret=SECRET, max_frame_bytes=1 << 20)
        lost = asyncio.Event()
        big.on_disconnect = lost.set
        with pytest.raises(RpcError, match=r"got a lost connection|expected to send"):
            await big.call("note", b"y" * 100_000, timeout=5)
        await asyncio.wait_for(lost.wait(), 5)
        await big.close()
        # the server and the other connection are unaffected
        assert await good.call("add", 2, 2) == 4
        endpoint.release.set()
        assert await asyncio.wait_for(in_flight, 5) == "released"
        async with await RpcClient.connect(*server.address, secret=SECRET) as fresh:
            assert await fresh.call("add", 3) == 3
        await good.close()
        assert server.statistics().connections_accepted == 4

    run(body, max_frame_bytes=64 * 1024)


@pytest.mark.timeout(20)
def test_frame_limits_are_reported_as_errors_without_dropping_the_connection() -> None:
    async def body(server: RpcServer, endpoint: Endpoint) -> None:
        async with await RpcClient.connect(*server.address, secret=SECRET, max_frame_bytes=64 * 1024) as client:
            with pytest.raises(RpcError, match="expected a response of at most 65536 bytes"):
                await client.call("blob", 100_000)
            with pytest.raises(RpcError, match="expected an invocation of at most 65536 bytes"):
                await client.call("note", b"z" * 100_000)
            assert await client.call("blob", 3) == b"xxx"
            assert not client.closed

    run(body, max_frame_bytes=64 * 1024)


@pytest.mark.timeout(20)
def test_non_invocation_payload_from_an_authenticated_peer_closes_its_connection() -> None:
    async def body(server: RpcServer, endpoint: Endpoint) -> None:
        reader, writer = await asyncio.open_connection(*server.address)
        await authenticate_client(reader, writer, SECRET)
        writer.write(encode_frame(b"not a pickle at all"))
        await writer.drain()
        assert await asyncio.wait_for(reader.read(), 5) == b""
        writer.close()
        await writer.wait_closed()
        reader, writer = await asyncio.open_connection(*server.address)
        await authenticate_client(reader, writer, SECRET)
        invocation = encode(RpcInvocation(call_id=1, method="add", args=(1,), kwargs={}))
        writer.write(encode_frame(b"\x80\x05N.") + encode_frame(invocation))  # pickled None, then a valid call
        await writer.drain()
        assert await asyncio.wait_for(reader.read(), 5) == b""  # closed at the first bad payload
        writer.close()
        await writer.wait_closed()
        async with await RpcClient.connect(*server.address, secret=SECRET) as client:
            assert await client.call("add", 5) == 5
        assert server.statistics().calls_served == 1

    run(body)


@pytest.mark.timeout(20)
def test_connect_errors_and_server_lifecycle() -> None:
    async def main() -> None:
        server = RpcServer(Endpoint(), secret=SECRET)
        with pytest.raises(RpcError, match="hint: await start"):
            _ = server.address
        await server.start()
        host, port = server.address
        assert host == "127.0.0.1" and port > 0
        await server.close()
        with pytest.raises(RpcError, match=f"expected to connect to 127.0.0.1:{port}"):
            await RpcClient.connect(host, port, secret=SECRET, timeout=5)
        with pytest.raises(RpcError, match="got a closed one"):
            await server.start()

    asyncio.run(main())
