"""Mutual HMAC-SHA256 challenge–response on raw bytes, before any frame is read.

    server → client   MAGIC, server nonce (32 bytes)
    client → server   HMAC(secret, "client" + server nonce), client nonce (32 bytes)
    server → client   HMAC(secret, "server" + client nonce)

Both sides prove they hold the cluster secret; digests are compared in constant time. Nothing a peer
sends is decoded until this succeeded.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import secrets

from strom.exceptions import AuthenticationError

__all__ = [
    "DIGEST_BYTES",
    "HANDSHAKE_TIMEOUT",
    "MAGIC",
    "NONCE_BYTES",
    "authenticate_client",
    "authenticate_server",
    "new_secret",
]

MAGIC = b"STROM\x01"
NONCE_BYTES = 32
DIGEST_BYTES = 32
HANDSHAKE_TIMEOUT = 10.0


def new_secret() -> bytes:
    return secrets.token_bytes(32)


def _digest(secret: bytes, role: bytes, nonce: bytes) -> bytes:
    return hmac.new(secret, role + nonce, hashlib.sha256).digest()


async def _read(reader: asyncio.StreamReader, n: int, timeout: float, what: str) -> bytes:
    try:
        return await asyncio.wait_for(reader.readexactly(n), timeout)
    except asyncio.IncompleteReadError as exc:
        raise AuthenticationError(
            f"expected {n} bytes of {what}; the peer sent {len(exc.partial)} and closed"
        ) from None
    except TimeoutError:
        raise AuthenticationError(f"expected {what} within {timeout:.0f} s; got nothing") from None


async def authenticate_server(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    secret: bytes,
    *,
    timeout: float = HANDSHAKE_TIMEOUT,
) -> None:
    nonce = secrets.token_bytes(NONCE_BYTES)
    writer.write(MAGIC + nonce)
    await writer.drain()
    answer = await _read(reader, DIGEST_BYTES + NONCE_BYTES, timeout, "the client's challenge answer")
    if not hmac.compare_digest(answer[:DIGEST_BYTES], _digest(secret, b"client", nonce)):
        raise AuthenticationError("expected the HMAC of the cluster secret; got a wrong answer")
    writer.write(_digest(secret, b"server", answer[DIGEST_BYTES:]))
    await writer.drain()


async def authenticate_client(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    secret: bytes,
    *,
    timeout: float = HANDSHAKE_TIMEOUT,
) -> None:
    hello = await _read(reader, len(MAGIC) + NONCE_BYTES, timeout, "the server's challenge")
    if hello[: len(MAGIC)] != MAGIC:
        raise AuthenticationError(f"expected a strom server greeting {MAGIC!r}; got {hello[: len(MAGIC)]!r}")
    nonce = secrets.token_bytes(NONCE_BYTES)
    writer.write(_digest(secret, b"client", hello[len(MAGIC) :]) + nonce)
    await writer.drain()
    proof = await _read(reader, DIGEST_BYTES, timeout, "the server's proof")
    if not hmac.compare_digest(proof, _digest(secret, b"server", nonce)):
        raise AuthenticationError("expected the server to prove the cluster secret; its proof was wrong")
