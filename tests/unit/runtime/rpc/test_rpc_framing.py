"""Frames: round trip, version byte, size limit checked before the body, truncation."""

from __future__ import annotations

import asyncio
import struct

import pytest

from strom.exceptions import FrameError
from strom.runtime.rpc.framing import (
    DEFAULT_MAX_FRAME_BYTES,
    FRAME_VERSION,
    HEADER,
    encode_frame,
    read_frame,
    write_frame,
)


def _reader(data: bytes, *, eof: bool = True) -> asyncio.StreamReader:
    reader = asyncio.StreamReader()
    reader.feed_data(data)
    if eof:
        reader.feed_eof()
    return reader


@pytest.mark.timeout(20)
def test_constants_and_header_layout() -> None:
    assert FRAME_VERSION == 1
    assert HEADER.format == "!IB"
    assert HEADER.size == 5
    assert DEFAULT_MAX_FRAME_BYTES == 256 * 1024 * 1024
    assert encode_frame(b"abc") == struct.pack("!IB", 3, 1) + b"abc"
    assert encode_frame(memoryview(b"xy")) == struct.pack("!IB", 2, 1) + b"xy"


@pytest.mark.timeout(20)
def test_round_trip_of_several_frames_then_clean_eof() -> None:
    async def main() -> None:
        payloads = [b"", b"hello", bytes(range(256)) * 10]
        reader = _reader(b"".join(encode_frame(p) for p in payloads))
        for p in payloads:
            assert await read_frame(reader, max_bytes=10_000) == p
        assert await read_frame(reader, max_bytes=10_000) is None

    asyncio.run(main())


@pytest.mark.timeout(20)
def test_write_frame_over_a_real_connection() -> None:
    async def main() -> None:
        received: asyncio.Future[list[bytes | None]] = asyncio.get_running_loop().create_future()

        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            frames = [await read_frame(reader, max_bytes=1 << 20) for _ in range(3)]
            received.set_result(frames)
            writer.close()
            await writer.wait_closed()

        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        _, writer = await asyncio.open_connection("127.0.0.1", port)
        big = b"z" * 300_000
        await write_frame(writer, b"one")
        await write_frame(writer, big)
        writer.close()
        await writer.wait_closed()
        assert await asyncio.wait_for(received, 10) == [b"one", big, None]
        server.close()
        await server.wait_closed()

    asyncio.run(main())


@pytest.mark.timeout(20)
def test_bad_version_raises_frame_error() -> None:
    async def main() -> None:
        reader = _reader(struct.pack("!IB", 3, 2) + b"abc")
        with pytest.raises(FrameError, match="expected frame version 1; got 2"):
            await read_frame(reader, max_bytes=100)

    asyncio.run(main())


@pytest.mark.timeout(20)
def test_oversize_length_is_rejected_before_the_body_is_read() -> None:
    async def main() -> None:
        # Only the header and a few body bytes arrive, no EOF: reading the body would block forever.
        reader = _reader(struct.pack("!IB", 1_000_000, FRAME_VERSION) + b"0123456789", eof=False)
        with pytest.raises(FrameError, match="at most 100 bytes; got a header announcing 1000000"):
            await asyncio.wait_for(read_frame(reader, max_bytes=100), 5)
        # Nothing of the body was consumed.
        assert await asyncio.wait_for(reader.read(10), 5) == b"0123456789"

    asyncio.run(main())


@pytest.mark.timeout(20)
def test_truncated_body_and_truncated_header_raise_frame_error() -> None:
    async def main() -> None:
        with pytest.raises(FrameError, match="expected a 10-byte frame body; got 3 bytes"):
            await read_frame(_reader(struct.pack("!IB", 10, FRAME_VERSION) + b"abc"), max_bytes=100)
        with pytest.raises(FrameError, match="expected a 5-byte frame header; got 2 bytes"):
            await read_frame(_reader(b"\x00\x00"), max_bytes=100)
        assert await read_frame(_reader(b""), max_bytes=100) is None

    asyncio.run(main())
