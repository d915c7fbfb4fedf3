"""Mutual HMAC-SHA256 challenge–response, run on raw fixed-size reads before any frame is read.

The exchange on a fresh TCP connection::

    server → client   MAGIC (6 bytes), server nonce (32 bytes)
    client → server   HMAC(secret, b"client" + server nonce) (32 bytes), client nonce (32 bytes)
    server → client   HMAC(secret, b"server" + client nonce) (32 bytes)

Both sides prove that they hold the cluster secret without revealing it; digests are compared in
constant time with :func:`hmac.compare_digest`. The role prefixes keep one side's answer from being
replayed as the other's. Only fixed-size byte strings are read here — nothing a peer sends is parsed,
unframed or unpickled — so an unauthenticated peer can at most make us read 64 bytes and wait
``timeout`` seconds. Every failure (wrong digest, wrong greeting, short read, reset, timeout) raises
:class:`~strom.exceptions.AuthenticationError`; the caller closes the connection.

Servers run :func:`authenticate_admitted`: the server side under a
:class:`~strom.runtime.rpc.handshake_guard.HandshakeGuard`, which bounds the handshakes pending at once.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import secrets

from strom.exceptions import AuthenticationError
from strom.runtime.rpc.handshake_guard import HandshakeGuard

__all__ = [
    "DIGEST_BYTES",
    "HANDSHAKE_TIMEOUT",
    "MAGIC",
    "NONCE_BYTES",
    "SECRET_MIN_BYTES",
    "authenticate_admitted",
    "authenticate_client",
    "authenticate_server",
    "new_secret",
]

MAGIC = b"STROM\x01"
NONCE_BYTES = 32
DIGEST_BYTES = 32
HANDSHAKE_TIMEOUT = 10.0
SECRET_MIN_BYTES = 16
"""Shorter secrets are refused: the HMAC is only as strong as the key."""


def new_secret() -> bytes:
    """A fresh random cluster secret (32 bytes)."""
    return secrets.token_bytes(32)


def _check_secret(secret: bytes) -> None:
    if not isinstance(secret, bytes | bytearray) or len(secret) < SECRET_MIN_BYTES:
        size = len(secret) if isinstance(secret, bytes | bytearray) else type(secret).__name__
        raise AuthenticationError(
            f"expected a cluster secret of at least {SECRET_MIN_BYTES} bytes; got {size}; "
            "hint: create one with strom.runtime.rpc.new_secret()"
        )


def _digest(secret: bytes, role: bytes, nonce: bytes) -> bytes:
    return hmac.new(secret, role + nonce, hashlib.sha256).digest()


async def _read(reader: asyncio.StreamReader, n: int, what: str) -> bytes:
    try:
        return await reader.readexactly(n)
    except asyncio.IncompleteReadError as exc:
        raise AuthenticationError(
            f"expected {n} bytes of {what}; got {len(exc.partial)} bytes before the peer closed; "
            "hint: the peer may use a different cluster secret or not speak the strom protocol"
        ) from None
    except (ConnectionError, OSError) as exc:
        raise AuthenticationError(
            f"expected {what}; got a connection error ({exc}); hint: the peer went away during the handshake"
        ) from None


async def _send(writer: asyncio.StreamWriter, data: bytes, what: str) -> None:
    try:
        writer.write(data)
        await writer.drain()
    except (ConnectionError, OSError) as exc:
        raise AuthenticationError(
            f"expected to send {what}; got a connection error ({exc}); hint: the peer went away during the handshake"
        ) from None


def _timed_out(timeout: float, side: str) -> AuthenticationError:
    return AuthenticationError(
        f"expected the {side} handshake to finish within {timeout:g} s; got no complete answer; "
        "hint: the peer may not be a strom process or may be overloaded"
    )


async def authenticate_server(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    secret: bytes,
    *,
    timeout: float = HANDSHAKE_TIMEOUT,
) -> None:
    """Challenge a connecting client; raise :class:`AuthenticationError` unless it proves the secret.

    On success the client has also received our proof. The caller closes the connection on failure.
    """
    _check_secret(secret)
    nonce = secrets.token_bytes(NONCE_BYTES)
    try:
        async with asyncio.timeout(timeout):
            await _send(writer, MAGIC + nonce, "the server's challenge")
            answer = await _read(reader, DIGEST_BYTES + NONCE_BYTES, "the client's answer to the challenge")
            expected = _digest(secret, b"client", nonce)
            if not hmac.compare_digest(answer[:DIGEST_BYTES], expected):
                raise AuthenticationError(
                    "expected the client to answer with the HMAC of the cluster secret; got a wrong digest; "
                    "hint: the client uses a different secret or is not a member of this cluster"
                )
            await _send(writer, _digest(secret, b"server", answer[DIGEST_BYTES:]), "the server's proof")
    except TimeoutError:
        raise _timed_out(timeout, "server") from None


async def authenticate_client(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    secret: bytes,
    *,
    timeout: float = HANDSHAKE_TIMEOUT,
) -> None:
    """Answer a server's challenge and verify its proof; raise :class:`AuthenticationError` on failure.

    A client therefore never sends frames to a server that does not hold the secret either.
    """
    _check_secret(secret)
    nonce = secrets.token_bytes(NONCE_BYTES)
    try:
        async with asyncio.timeout(timeout):
            hello = await _read(reader, len(MAGIC) + NONCE_BYTES, "the server's challenge")
            magic, server_nonce = hello[: len(MAGIC)], hello[len(MAGIC) :]
            if magic != MAGIC:
                raise AuthenticationError(
                    f"expected a strom server greeting {MAGIC!r}; got {magic!r}; "
                    "hint: the address does not belong to a strom RPC or data endpoint"
                )
            await _send(writer, _digest(secret, b"client", server_nonce) + nonce, "the client's answer")
            proof = await _read(reader, DIGEST_BYTES, "the server's proof of the secret")
            if not hmac.compare_digest(proof, _digest(secret, b"server", nonce)):
                raise AuthenticationError(
                    "expected the server to prove the cluster secret; got a wrong digest; "
                    "hint: the server uses a different secret"
                )
    except TimeoutError:
        raise _timed_out(timeout, "client") from None


async def authenticate_admitted(
    guard: HandshakeGuard[asyncio.StreamWriter],
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    secret: bytes,
    *,
    timeout: float = HANDSHAKE_TIMEOUT,
) -> None:
    """:func:`authenticate_server` as one of at most ``guard.max_pending`` pending handshakes.

    Admitting this connection may evict the oldest pending one: its transport is aborted, so its own
    handshake fails at once. Raises :class:`AuthenticationError` when the handshake fails or this
    connection was evicted; the caller reports it through ``guard.rejected`` and closes the connection.
    """
    evict = guard.admit(writer)
    if evict is not None:
        evict.transport.abort()
    try:
        await authenticate_server(reader, writer, secret, timeout=timeout)
    except AuthenticationError:
        if guard.finish(writer, authenticated=False):
            raise
        raise _evicted(guard) from None
    except BaseException:
        guard.finish(writer, authenticated=False)
        raise
    if not guard.finish(writer, authenticated=True):
        raise _evicted(guard)


def _evicted(guard: HandshakeGuard[asyncio.StreamWriter]) -> AuthenticationError:
    return AuthenticationError(
        f"expected the handshake to finish while at most {guard.max_pending} were pending; got pushed out by "
        "newer connections; hint: a flood of connections that do not authenticate reaches this endpoint"
    )
