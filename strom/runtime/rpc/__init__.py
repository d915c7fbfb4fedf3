"""Authenticated asyncio RPC: framing, handshake, remote calls, heartbeats; internal, no compatibility promise.

* :mod:`~strom.runtime.rpc.framing` — length-prefixed, versioned frames with a size limit.
* :mod:`~strom.runtime.rpc.auth` — mutual HMAC-SHA256 challenge–response on the cluster secret, run
  before any frame is read on every TCP connection.
* :mod:`~strom.runtime.rpc.messages` — ``RpcInvocation`` / ``RpcResponse`` and their pickling.
* :mod:`~strom.runtime.rpc.rpc_service` — ``RpcServer`` serving an endpoint's ``@rpc_method`` s and
  ``RpcClient``, a gateway to one remote endpoint.
* :mod:`~strom.runtime.rpc.heartbeat` — a pure ``HeartbeatMonitor`` and the asyncio ``HeartbeatSender``.
"""

from __future__ import annotations

from strom.runtime.rpc.auth import (
    DIGEST_BYTES,
    HANDSHAKE_TIMEOUT,
    MAGIC,
    NONCE_BYTES,
    authenticate_client,
    authenticate_server,
    new_secret,
)
from strom.runtime.rpc.framing import (
    DEFAULT_MAX_FRAME_BYTES,
    FRAME_VERSION,
    HEADER,
    encode_frame,
    read_frame,
    write_frame,
)
from strom.runtime.rpc.heartbeat import Clock, HeartbeatMonitor, HeartbeatSender, SystemClock
from strom.runtime.rpc.messages import RpcInvocation, RpcResponse
from strom.runtime.rpc.rpc_service import RpcClient, RpcServer, RpcServerStatistics, rpc_method

__all__ = [
    "DEFAULT_MAX_FRAME_BYTES",
    "DIGEST_BYTES",
    "FRAME_VERSION",
    "HANDSHAKE_TIMEOUT",
    "HEADER",
    "MAGIC",
    "NONCE_BYTES",
    "Clock",
    "HeartbeatMonitor",
    "HeartbeatSender",
    "RpcClient",
    "RpcInvocation",
    "RpcResponse",
    "RpcServer",
    "RpcServerStatistics",
    "SystemClock",
    "authenticate_client",
    "authenticate_server",
    "encode_frame",
    "new_secret",
    "read_frame",
    "rpc_method",
    "write_frame",
]
