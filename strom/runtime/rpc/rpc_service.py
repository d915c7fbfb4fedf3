"""Remote calls over authenticated frames: ``RpcServer`` serves an endpoint's ``@rpc_method`` s,
``RpcClient`` is a gateway to one remote endpoint.

Each invocation runs as its own asyncio task, so a slow call does not hold up others on the same
connection. Payloads are pickled (cloudpickle out, pickle in) — only after the handshake of
:mod:`strom.runtime.rpc.auth` succeeded. A bad frame closes that connection, never the server.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import pickle
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import cloudpickle

from strom.exceptions import AuthenticationError, FrameError, RpcError
from strom.runtime.rpc.auth import authenticate_client, authenticate_server
from strom.runtime.rpc.framing import DEFAULT_MAX_FRAME_BYTES, read_frame, write_frame

__all__ = ["RpcClient", "RpcInvocation", "RpcResponse", "RpcServer", "RpcServerStatistics", "rpc_method"]

log = logging.getLogger(__name__)
F = TypeVar("F", bound=Callable[..., Any])

_RPC_ATTR = "__strom_rpc__"


def rpc_method(fn: F) -> F:
    """Mark an endpoint method as callable by authenticated peers."""
    setattr(fn, _RPC_ATTR, True)
    return fn


@dataclass(frozen=True, slots=True, kw_only=True)
class RpcInvocation:
    call_id: int
    method: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any] = field(default_factory=dict)
    oneway: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class RpcResponse:
    call_id: int
    ok: bool
    value: Any = None
    error: BaseException | None = None
    error_text: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class RpcServerStatistics:
    connections_accepted: int
    connections_rejected: int
    calls_served: int


def _dumps(obj: object) -> bytes:
    return cloudpickle.dumps(obj, protocol=5)  # type: ignore[no-any-return]


def _error_response(call_id: int, exc: BaseException) -> bytes:
    text = "".join(traceback.format_exception(exc))
    try:
        return _dumps(RpcResponse(call_id=call_id, ok=False, error=exc, error_text=text))
    except Exception:
        return _dumps(
            RpcResponse(call_id=call_id, ok=False, error=RpcError(f"{type(exc).__name__}: {exc}"), error_text=text)
        )


class RpcServer:
    def __init__(
        self,
        endpoint: object,
        *,
        secret: bytes,
        host: str = "127.0.0.1",
        port: int = 0,
        max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
        name: str = "rpc",
    ) -> None:
        self.endpoint = endpoint
        self.secret = secret
        self.host = host
        self.port = port
        self.max_frame_bytes = max_frame_bytes
        self.name = name
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._accepted = 0
        self._rejected = 0
        self._served = 0
        self.address: tuple[str, int] = (host, port)

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._handle, self.host, self.port)
        self.address = self._server.sockets[0].getsockname()[:2]

    def statistics(self) -> RpcServerStatistics:
        return RpcServerStatistics(
            connections_accepted=self._accepted,
            connections_rejected=self._rejected,
            calls_served=self._served,
        )

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("peername")
        try:
            await authenticate_server(reader, writer, self.secret)
        except (AuthenticationError, ConnectionError, OSError) as exc:
            self._rejected += 1
            log.warning("%s: rejected peer %s: %s", self.name, peer, exc)
            writer.close()
            return
        self._accepted += 1
        self._writers.add(writer)
        lock = asyncio.Lock()
        try:
            while True:
                frame = await read_frame(reader, max_bytes=self.max_frame_bytes)
                if frame is None:
                    return
                inv = pickle.loads(frame)
                if not isinstance(inv, RpcInvocation):
                    raise FrameError(f"expected an RpcInvocation; got a {type(inv).__name__}")
                task = asyncio.get_running_loop().create_task(self._invoke(inv, writer, lock))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
        except (FrameError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, TypeError) as exc:
            log.warning("%s: closing connection from %s: %s", self.name, peer, exc)
        except (ConnectionError, OSError):
            pass
        finally:
            self._writers.discard(writer)
            writer.close()

    async def _invoke(self, inv: RpcInvocation, writer: asyncio.StreamWriter, lock: asyncio.Lock) -> None:
        try:
            fn = getattr(self.endpoint, inv.method, None)
            if fn is None or not getattr(fn, _RPC_ATTR, False):
                raise RpcError(f"expected one of the endpoint's rpc methods; got '{inv.method}'")
            result = fn(*inv.args, **inv.kwargs)
            if asyncio.iscoroutine(result):
                result = await result
            payload = _dumps(RpcResponse(call_id=inv.call_id, ok=True, value=result))
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            if inv.oneway:
                log.warning("%s: oneway call %s failed: %s", self.name, inv.method, exc)
            payload = _error_response(inv.call_id, exc)
        self._served += 1
        if inv.oneway or writer.is_closing():
            return
        async with lock:
            with contextlib.suppress(ConnectionError, OSError):
                await write_frame(writer, payload)

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
        for w in list(self._writers):
            w.close()
        for t in list(self._tasks):
            t.cancel()

    async def __aenter__(self) -> RpcServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


class RpcClient:
    def __init__(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *, max_frame_bytes: int, name: str
    ) -> None:
        self._reader = reader
        self._writer = writer
        self.max_frame_bytes = max_frame_bytes
        self.name = name
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._lock = asyncio.Lock()
        self._closed = False
        self._explicit_close = False
        self.on_disconnect: Callable[[], None] | None = None
        self._read_task = asyncio.get_running_loop().create_task(self._read_loop())

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
    ) -> RpcClient:
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port, limit=1 << 20), timeout)
        except (OSError, TimeoutError) as exc:
            raise RpcError(f"{name}: cannot connect to {host}:{port}: {exc}") from exc
        try:
            await authenticate_client(reader, writer, secret, timeout=timeout)
        except BaseException:
            writer.close()
            raise
        return cls(reader, writer, max_frame_bytes=max_frame_bytes, name=name)

    @property
    def closed(self) -> bool:
        return self._closed

    async def _read_loop(self) -> None:
        try:
            while True:
                frame = await read_frame(self._reader, max_bytes=self.max_frame_bytes)
                if frame is None:
                    break
                resp = pickle.loads(frame)
                fut = self._pending.pop(resp.call_id, None)
                if fut is None or fut.done():
                    continue
                if resp.ok:
                    fut.set_result(resp.value)
                else:
                    err = resp.error if resp.error is not None else RpcError(resp.error_text)
                    fut.set_exception(err)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.debug("%s: connection failed: %s", self.name, exc)
        finally:
            self._connection_lost()

    def _connection_lost(self) -> None:
        if self._closed and not self._pending:
            return
        self._closed = True
        self._writer.close()
        for fut in self._pending.values():
            if not fut.done():
                fut.set_exception(RpcError(f"{self.name}: the connection was lost before the call returned"))
        self._pending.clear()
        if not self._explicit_close and self.on_disconnect is not None:
            cb, self.on_disconnect = self.on_disconnect, None
            cb()

    async def _send(self, inv: RpcInvocation) -> None:
        if self._closed:
            raise RpcError(f"{self.name}: expected an open connection for '{inv.method}'; it is closed")
        try:
            payload = _dumps(inv)
        except Exception as exc:
            raise RpcError(f"{self.name}: arguments of '{inv.method}' cannot be serialized: {exc}") from exc
        async with self._lock:
            try:
                await write_frame(self._writer, payload)
            except (ConnectionError, OSError) as exc:
                raise RpcError(f"{self.name}: sending '{inv.method}' failed: {exc}") from exc

    async def call(self, method: str, *args: Any, timeout: float | None = 30.0, **kwargs: Any) -> Any:
        call_id = next(self._ids)
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[call_id] = fut
        try:
            await self._send(RpcInvocation(call_id=call_id, method=method, args=args, kwargs=kwargs))
            if timeout is None:
                return await fut
            try:
                return await asyncio.wait_for(fut, timeout)
            except TimeoutError:
                raise RpcError(f"{self.name}: '{method}' did not answer within {timeout} s") from None
        finally:
            self._pending.pop(call_id, None)

    async def tell(self, method: str, *args: Any, **kwargs: Any) -> None:
        await self._send(RpcInvocation(call_id=0, method=method, args=args, kwargs=kwargs, oneway=True))

    async def close(self) -> None:
        if self._explicit_close:
            return
        self._explicit_close = True
        self._closed = True
        self._writer.close()
        self._read_task.cancel()
        for fut in self._pending.values():
            if not fut.done():
                fut.set_exception(RpcError(f"{self.name}: the client was closed"))
        self._pending.clear()
