"""The two RPC messages and how they are turned into frame payloads.

A client sends :class:`RpcInvocation`; the server answers each non-oneway invocation with one
:class:`RpcResponse` carrying the same ``call_id``. Payloads are pickle protocol 5: outgoing data goes
through :func:`cloudpickle.dumps` (so lambdas and closures can be shipped), incoming data through
:func:`pickle.loads`. :func:`decode` is only ever called on frames from a peer that passed the
handshake of :mod:`strom.runtime.rpc.auth` — unpickling runs arbitrary code chosen by the sender.

Exceptions are shipped as objects when they survive a pickle round trip, so a caller can catch the
remote ``ValueError`` as a ``ValueError``; otherwise they are replaced by an
:class:`~strom.exceptions.RpcError` naming the original type. The formatted remote traceback always
travels along in ``error_text``. :class:`PendingCalls` matches responses to the client's waiting calls.
"""

from __future__ import annotations

import asyncio
import itertools
import pickle
import traceback
from dataclasses import dataclass, field
from typing import Any

import cloudpickle

from strom.exceptions import RpcError, SerializationError

__all__ = [
    "PICKLE_PROTOCOL",
    "PendingCalls",
    "RpcInvocation",
    "RpcResponse",
    "decode",
    "describe",
    "encode",
    "encode_error_response",
    "encode_response",
]

PICKLE_PROTOCOL = 5


@dataclass(frozen=True, slots=True, kw_only=True)
class RpcInvocation:
    """A request to run ``method(*args, **kwargs)`` on the remote endpoint."""

    call_id: int
    method: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any] = field(default_factory=dict)
    oneway: bool = False
    """No response is sent; the caller does not learn whether the call succeeded."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RpcResponse:
    """The outcome of one invocation: ``value`` when ``ok``, else ``error`` (and its traceback text)."""

    call_id: int
    ok: bool
    value: Any = None
    error: BaseException | None = None
    error_text: str = ""


def encode(message: RpcInvocation | RpcResponse) -> bytes:
    """Pickle a message (cloudpickle, protocol 5); :class:`SerializationError` if that fails."""
    try:
        return cloudpickle.dumps(message, protocol=PICKLE_PROTOCOL)  # type: ignore[no-any-return]
    except Exception as exc:
        raise SerializationError(
            f"expected a picklable {type(message).__name__}; got {type(exc).__name__}: {exc}; "
            "hint: arguments and return values of rpc methods must be picklable"
        ) from exc


def decode(payload: bytes) -> object:
    """Unpickle a payload. Call only on frames of an authenticated peer."""
    return pickle.loads(payload)


def _round_trips(exc: BaseException) -> bytes | None:
    """The pickled exception if it can also be unpickled again (many custom ``__init__`` s cannot)."""
    try:
        data: bytes = cloudpickle.dumps(exc, protocol=PICKLE_PROTOCOL)
        restored = pickle.loads(data)
    except Exception:
        return None
    return data if isinstance(restored, BaseException) else None


def describe(exc: BaseException) -> str:
    """``"Type: message"``, robust against an ``__str__`` that raises."""
    try:
        return f"{type(exc).__name__}: {exc}"
    except Exception:
        return f"{type(exc).__name__}: <str() failed>"


def encode_error_response(call_id: int, exc: BaseException) -> bytes:
    """An ``ok=False`` response carrying ``exc`` itself, or an :class:`RpcError` if it cannot travel."""
    text = "".join(traceback.format_exception(exc))
    error: BaseException = exc
    if _round_trips(exc) is None:
        error = RpcError(describe(exc))
    try:
        return encode(RpcResponse(call_id=call_id, ok=False, error=error, error_text=text))
    except SerializationError:
        fallback = RpcError(describe(exc))
        return encode(RpcResponse(call_id=call_id, ok=False, error=fallback, error_text=text))


def encode_response(call_id: int, value: object, *, max_bytes: int | None = None) -> bytes:
    """An ``ok=True`` response; an error response if ``value`` cannot be pickled or exceeds ``max_bytes``."""
    try:
        payload = encode(RpcResponse(call_id=call_id, ok=True, value=value))
    except SerializationError as exc:
        error = RpcError(
            f"expected a picklable return value; got {type(value).__name__} ({exc.__cause__}); "
            "hint: return plain data from rpc methods"
        )
        return encode_error_response(call_id, error)
    if max_bytes is not None and len(payload) > max_bytes:
        error = RpcError(
            f"expected a response of at most {max_bytes} bytes; got {len(payload)}; "
            "hint: return less data per call or raise the maximum frame size"
        )
        return encode_error_response(call_id, error)
    return payload


class PendingCalls:
    """A client's invocations that still await their :class:`RpcResponse`, keyed by ``call_id``."""

    def __init__(self, *, name: str, peer: str) -> None:
        self.name = name
        self.peer = peer
        self._ids = itertools.count(1)
        self._futures: dict[int, asyncio.Future[Any]] = {}

    def __len__(self) -> int:
        return len(self._futures)

    def open(self) -> tuple[int, asyncio.Future[Any]]:
        """A fresh ``call_id`` and the future its response will complete."""
        call_id = next(self._ids)
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._futures[call_id] = fut
        return call_id, fut

    def discard(self, call_id: int) -> None:
        self._futures.pop(call_id, None)

    def complete(self, resp: RpcResponse) -> None:
        """Resolve the call ``resp`` answers; late answers (the caller gave up) are dropped."""
        fut = self._futures.pop(resp.call_id, None)
        if fut is None or fut.done():
            return
        if resp.ok:
            fut.set_result(resp.value)
            return
        error = resp.error
        if not isinstance(error, Exception):  # never raise a remote BaseException (e.g. SystemExit) locally
            what = describe(error) if error is not None else "no exception object"
            error = RpcError(f"{self.name}: expected an exception from {self.peer}; got {what}")
        if resp.error_text:
            error.add_note(f"remote traceback ({self.peer}):\n{resp.error_text.rstrip()}")
        fut.set_exception(error)

    def fail_all(self, reason: str) -> None:
        """Fail every waiting call with its own :class:`RpcError` naming ``reason``."""
        futures, self._futures = self._futures, {}
        for fut in futures.values():
            if not fut.done():
                fut.set_exception(
                    RpcError(
                        f"{self.name}: expected a response from {self.peer}; got {reason}; "
                        "hint: the remote process may have failed or the connection was closed"
                    )
                )
