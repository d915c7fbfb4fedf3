"""Length-prefixed, versioned frames on an asyncio stream.

Wire format of one frame::

    +----------------------+-----------+------------------------+
    | payload length (u32) | version   | payload (length bytes) |
    | big endian           | (u8) = 1  |                        |
    +----------------------+-----------+------------------------+

:data:`HEADER` is ``struct.Struct("!IB")``. The announced length is checked against the reader's limit
*before* the body is read, so a peer cannot make us buffer an oversized frame. A frame of an unknown
version, one that is too large, or one cut short by the end of the stream raises
:class:`~strom.exceptions.FrameError`; the caller closes that connection.

Frames carry opaque bytes: this module never decodes a payload. Framing is only used on connections
that already passed the handshake of :mod:`strom.runtime.rpc.auth`.
"""

from __future__ import annotations

import asyncio
import contextlib
import struct

from strom.exceptions import FrameError

__all__ = [
    "CLOSE_TIMEOUT",
    "DEFAULT_MAX_FRAME_BYTES",
    "FRAME_VERSION",
    "HEADER",
    "MAX_ENCODABLE_BYTES",
    "close_writer",
    "encode_frame",
    "encode_header",
    "peer_name",
    "read_frame",
    "write_frame",
]

FRAME_VERSION = 1
HEADER = struct.Struct("!IB")
DEFAULT_MAX_FRAME_BYTES = 256 * 1024 * 1024
MAX_ENCODABLE_BYTES = 2**32 - 1
"""The largest payload the 4-byte length field can announce."""
CLOSE_TIMEOUT = 5.0
"""Seconds :func:`close_writer` waits for a transport to finish closing."""


def encode_header(length: int) -> bytes:
    """The header announcing a payload of ``length`` bytes."""
    if not 0 <= length <= MAX_ENCODABLE_BYTES:
        raise FrameError(
            f"expected a payload of at most {MAX_ENCODABLE_BYTES} bytes; got {length}; "
            "hint: split the data into smaller messages"
        )
    return HEADER.pack(length, FRAME_VERSION)


def encode_frame(payload: bytes | memoryview) -> bytes:
    """Header and payload as one ``bytes`` object (copies the payload; see :func:`write_frame`)."""
    return encode_header(len(payload)) + bytes(payload)


async def write_frame(writer: asyncio.StreamWriter, payload: bytes | memoryview) -> None:
    """Write one frame and wait until the transport's buffer drained below its high-water mark.

    Header and payload are handed to the transport in one synchronous ``writelines`` call, so frames
    written by concurrent tasks never interleave and a large payload is not copied into a new buffer.
    """
    writer.writelines([encode_header(len(payload)), payload])
    await writer.drain()


async def read_frame(reader: asyncio.StreamReader, *, max_bytes: int) -> bytes | None:
    """The next frame's payload, or ``None`` on a clean end of stream before a header.

    Raises :class:`~strom.exceptions.FrameError` for an unknown version, a length above ``max_bytes``
    (nothing of the body is read then) or a stream that ends inside a frame.
    """
    try:
        header = await reader.readexactly(HEADER.size)
    except asyncio.IncompleteReadError as exc:
        if not exc.partial:
            return None
        raise FrameError(
            f"expected a {HEADER.size}-byte frame header; got {len(exc.partial)} bytes before the end of stream; "
            "hint: the peer closed the connection in the middle of a frame"
        ) from None
    length, version = HEADER.unpack(header)
    if version != FRAME_VERSION:
        raise FrameError(
            f"expected frame version {FRAME_VERSION}; got {version}; hint: both peers must run the same strom version"
        )
    if length > max_bytes:
        raise FrameError(
            f"expected a frame of at most {max_bytes} bytes; got a header announcing {length}; "
            "hint: raise the maximum frame size (taskmanager.network.max-frame-size) or send smaller messages"
        )
    try:
        return await reader.readexactly(length)
    except asyncio.IncompleteReadError as exc:
        raise FrameError(
            f"expected a {length}-byte frame body; got {len(exc.partial)} bytes before the end of stream; "
            "hint: the peer closed the connection in the middle of a frame"
        ) from None


def peer_name(writer: asyncio.StreamWriter) -> str:
    """``host:port`` of the remote end, for log messages."""
    peer = writer.get_extra_info("peername")
    return f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) and len(peer) >= 2 else str(peer)


async def close_writer(writer: asyncio.StreamWriter, *, timeout: float = CLOSE_TIMEOUT) -> None:
    """Close the stream and wait (at most ``timeout`` seconds) until the transport is gone."""
    writer.close()
    with contextlib.suppress(ConnectionError, OSError):  # OSError includes TimeoutError
        await asyncio.wait_for(writer.wait_closed(), timeout)
