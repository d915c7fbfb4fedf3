"""``NettyConnectionManager``: the TaskManager's data-plane server and its client connections.

* The server (Flink's ``PartitionRequestServerHandler``) authenticates each connection, then serves
  partition requests: one *view* per requested subpartition, which sends a buffer only against credit
  and tells the receiver its backlog.
* A client (``PartitionRequestClient``) is one multiplexed connection per remote TaskManager; every
  ``RemoteInputChannel`` of this TaskManager that reads from there shares it, told apart by receiver id.

Everything here runs on the TaskManager's event loop; task threads reach it only through the
``call_soon_threadsafe`` helpers at the bottom of :class:`NettyConnectionManager`.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import pickle
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from strom.exceptions import AuthenticationError, ClusterError, FrameError, SerializationError
from strom.runtime.network import messages as m
from strom.runtime.network.credit import CreditAnnouncement, CreditError, CreditSender
from strom.runtime.network.events import EndOfPartitionEvent, is_priority_event
from strom.runtime.network.input_channel import RemoteInputChannel
from strom.runtime.network.input_gate import InputGate
from strom.runtime.network.partition_manager import ResultPartitionManager, SubpartitionCallback
from strom.runtime.network.result_partition import PartitionReleasedError, SerializedBatch
from strom.runtime.network.result_subpartition_view import ResultSubpartitionView
from strom.runtime.rpc.auth import authenticate_admitted, authenticate_client
from strom.runtime.rpc.framing import FRAME_VERSION, HEADER, peer_name, read_frame
from strom.runtime.rpc.handshake_guard import HandshakeGuard
from strom.runtime.task_group import AsyncTaskGroup

if TYPE_CHECKING:
    from strom.runtime.net.internal_ssl import InternalSslContexts

__all__ = ["NettyConnectionManager", "PartitionRequestClient", "announce"]

log = logging.getLogger(__name__)


def _write(writer: asyncio.StreamWriter, *parts: bytes) -> None:
    size = sum(len(p) for p in parts)
    writer.writelines([HEADER.pack(size, FRAME_VERSION), *parts])


@dataclass(slots=True)
class _View:
    """A served subpartition (Flink's ``CreditBasedSequenceNumberingViewReader``)."""

    receiver_id: int
    sender: CreditSender
    sp: ResultSubpartitionView | None = None
    wake_pending: bool = False


class _ServerConnection:
    def __init__(
        self, owner: NettyConnectionManager, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        self.owner = owner
        self.reader = reader
        self.writer = writer
        self.views: dict[int, _View] = {}
        self.loop = asyncio.get_running_loop()

    async def serve(self) -> None:
        """Serve requests until the peer closes; :class:`FrameError` for a garbled or unknown message."""
        while True:
            frame = await read_frame(self.reader, max_bytes=self.owner.max_frame_bytes)
            if frame is None:
                return
            kind = m.message_type(frame)
            if kind == m.PARTITION_REQUEST:
                rid, credit, index, pid = m.decode_partition_request(frame)
                self.views[rid] = _View(receiver_id=rid, sender=CreditSender(credit))
                self.owner.partition_manager.request_local(pid, index, self._subpartition_callback(rid))
            elif kind == m.ADD_CREDIT:
                rid, credit = m.decode_add_credit(frame)
                view = self.views.get(rid)
                if view is not None:
                    try:
                        view.sender.add_credit(credit)
                    except CreditError as exc:
                        raise FrameError(str(exc)) from exc
                    self._try_send(rid)
            elif kind == m.CANCEL_REQUEST:
                self._drop(m.decode_receiver(frame))
            else:
                raise FrameError(f"expected a data-plane request (type 1, 2 or 4); got type {kind}")

    def _subpartition_callback(self, rid: int) -> SubpartitionCallback:
        def answered(sp: ResultSubpartitionView | None, err: BaseException | None) -> None:
            self._threadsafe(self._on_subpartition, rid, sp, err)  # may be called on a task thread

        return answered

    def _threadsafe(self, fn: Any, *args: Any) -> None:
        with contextlib.suppress(RuntimeError):  # loop closed: the TaskManager is shutting down
            self.loop.call_soon_threadsafe(fn, *args)

    def _on_subpartition(self, rid: int, sp: ResultSubpartitionView | None, err: BaseException | None) -> None:
        view = self.views.get(rid)
        if view is None:
            return
        if sp is None:
            self._send_error(rid, str(err))
            return
        view.sp = sp
        sp.remote = True  # from now on the producer serializes what it adds

        def data_available() -> None:  # producer thread: one wake-up until the loop has looked
            if not view.wake_pending:
                view.wake_pending = True
                self._threadsafe(self._try_send, rid)

        sp.listener = data_available
        self._try_send(rid)

    def _try_send(self, rid: int) -> None:
        """Send what the credit allows: data only against credit, events at once."""
        view = self.views.get(rid)
        if view is None or view.sp is None or self.writer.is_closing():
            return
        view.wake_pending = False  # cleared before polling: data added from now on wakes us again
        sp, sender = view.sp, view.sender
        partition = sp.partition
        while True:
            try:
                if not sender.can_send(sender.credit <= 0 and sp.head_is_event()):
                    return
                buf = sp.poll()
            except PartitionReleasedError as exc:
                self._send_error(rid, f"producer released the partition: {exc}")
                return
            if buf is None:
                return
            if type(buf) is SerializedBatch:
                kind = m.DATA_BUFFER
                data = buf.data
            elif isinstance(buf, list):  # added before this view attached
                kind = m.DATA_BUFFER
                try:
                    data = partition.serialize(buf)
                except SerializationError as exc:  # the consumer fails with it; the producer may have finished
                    self._send_error(rid, str(exc))
                    return
            else:
                if isinstance(buf, EndOfPartitionEvent):
                    kind = m.END_OF_PARTITION_BUFFER
                else:
                    kind = m.PRIORITY_EVENT_BUFFER if is_priority_event(buf) else m.EVENT_BUFFER
                data = pickle.dumps(buf, protocol=5)
            seq = sender.on_send(kind != m.DATA_BUFFER)
            partition.num_bytes_out += len(data)
            _write(self.writer, m.encode_buffer_header(rid, seq, sp.backlog(), kind), data)
            if kind == m.END_OF_PARTITION_BUFFER:
                self._drop(rid)
                return

    def _send_error(self, rid: int, message: str) -> None:
        self._drop(rid)
        if not self.writer.is_closing():
            _write(self.writer, m.encode_error(rid, message))

    def _drop(self, rid: int) -> None:
        view = self.views.pop(rid, None)
        if view is not None and view.sp is not None:
            view.sp.listener = None
            view.sp.remote = False

    def close(self) -> None:
        for rid in list(self.views):
            self._drop(rid)
        self.writer.close()


class PartitionRequestClient:
    """One authenticated connection to a remote TaskManager's data server, shared by many channels."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, address: str) -> None:
        self.reader = reader
        self.writer = writer
        self.address = address
        self.channels: dict[int, RemoteInputChannel] = {}
        self.closed = False

    async def read_loop(self, max_frame_bytes: int) -> None:
        """Hand buffers to their channels until the connection ends; then fail the channels still open.

        Never raises: a bad frame (:class:`FrameError`) is logged once and closes this connection only."""
        error: BaseException = ClusterError(
            f"expected the data connection to TaskManager {self.address} to stay open; it was closed; "
            "hint: that TaskManager may have died"
        )
        try:
            while (frame := await read_frame(self.reader, max_bytes=max_frame_bytes)) is not None:
                self._on_frame(frame)
        except FrameError as exc:
            log.error("data connection to TaskManager %s: %s; closing it", self.address, exc)
            error = ClusterError(f"data connection to TaskManager {self.address} closed: {exc}")
        except (ConnectionError, OSError) as exc:
            error = ClusterError(f"data connection to TaskManager {self.address} failed: {exc}")
        except Exception as exc:  # a bug: fail the channels with it rather than leave them waiting
            log.exception("data connection to TaskManager %s failed; closing it", self.address)
            error = ClusterError(f"data connection to TaskManager {self.address} failed: {exc!r}")
        finally:
            self.closed = True
            self.writer.close()
            for ch in self.channels.values():
                ch.on_error(error)
            self.channels.clear()

    def _on_frame(self, frame: bytes) -> None:
        kind = m.message_type(frame)
        if kind == m.BUFFER_RESPONSE:
            rid, seq, backlog, buffer_kind = m.decode_buffer_header(frame)
            ch = self.channels.get(rid)
            if ch is None:
                return  # cancelled meanwhile: the buffer was on the wire
            pool = ch.gate.credit
            try:
                grants = pool.on_buffer(ch.channel_index, seq, backlog, buffer_kind != m.DATA_BUFFER)
            except CreditError as exc:
                raise FrameError(f"{exc} (input channel {ch.channel_index} of {ch.partition_id})") from exc
            if not pool.is_open(ch.channel_index):
                return  # released on the task side; the cancel is on its way to the sender
            ch.on_buffer(buffer_kind, memoryview(frame)[m.BUFFER_HEADER.size :])
            announce(ch.gate, grants)
            if buffer_kind == m.END_OF_PARTITION_BUFFER:
                self.channels.pop(rid, None)
                announce(ch.gate, pool.release_channel(ch.channel_index))
        elif kind == m.ERROR_RESPONSE:
            ch = self.channels.pop(m.decode_receiver(frame), None)
            if ch is not None:
                ch.on_error(ClusterError(frame[m.RECEIVER.size :].decode(errors="replace")))
        else:
            raise FrameError(f"expected a data-plane response (type 0 or 3); got type {kind}")

    def request(self, channel: RemoteInputChannel) -> None:
        self.channels[channel.receiver_id] = channel
        _write(
            self.writer,
            m.encode_partition_request(
                channel.receiver_id, channel.partition_id, channel.subpartition_index, channel.initial_credit
            ),
        )

    def add_credit(self, channel: RemoteInputChannel, credit: int) -> None:
        if channel.receiver_id in self.channels and not self.writer.is_closing():
            _write(self.writer, m.encode_add_credit(channel.receiver_id, credit))

    def cancel(self, channel: RemoteInputChannel) -> None:
        if self.channels.pop(channel.receiver_id, None) is not None and not self.writer.is_closing():
            _write(self.writer, m.encode_cancel(channel.receiver_id))


def announce(gate: InputGate, grants: list[CreditAnnouncement]) -> None:
    """Send credit announcements of a gate's channels, each over its own connection (event loop)."""
    for grant in grants:
        ch = gate.channels[grant.channel]
        client: PartitionRequestClient | None = getattr(ch, "client", None)
        if client is not None:
            client.add_credit(ch, grant.credit)  # type: ignore[arg-type]


class NettyConnectionManager:
    def __init__(
        self,
        partition_manager: ResultPartitionManager,
        *,
        secret: bytes,
        host: str,
        max_frame_bytes: int,
        ssl_contexts: InternalSslContexts | None = None,
    ) -> None:
        self.partition_manager = partition_manager
        self.secret = secret
        self.ssl_contexts = ssl_contexts  # internal TLS (security.ssl.internal.*)
        self.host = host
        self.max_frame_bytes = max_frame_bytes
        self.address: tuple[str, int] = (host, 0)
        self.handshakes: HandshakeGuard[asyncio.StreamWriter] = HandshakeGuard("data server")
        self._server: asyncio.Server | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server_conns: set[_ServerConnection] = set()
        self._clients: dict[tuple[str, int], asyncio.Future[PartitionRequestClient]] = {}
        self._tasks = AsyncTaskGroup("data connections")  # read loops, connects, partition requests
        self._handlers: set[asyncio.Task[Any]] = set()
        self._recycle_lock = threading.Lock()
        self._recycled: list[RemoteInputChannel] = []
        self._recycle_scheduled = False
        self._receiver_ids = itertools.count(1)

    async def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        tls = self.ssl_contexts.server if self.ssl_contexts is not None else None
        self._server = await asyncio.start_server(self._handle, self.host, 0, ssl=tls)
        self.address = self._server.sockets[0].getsockname()[:2]

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = peer_name(writer)
        me = asyncio.current_task()
        if me is not None:  # awaited (never cancelled: asyncio 3.11 logs a cancelled handler) on close
            self._handlers.add(me)
            me.add_done_callback(self._handlers.discard)
        try:
            await authenticate_admitted(self.handshakes, reader, writer, self.secret)
        except AuthenticationError as exc:
            if (warning := self.handshakes.rejected(peer, str(exc))) is not None:
                log.warning(warning)
            writer.close()
            return
        conn = _ServerConnection(self, reader, writer)
        self._server_conns.add(conn)
        try:
            await conn.serve()
        except FrameError as exc:
            log.error("data server: closing connection from %s: %s", peer, exc)
        except (ConnectionError, OSError):
            pass
        except Exception:  # a bug: this connection ends, the server serves on
            log.exception("data server: closing connection from %s", peer)
        finally:
            self._server_conns.discard(conn)
            conn.close()

    async def _connect(self, host: str, port: int) -> PartitionRequestClient:
        tls = self.ssl_contexts.client if self.ssl_contexts is not None else None
        reader, writer = await asyncio.open_connection(
            host, port, limit=1 << 20, ssl=tls, server_hostname=host if tls is not None else None
        )
        await authenticate_client(reader, writer, self.secret)
        client = PartitionRequestClient(reader, writer, f"{host}:{port}")
        self._tasks.create_task(client.read_loop(self.max_frame_bytes), name=f"data connection to {host}:{port}")
        return client

    async def _client_for(self, address: tuple[str, int]) -> PartitionRequestClient:
        fut = self._clients.get(address)
        if fut is not None and fut.done() and (fut.exception() is not None or fut.result().closed):
            fut = None
        if fut is None:
            fut = self._tasks.create_task(self._connect(*address), name=f"connect to {address}", awaited=True)
            self._clients[address] = fut
        return await fut

    async def _request(self, channel: RemoteInputChannel, address: tuple[str, int]) -> None:
        try:
            client = await self._client_for(address)
        except (OSError, AuthenticationError, FrameError) as exc:
            channel.on_error(ClusterError(f"cannot reach the data server of TaskManager {address}: {exc}"))
            return
        if not channel.gate.credit.is_open(channel.channel_index):
            return  # released while we connected: a request now would bring buffers nobody accounts for
        channel.receiver_id = next(self._receiver_ids)
        channel.client = client
        client.request(channel)

    # -- thread-safe entry points for task threads -------------------------------------------------
    def request_subpartition(self, channel: RemoteInputChannel, address: tuple[str, int]) -> None:
        assert self._loop is not None

        def start() -> None:
            self._tasks.create_task(self._request(channel, address), name=f"partition request to {address}")

        self._loop.call_soon_threadsafe(start)

    def recycle(self, channel: RemoteInputChannel) -> None:
        """The task consumed a data buffer of ``channel``: free it on the loop (and announce credit).

        Recycles are coalesced: one loop wake-up drains all that piled up meanwhile, and the credit of a
        channel goes out as one announcement."""
        with self._recycle_lock:
            self._recycled.append(channel)
            if self._recycle_scheduled:
                return
            self._recycle_scheduled = True
        if self._loop is not None:
            with contextlib.suppress(RuntimeError):
                self._loop.call_soon_threadsafe(self._drain_recycled)

    def _drain_recycled(self) -> None:
        with self._recycle_lock:
            channels = self._recycled
            self._recycled = []
            self._recycle_scheduled = False
        credit: dict[RemoteInputChannel, int] = {}
        for channel in channels:
            for grant in channel.gate.credit.on_recycle(channel.channel_index):  # nothing once released
                target = channel.gate.channels[grant.channel]
                assert isinstance(target, RemoteInputChannel)
                credit[target] = credit.get(target, 0) + grant.credit
        for target, n in credit.items():
            if target.client is not None:
                target.client.add_credit(target, n)

    def cancel_request(self, channel: RemoteInputChannel) -> None:
        if self._loop is not None:
            with contextlib.suppress(RuntimeError):
                self._loop.call_soon_threadsafe(self._on_cancel, channel)

    def _on_cancel(self, channel: RemoteInputChannel) -> None:
        client: PartitionRequestClient | None = channel.client
        if client is not None:
            client.cancel(channel)
        announce(channel.gate, channel.gate.credit.release_channel(channel.channel_index))

    async def close(self) -> None:
        """Stop serving, close every connection and wait until their transports are gone."""
        if self._server is not None:
            self._server.close()
            self._server = None
        writers = [conn.writer for conn in self._server_conns]
        for conn in list(self._server_conns):
            conn.close()
        for fut in self._clients.values():
            if fut.done() and not fut.cancelled() and fut.exception() is None:
                writers.append(fut.result().writer)
                fut.result().writer.close()
            else:
                fut.cancel()
        self._clients.clear()
        self._tasks.close()
        self._tasks.cancel()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(5.0):
                await asyncio.gather(self._tasks.stop(), *self._handlers, return_exceptions=True)
                await asyncio.gather(*(w.wait_closed() for w in writers), return_exceptions=True)
        if (warning := self.handshakes.flush()) is not None:
            log.warning(warning)
