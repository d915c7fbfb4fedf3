"""The HMAC handshake: both sides prove the secret; every failure is an AuthenticationError."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
from collections.abc import Awaitable, Callable

import pytest

from strom.exceptions import AuthenticationError
from strom.runtime.rpc import RpcClient, RpcServer, rpc_method
from strom.runtime.rpc.auth import (
    DIGEST_BYTES,
    HANDSHAKE_TIMEOUT,
    MAGIC,
    NONCE_BYTES,
    authenticate_client,
    authenticate_server,
    new_secret,
)

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


class Endpoint:
    @rpc_method
    def ping(self) -> str:
        return "pong"


async def _with_server(handler: Handler, client: Callable[[int], Awaitable[None]]) -> None:
    """Serve ``handler`` while ``client(port)`` runs; then wait until every handler has finished."""
    handlers: list[asyncio.Task[None]] = []

    async def wrapped(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        handlers.append(asyncio.current_task())  # type: ignore[arg-type]
        try:
            await handler(reader, writer)
        finally:
            writer.close()
            await writer.wait_closed()

    server = await asyncio.start_server(wrapped, "127.0.0.1", 0)
    try:
        await client(server.sockets[0].getsockname()[1])
        await asyncio.wait_for(asyncio.gather(*handlers), 5)  # they end once the client hung up
    finally:
        server.close()
        await server.wait_closed()


async def _client_handshake(port: int, secret: bytes, *, timeout: float = HANDSHAKE_TIMEOUT) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        await authenticate_client(reader, writer, secret, timeout=timeout)
    finally:
        writer.close()
        await writer.wait_closed()


@pytest.mark.timeout(20)
def test_constants_and_new_secret() -> None:
    assert MAGIC == b"STROM\x01"
    assert NONCE_BYTES == DIGEST_BYTES == 32
    assert HANDSHAKE_TIMEOUT == 10.0
    a, b = new_secret(), new_secret()
    assert len(a) == 32 and a != b


@pytest.mark.timeout(20)
def test_right_secret_authenticates_both_ways() -> None:
    secret = new_secret()

    async def main() -> None:
        server_ok: asyncio.Future[bool] = asyncio.get_running_loop().create_future()

        async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await authenticate_server(reader, writer, secret)
            server_ok.set_result(True)

        async def client(port: int) -> None:
            await _client_handshake(port, secret)
            assert await asyncio.wait_for(server_ok, 5)

        await _with_server(handler, client)

    asyncio.run(main())


@pytest.mark.timeout(20)
def test_wrong_secret_is_rejected_by_the_rpc_server_and_the_client_learns_it() -> None:
    async def main() -> None:
        async with RpcServer(Endpoint(), secret=new_secret()) as server:
            with pytest.raises(AuthenticationError):
                await RpcClient.connect(*server.address, secret=new_secret(), timeout=5)
            assert server.statistics().connections_rejected == 1
            assert server.statistics().connections_accepted == 0

    asyncio.run(main())


@pytest.mark.timeout(20)
def test_wrong_secret_on_the_server_side_raises_there() -> None:
    async def main() -> None:
        outcome: asyncio.Future[BaseException | None] = asyncio.get_running_loop().create_future()

        async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                await authenticate_server(reader, writer, new_secret())
            except AuthenticationError as exc:
                outcome.set_result(exc)
            else:
                outcome.set_result(None)

        async def client(port: int) -> None:
            with pytest.raises(AuthenticationError, match="expected 32 bytes of the server's proof"):
                await _client_handshake(port, new_secret())
            assert isinstance(await asyncio.wait_for(outcome, 5), AuthenticationError)

        await _with_server(handler, client)

    asyncio.run(main())


@pytest.mark.timeout(20)
def test_client_refuses_a_server_that_cannot_prove_the_secret() -> None:
    secret = new_secret()

    async def impostor(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(MAGIC + b"n" * NONCE_BYTES)
        await reader.readexactly(DIGEST_BYTES + NONCE_BYTES)
        writer.write(b"\x00" * DIGEST_BYTES)  # not HMAC(secret, "server" + client nonce)
        await writer.drain()
        await reader.read()

    async def main() -> None:
        async def client(port: int) -> None:
            with pytest.raises(AuthenticationError, match="expected the server to prove the cluster secret"):
                await _client_handshake(port, secret)

        await _with_server(impostor, client)

    asyncio.run(main())


@pytest.mark.timeout(20)
def test_client_refuses_a_wrong_greeting() -> None:
    async def http_server(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 400 Bad Request\r\n\r\n" + b" " * 20)
        await writer.drain()
        await reader.read()

    async def main() -> None:
        async def client(port: int) -> None:
            with pytest.raises(AuthenticationError, match="expected a strom server greeting"):
                await _client_handshake(port, new_secret())

        await _with_server(http_server, client)

    asyncio.run(main())


@pytest.mark.timeout(20)
def test_silent_peer_times_out_with_authentication_error() -> None:
    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read()  # never greets; returns when the client hangs up

    async def main() -> None:
        async def client(port: int) -> None:
            with pytest.raises(AuthenticationError, match=r"within 0\.2 s"):
                await _client_handshake(port, new_secret(), timeout=0.2)

        await _with_server(silent, client)

    asyncio.run(main())


@pytest.mark.timeout(20)
def test_server_rejects_a_short_answer_and_a_replayed_server_digest() -> None:
    secret = new_secret()

    async def main() -> None:
        results: asyncio.Queue[BaseException | None] = asyncio.Queue()

        async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                await authenticate_server(reader, writer, secret, timeout=5)
            except AuthenticationError as exc:
                await results.put(exc)
            else:
                await results.put(None)

        async def client(port: int) -> None:
            # 1: a short answer, then hang up
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            await reader.readexactly(len(MAGIC) + NONCE_BYTES)
            writer.write(b"short")
            writer.close()
            await writer.wait_closed()
            assert isinstance(await asyncio.wait_for(results.get(), 5), AuthenticationError)
            # 2: the "server" role digest instead of the "client" one (a reflected answer)
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            nonce = (await reader.readexactly(len(MAGIC) + NONCE_BYTES))[len(MAGIC) :]
            reflected = hmac.new(secret, b"server" + nonce, hashlib.sha256).digest()
            writer.write(reflected + b"c" * NONCE_BYTES)
            await writer.drain()
            assert isinstance(await asyncio.wait_for(results.get(), 5), AuthenticationError)
            assert await asyncio.wait_for(reader.read(), 5) == b""  # no proof was sent back
            writer.close()
            await writer.wait_closed()

        await _with_server(handler, client)

    asyncio.run(main())


@pytest.mark.timeout(20)
def test_too_short_secret_is_refused() -> None:
    async def main() -> None:
        reader = asyncio.StreamReader()
        with pytest.raises(AuthenticationError, match="at least 16 bytes"):
            await authenticate_client(reader, None, b"short")  # type: ignore[arg-type]

    asyncio.run(main())
