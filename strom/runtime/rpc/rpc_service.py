"""Remote calls over authenticated frames.

:class:`RpcServer` serves the :func:`rpc_method` s of one endpoint object; :class:`RpcClient` is a
gateway to one remote endpoint. Each accepted connection first runs the handshake of
:mod:`strom.runtime.rpc.auth`; only then are frames read and unpickled. A peer that fails the
handshake, sends a malformed or oversized frame or anything but an ``RpcInvocation`` loses its
connection with a logged warning — never the server, never other connections.

Every invocation runs as its own asyncio task, so a slow call does not hold up others on the same
connection; responses on one connection are written under a lock. Endpoint methods may be plain
functions (they run on the event loop and must be quick) or ``async def``. No threads.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import ssl
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from strom.exceptions import AuthenticationError, FrameError, RpcError
from strom.runtime.rpc import framing, messages
from strom.runtime.rpc.auth import authenticate_admitted, authenticate_client
from strom.runtime.rpc.framing import CLOSE_TIMEOUT, DEFAULT_MAX_FRAME_BYTES, close_writer, peer_name
from strom.runtime.rpc.handshake_guard import HandshakeGuard
from strom.runtime.rpc.messages import PendingCalls, RpcInvocation, RpcResponse, describe
from strom.runtime.task_group import AsyncTaskGroup

__all__ = ["WRITE_TIMEOUT", "RpcClient", "RpcServer", "RpcServerStatistics", "rpc_method"]

log = logging.getLogger(__name__)
F = TypeVar("F", bound=Callable[..., Any])

WRITE_TIMEOUT = 60.0
"""Seconds a peer may leave our frames unread before we give up on its connection."""

_RPC_ATTR = "__strom_rpc_method__"


def rpc_method(fn: F) -> F:
    """Mark an endpoint method as callable by authenticated peers; unmarked methods are refused."""
    setattr(fn, _RPC_ATTR, True)
    return fn


def _is_rpc_method(endpoint: object, name: str) -> bool:
    try:
        attr = inspect.getattr_static(endpoint, name)
    except AttributeError:
        return False
    attr = getattr(attr, "__func__", attr)  # staticmethod / classmethod wrappers
    return getattr(attr, _RPC_ATTR, False) is True


@contextlib.asynccontextmanager
async def _deadline(seconds: float | None, message: str) -> AsyncIterator[None]:
    """``asyncio.timeout`` raising ``RpcError(message)``; a ``TimeoutError`` raised by the body passes through."""
    timeout = asyncio.timeout(seconds)
    try:
        async with timeout:
            yield
    except TimeoutError:
        if not timeout.expired():
            raise
        raise RpcError(message) from None


@dataclass(slots=True)
class _Connection:
    """One authenticated server-side connection: its writer, peer name and the lock serializing writes."""

    writer: asyncio.StreamWriter
    peer: str
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


@dataclass(frozen=True, slots=True, kw_only=True)
class RpcServerStatistics:
    """Connections that passed / failed the handshake (evicted ones included), handshakes pushed out by newer
    connections (see :class:`~strom.runtime.rpc.handshake_guard.HandshakeGuard`), handshakes running now, and
    invocations run to completion (ok or not)."""

    connections_accepted: int
    connections_rejected: int
    handshakes_evicted: int
    handshakes_pending: int
    calls_served: int


class RpcServer:
    """Serves ``endpoint``'s :func:`rpc_method` s to peers holding ``secret``."""

    def __init__(
        self,
        endpoint: object,
        *,
        secret: bytes,
        host: str = "127.0.0.1",
        port: int = 0,
        max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
        name: str = "rpc",
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self.endpoint = endpoint
        self.ssl_context = ssl_context  # internal TLS (security.ssl.internal.*): the server's context
        self.secret = secret
        self.host = host
        self.port = port
        self.max_frame_bytes = max_frame_bytes
        self.name = name
        self._server: asyncio.Server | None = None
        self._address: tuple[str, int] | None = None
        self._closed = False
        self._writers: set[asyncio.StreamWriter] = set()
        self._handlers: set[asyncio.Task[Any]] = set()  # one per connection, created by asyncio.start_server
        self._calls: set[asyncio.Task[Any]] = set()  # running invocations
        self._tasks = AsyncTaskGroup(f"RPC server {name}")  # their owner
        self._handshakes: HandshakeGuard[asyncio.StreamWriter] = HandshakeGuard(name)
        self._stats = {"connections_accepted": 0, "connections_rejected": 0, "calls_served": 0}

    @property
    def address(self) -> tuple[str, int]:
        """The bound ``(host, port)``; the actual port when constructed with ``port=0``."""
        if self._address is None:
            raise RpcError(f"expected a started RpcServer {self.name!r}; got one not listening; hint: await start()")
        return self._address

    async def start(self) -> None:
        if self._closed:
            raise RpcError(f"expected an open RpcServer {self.name!r}; got a closed one; hint: create a new server")
        if self._server is None:
            self._server = await asyncio.start_server(self._handle, self.host, self.port, ssl=self.ssl_context)
            sockname = self._server.sockets[0].getsockname()
            self._address = (str(sockname[0]), int(sockname[1]))
            log.debug("%s: serving rpc on %s:%d", self.name, *self._address)

    def statistics(self) -> RpcServerStatistics:
        handshakes = self._handshakes.statistics()
        return RpcServerStatistics(
            **self._stats, handshakes_evicted=handshakes.evicted, handshakes_pending=handshakes.pending
        )

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if self._closed or task is None:
            writer.close()
            return
        self._handlers.add(task)
        self._writers.add(writer)
        try:
            await self._serve(reader, _Connection(writer, peer_name(writer)))
        finally:
            self._handlers.discard(task)
            self._writers.discard(writer)
            await close_writer(writer)

    async def _serve(self, reader: asyncio.StreamReader, conn: _Connection) -> None:
        try:
            await authenticate_admitted(self._handshakes, reader, conn.writer, self.secret)
        except AuthenticationError as exc:
            if not self._closed:  # else close() cut the handshake short
                self._stats["connections_rejected"] += 1
                if (warning := self._handshakes.rejected(conn.peer, str(exc))) is not None:
                    log.warning(warning)
            return
        self._stats["connections_accepted"] += 1
        while True:
            try:
                frame = await framing.read_frame(reader, max_bytes=self.max_frame_bytes)
            except (ConnectionError, OSError) as exc:
                log.debug("%s: connection from %s failed: %s", self.name, conn.peer, exc)
                return
            except FrameError as exc:
                log.warning("%s: closing connection from %s: %s", self.name, conn.peer, exc)
                return
            if frame is None:
                log.debug("%s: %s closed its connection", self.name, conn.peer)
                return
            try:
                inv = messages.decode(frame)
                if not isinstance(inv, RpcInvocation) or not isinstance(inv.method, str):
                    raise FrameError(f"expected an RpcInvocation; got {type(inv).__name__}")
            except Exception as exc:
                log.warning("%s: closing connection from %s: bad frame (%s)", self.name, conn.peer, describe(exc))
                return
            del frame
            call = self._tasks.create_task(self._invoke(inv, conn), name=f"{self.name}:{inv.method}")
            self._calls.add(call)
            call.add_done_callback(self._calls.discard)

    async def _dispatch(self, inv: RpcInvocation) -> Any:
        if not _is_rpc_method(self.endpoint, inv.method):
            names = sorted(n for n in dir(self.endpoint) if _is_rpc_method(self.endpoint, n))
            raise RpcError(
                f"expected one of the endpoint's rpc methods {names}; got {inv.method!r}; "
                "hint: mark the method with @rpc_method"
            )
        result = getattr(self.endpoint, inv.method)(*inv.args, **inv.kwargs)
        return await result if inspect.isawaitable(result) else result

    async def _invoke(self, inv: RpcInvocation, conn: _Connection) -> None:
        error: Exception | None = None
        try:
            result = await self._dispatch(inv)
        except asyncio.CancelledError:
            if (task := asyncio.current_task()) is None or task.cancelling():
                raise  # this invocation is being cancelled: the server is closing
            # the method met someone else's cancellation (e.g. it awaited a cancelled future): report it
            error = RpcError(f"expected {inv.method!r} to return; got asyncio.CancelledError; hint: see its traceback")
        except Exception as exc:
            error = exc
        self._stats["calls_served"] += 1
        if error is not None:
            level = logging.WARNING if inv.oneway else logging.DEBUG
            log.log(level, "%s: call %r from %s failed: %s", self.name, inv.method, conn.peer, describe(error))
        if inv.oneway:
            return
        if error is None:
            payload = messages.encode_response(inv.call_id, result, max_bytes=self.max_frame_bytes)
        else:
            payload = messages.encode_error_response(inv.call_id, error)
        if conn.writer.is_closing():
            log.debug("%s: dropping the response to %s: its connection is closed", self.name, conn.peer)
            return
        try:
            unread = f"expected {conn.peer} to read its responses within {WRITE_TIMEOUT:g} s; got no progress"
            async with _deadline(WRITE_TIMEOUT, unread), conn.lock:
                await framing.write_frame(conn.writer, payload)
        except RpcError as exc:
            log.warning("%s: closing connection: %s", self.name, exc)
            conn.writer.close()
        except (ConnectionError, OSError) as exc:
            log.debug("%s: could not answer %s: %s", self.name, conn.peer, exc)

    async def close(self) -> None:
        """Stop listening, close every connection and cancel running invocations (idempotent)."""
        if self._closed:
            return
        self._closed = True
        server, self._server = self._server, None
        if server is not None:
            server.close()
        if (warning := self._handshakes.flush()) is not None:
            log.warning(warning)
        for writer in list(self._writers):
            writer.transport.abort()  # handlers then see EOF and return; cancelling them makes 3.11 log errors
        current = asyncio.current_task()
        for call in self._calls:
            if call is not current:
                call.cancel()
        tasks = [t for t in (*self._handlers, *self._calls) if t is not current]
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=CLOSE_TIMEOUT)
            for t in pending:
                log.warning("%s: task %s still running %g s after close(); cancelling it", self.name, t, CLOSE_TIMEOUT)
                t.cancel()
        if server is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(server.wait_closed(), CLOSE_TIMEOUT)

    async def __aenter__(self) -> RpcServer:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()


class RpcClient:
    """A gateway to one remote endpoint over one authenticated connection; create it with :meth:`connect`.

    ``on_disconnect`` (if set) is called once when the connection is lost — not after :meth:`close`.
    """

    def __init__(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *, max_frame_bytes: int, name: str
    ) -> None:
        self._reader = reader
        self._writer = writer
        self.max_frame_bytes = max_frame_bytes
        self.name = name
        self.peer = peer_name(writer)
        self.on_disconnect: Callable[[], None] | None = None
        self._calls = PendingCalls(name=name, peer=self.peer)
        self._write_lock = asyncio.Lock()
        self._closed = False  # no more calls: lost or closed
        self._close_called = False
        self._tasks = AsyncTaskGroup(f"RPC client {name}")
        self._read_task = self._tasks.create_task(self._read_loop(), name=f"{name}:responses")

    @classmethod
    async def connect(
        cls,
        host: str,
        port: int,
        *,
        secret: bytes,
        max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
        timeout: float = 10.0,
        name: str = "rpc",
        ssl_context: ssl.SSLContext | None = None,
    ) -> RpcClient:
        """Connect (over TLS with ``ssl_context``, internal TLS's client context) and authenticate; :class:`RpcError`
        if unreachable or the TLS handshake fails, :class:`AuthenticationError`."""
        try:
            async with asyncio.timeout(timeout):
                reader, writer = await asyncio.open_connection(
                    host, port, ssl=ssl_context, server_hostname=host if ssl_context is not None else None
                )
        except ssl.SSLError as exc:
            raise RpcError(
                f"{name}: expected a TLS handshake with {host}:{port} (security.ssl.internal.enabled); got {exc}; "
                "hint: every cluster process needs internal TLS on, with a keystore the others' truststore signed"
            ) from exc
        except OSError as exc:  # includes TimeoutError
            raise RpcError(
                f"{name}: expected to connect to {host}:{port} within {timeout:g} s; got {describe(exc)}; "
                "hint: is the remote process running?"
            ) from exc
        try:
            await authenticate_client(reader, writer, secret, timeout=timeout)
        except BaseException:
            writer.close()
            raise
        return cls(reader, writer, max_frame_bytes=max_frame_bytes, name=name)

    @property
    def closed(self) -> bool:
        return self._closed

    def _check_open(self, method: str) -> None:
        if self._closed:
            raise RpcError(
                f"{self.name}: expected an open connection to {self.peer} for {method!r}; got a closed one; "
                "hint: the remote process may have stopped; connect again"
            )

    async def _read_loop(self) -> None:
        reason = "the peer closed the connection"
        try:
            while (frame := await framing.read_frame(self._reader, max_bytes=self.max_frame_bytes)) is not None:
                resp = messages.decode(frame)
                if not isinstance(resp, RpcResponse):
                    raise FrameError(f"expected an RpcResponse; got {type(resp).__name__}")
                self._calls.complete(resp)
        except (ConnectionError, OSError) as exc:
            reason = describe(exc)
        except Exception as exc:
            reason = describe(exc)
            log.warning("%s: closing connection to %s: %s", self.name, self.peer, reason)
        if self._closed:
            return
        self._closed = True
        self._writer.close()
        log.debug("%s: connection to %s lost: %s", self.name, self.peer, reason)
        self._calls.fail_all(f"a lost connection ({reason})")
        if self.on_disconnect is not None:
            try:
                self.on_disconnect()
            except Exception:
                log.exception("%s: on_disconnect callback failed", self.name)

    async def _send(self, inv: RpcInvocation) -> None:
        payload = messages.encode(inv)
        if len(payload) > self.max_frame_bytes:
            raise RpcError(
                f"{self.name}: expected an invocation of at most {self.max_frame_bytes} bytes; "
                f"got {len(payload)} for {inv.method!r}; hint: pass less data per call"
            )
        async with self._write_lock:
            self._check_open(inv.method)
            try:
                await framing.write_frame(self._writer, payload)
            except (ConnectionError, OSError) as exc:
                raise RpcError(
                    f"{self.name}: expected to send {inv.method!r} to {self.peer}; got {describe(exc)}; "
                    "hint: the remote process may have failed"
                ) from exc

    async def call(self, method: str, *args: Any, timeout: float | None = 30.0, **kwargs: Any) -> Any:
        """Invoke ``method`` remotely and return its result, or raise its exception.

        ``timeout`` (seconds, ``None`` for none) covers sending and waiting and is reserved: a remote
        keyword argument cannot be named ``timeout``. Raises :class:`RpcError` on timeout, on a lost
        connection, for unknown methods and for remote exceptions that could not be pickled;
        :class:`~strom.exceptions.SerializationError` if the arguments cannot be pickled.
        """
        self._check_open(method)
        call_id, fut = self._calls.open()
        too_late = (
            f"{self.name}: expected {method!r} on {self.peer} to answer within {timeout} s; got no answer; "
            "hint: the remote side is slow or stuck; pass a larger timeout"
        )
        try:
            async with _deadline(timeout, too_late):
                await self._send(RpcInvocation(call_id=call_id, method=method, args=args, kwargs=kwargs))
                return await fut
        finally:
            self._calls.discard(call_id)
            if fut.done() and not fut.cancelled():
                fut.exception()  # the caller was cancelled just as the call failed (a cluster closing on Ctrl-C)

    async def tell(self, method: str, *args: Any, **kwargs: Any) -> None:
        """Invoke ``method`` remotely without waiting for (or getting) a result; errors are logged remotely."""
        self._check_open(method)
        stuck = f"{self.name}: expected {self.peer} to accept {method!r} within {WRITE_TIMEOUT:g} s; got no progress"
        async with _deadline(WRITE_TIMEOUT, stuck):
            await self._send(RpcInvocation(call_id=0, method=method, args=args, kwargs=kwargs, oneway=True))

    async def close(self) -> None:
        """Close the connection (idempotent); pending calls fail with :class:`RpcError`."""
        if self._close_called:
            return
        self._close_called = self._closed = True
        self._calls.fail_all("a closed client (close() was called)")
        if self._read_task is not asyncio.current_task():
            self._read_task.cancel()
            await asyncio.wait([self._read_task], timeout=CLOSE_TIMEOUT)
        await close_writer(self._writer)

    async def __aenter__(self) -> RpcClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()
