"""Length-prefixed, versioned frames: ``!IB`` (payload length, version) then the payload.

The length is checked against the limit *before* the body is read, so a peer cannot make us buffer an
oversized frame; a bad version or a truncated frame raises :class:`~strom.exceptions.FrameError`.
"""

from __future__ import annotations

import asyncio
import struct

from strom.exceptions import FrameError

__all__ = ["DEFAULT_MAX_FRAME_BYTES", "FRAME_VERSION", "HEADER", "encode_frame", "read_frame", "write_frame"]

FRAME_VERSION = 1
HEADER = struct.Struct("!IB")
DEFAULT_MAX_FRAME_BYTES = 256 * 1024 * 1024


def encode_frame(payload: bytes | memoryview) -> bytes:
    return HEADER.pack(len(payload), FRAME_VERSION) + bytes(payload)


async def write_frame(writer: asyncio.StreamWriter, payload: bytes) -> None:
    writer.writelines([HEADER.pack(len(payload), FRAME_VERSION), payload])
    await writer.drain()


async def read_frame(reader: asyncio.StreamReader, *, max_bytes: int) -> bytes | None:
    """The next frame's payload; ``None`` on a clean end of stream before a header."""
    try:
        header = await reader.readexactly(HEADER.size)
    except asyncio.IncompleteReadError as exc:
        if not exc.partial:
            return None
        raise FrameError(f"expected a {HEADER.size}-byte frame header; got {len(exc.partial)} bytes") from None
    length, version = HEADER.unpack(header)
    if version != FRAME_VERSION:
        raise FrameError(
            f"expected frame version {FRAME_VERSION}; got {version}; hint: peers of different strom versions"
        )
    if length > max_bytes:
        raise FrameError(
            f"expected a frame of at most {max_bytes} bytes; got a header announcing {length}; "
            "hint: raise taskmanager.network.max-frame-size"
        )
    try:
        return await reader.readexactly(length)
    except asyncio.IncompleteReadError as exc:
        raise FrameError(f"expected a {length}-byte frame body; got {len(exc.partial)} bytes") from None
