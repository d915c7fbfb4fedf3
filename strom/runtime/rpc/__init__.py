"""Authenticated asyncio RPC: framing, handshake, remote calls, heartbeats (internal, no compatibility promise)."""

from strom.runtime.rpc.auth import authenticate_client, authenticate_server, new_secret
from strom.runtime.rpc.framing import DEFAULT_MAX_FRAME_BYTES, FRAME_VERSION, read_frame, write_frame
from strom.runtime.rpc.heartbeat import Clock, HeartbeatMonitor, HeartbeatSender, SystemClock
from strom.runtime.rpc.rpc_service import RpcClient, RpcServer, RpcServerStatistics, rpc_method

__all__ = [
    "DEFAULT_MAX_FRAME_BYTES",
    "FRAME_VERSION",
    "Clock",
    "HeartbeatMonitor",
    "HeartbeatSender",
    "RpcClient",
    "RpcServer",
    "RpcServerStatistics",
    "SystemClock",
    "authenticate_client",
    "authenticate_server",
    "new_secret",
    "read_frame",
    "rpc_method",
    "write_frame",
]
