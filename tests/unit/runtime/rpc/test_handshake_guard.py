"""Unauthenticated connections cost an endpoint a bounded number of pending handshakes and log lines.

The pure :class:`HandshakeGuard` with a manual clock, then a connect flood against both kinds of endpoint
(an :class:`RpcServer` and a TaskManager's data server) over loopback."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

import pytest

from strom.runtime.network.connection_manager import NettyConnectionManager
from strom.runtime.network.partition_manager import ResultPartitionManager
from strom.runtime.rpc import RpcClient, RpcServer, rpc_method
from strom.runtime.rpc.auth import DIGEST_BYTES, MAGIC, NONCE_BYTES, authenticate_client, new_secret
from strom.runtime.rpc.handshake_guard import MAX_PENDING_HANDSHAKES, HandshakeGuard, HandshakeGuardStatistics

pytestmark = pytest.mark.timeout(60)

SECRET = new_secret()
CHALLENGE = len(MAGIC) + NONCE_BYTES


class ManualClock:
    def __init__(self) -> None:
        self.now = 100.0

    def monotonic(self) -> float:
        return self.now


# -- the pure guard --------------------------------------------------------------------------------------
def test_beyond_max_pending_the_oldest_pending_handshake_is_evicted() -> None:
    guard: HandshakeGuard[str] = HandshakeGuard("ep", max_pending=3, clock=ManualClock())
    assert [guard.admit(k) for k in "abc"] == [None, None, None]
    assert guard.admit("d") == "a"  # the oldest goes, the newcomer stays
    assert guard.finish("b", authenticated=True)  # a real peer finished in time
    assert guard.admit("e") is None  # there was room again
    assert guard.admit("f") == "c"
    guard.validate()
    assert not guard.finish("a", authenticated=False)  # its driver learns it was evicted
    assert not guard.finish("c", authenticated=True)  # even if its handshake had just succeeded
    assert guard.statistics() == HandshakeGuardStatistics(pending=3, accepted=1, rejected=0, evicted=2)
    guard.validate()


def test_rejections_are_logged_once_per_interval_with_the_count_of_the_others() -> None:
    clock = ManualClock()
    guard: HandshakeGuard[str] = HandshakeGuard("ep", log_interval=10.0, clock=clock)
    first = guard.rejected("1.2.3.4:5", "wrong digest")
    assert first == "ep: rejected connection from 1.2.3.4:5: wrong digest"
    assert [guard.rejected("1.2.3.4:6", "wrong digest") for _ in range(1500)] == [None] * 1500
    clock.now += 9.9
    assert guard.rejected("1.2.3.4:7", "x") is None
    clock.now += 0.1
    assert guard.rejected("1.2.3.4:8", "timeout") == (
        "ep: rejected connection from 1.2.3.4:8: timeout (1501 more connections rejected since the last warning)"
    )
    assert guard.flush() is None  # nothing left untold
    guard.rejected("1.2.3.4:9", "x")
    assert guard.flush() == "ep: 1 more connection rejected since the last warning"
    assert guard.statistics().rejected == 1504
    guard.validate()


# -- a connect flood against real endpoints ----------------------------------------------------------------
@dataclass
class _Endpoint:
    address: tuple[str, int]
    statistics: Callable[[], tuple[int, int]]  # (pending, evicted)
    logger: str


class _Adder:
    @rpc_method
    def add(self, a: int, b: int) -> int:
        return a + b


@contextlib.asynccontextmanager
async def _endpoint(kind: str) -> AsyncIterator[_Endpoint]:
    if kind == "rpc":
        async with RpcServer(_Adder(), secret=SECRET, name="victim") as server:

            def rpc_stats() -> tuple[int, int]:
                s = server.statistics()
                return s.handshakes_pending, s.handshakes_evicted

            yield _Endpoint(server.address, rpc_stats, "strom.runtime.rpc.rpc_service")
    else:
        cm = NettyConnectionManager(ResultPartitionManager(), secret=SECRET, host="127.0.0.1", max_frame_bytes=1 << 20)
        await cm.start()

        def data_stats() -> tuple[int, int]:
            s = cm.handshakes.statistics()
            return s.pending, s.evicted

        try:
            yield _Endpoint(cm.address, data_stats, "strom.runtime.network.connection_manager")
        finally:
            await cm.close()


async def _authenticated_round_trip(kind: str, address: tuple[str, int]) -> None:
    """A peer holding the secret is served: an RPC answers, the data server takes a request."""
    if kind == "rpc":
        async with await RpcClient.connect(*address, secret=SECRET) as client:
            assert await client.call("add", 20, 22) == 42
    else:
        reader, writer = await asyncio.open_connection(*address)
        await authenticate_client(reader, writer, SECRET)
        writer.close()
        await writer.wait_closed()


async def _eventually(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 30
    while not condition():
        assert time.monotonic() < deadline, f"expected {what} within 30 s"
        await asyncio.sleep(0.01)


async def _closed_by_server(reader: asyncio.StreamReader) -> bool:
    try:
        return await asyncio.wait_for(reader.read(), 15) == b""
    except ConnectionResetError:
        return True


@pytest.mark.parametrize("kind", ["rpc", "data"])
def test_silent_connections_beyond_the_cap_push_out_the_oldest_and_real_peers_still_get_in(
    kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    extra = 40

    async def main() -> None:
        async with _endpoint(kind) as ep:
            silent: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
            try:
                for _ in range(MAX_PENDING_HANDSHAKES + extra):  # each waits for its challenge, then says nothing
                    reader, writer = await asyncio.open_connection(*ep.address)
                    await asyncio.wait_for(reader.readexactly(CHALLENGE), 15)
                    silent.append((reader, writer))
                await _eventually(lambda: ep.statistics() == (MAX_PENDING_HANDSHAKES, extra), "the cap to hold")
                # the oldest were closed at once — long before their handshake timeout — the newest still wait
                for reader, _ in silent[:extra]:
                    assert await _closed_by_server(reader)
                # with the cap full of silent connections, a peer holding the secret is served
                await _authenticated_round_trip(kind, ep.address)
                assert ep.statistics()[0] <= MAX_PENDING_HANDSHAKES
            finally:
                for _, writer in silent:
                    writer.close()

    with caplog.at_level(logging.WARNING):
        asyncio.run(main())
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert 1 <= len(warnings) <= 3, warnings  # one per 10 s from the first rejection on, one with the rest at close
    assert "got pushed out by newer connections" in warnings[0]


@pytest.mark.parametrize("kind", ["rpc", "data"])
def test_a_flood_of_wrong_answers_is_logged_as_one_line_with_a_count(
    kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    flood = 300

    async def main() -> None:
        async with _endpoint(kind) as ep:
            for _ in range(flood):
                reader, writer = await asyncio.open_connection(*ep.address)
                await asyncio.wait_for(reader.readexactly(CHALLENGE), 15)
                writer.write(b"\x00" * (DIGEST_BYTES + NONCE_BYTES))  # the HMAC of no secret
                assert await _closed_by_server(reader)
                writer.close()
            await _authenticated_round_trip(kind, ep.address)  # still serving

    with caplog.at_level(logging.WARNING):
        asyncio.run(main())
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) <= 3, warnings[:5]  # one per 10 s interval plus the count at close, not one per connection
    assert "rejected connection from 127.0.0.1" in warnings[0] and "wrong digest" in warnings[0]
    # every rejection is accounted for: logged on its own line or counted in a later one
    logged = sum("rejected connection from" in w for w in warnings)
    counted = sum(int(n) for w in warnings for n in re.findall(r"(\d+) more connections? rejected", w))
    assert logged + counted == flood
