"""A fenced RPC gateway (Flink's ``FencedRpcGateway``): every call carries the leader's fencing token, and the
TaskExecutor's ``fenced_call`` rejects one from a JobManager that is no longer the leader (high availability)."""

from __future__ import annotations

from typing import Any

from strom.runtime.rpc.rpc_service import RpcClient

__all__ = ["fenced_gateway"]


class _FencedGateway:
    """A JobManager → TaskManager gateway whose every call carries the leader's fencing token."""

    def __init__(self, inner: RpcClient, token: str) -> None:
        self._inner = inner
        self._token = token

    async def call(self, method: str, *args: Any, timeout: float | None = 30.0, **kwargs: Any) -> Any:
        return await self._inner.call("fenced_call", self._token, method, args, kwargs, timeout=timeout)

    async def tell(self, method: str, *args: Any, **kwargs: Any) -> None:
        await self._inner.tell("fenced_call", self._token, method, args, kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name.startswith("_"):
            object.__setattr__(self, name, value)
        else:
            setattr(self._inner, name, value)


def fenced_gateway(inner: RpcClient, token: str) -> RpcClient:
    gateway: Any = _FencedGateway(inner, token)
    return gateway  # type: ignore[no-any-return]
