"""``AsyncFunction``: the user side of async I/O (PyFlink 2.x's names).

An :class:`AsyncFunction` turns one record into a coroutine — ``async def async_invoke(value)`` returns the
list of results for that record — and :class:`~strom.api.async_data_stream.AsyncDataStream` runs up to
``capacity`` of those coroutines at a time on one asyncio event loop per subtask. A record whose coroutine
does not finish within the timeout goes to :meth:`AsyncFunction.timeout`, which fails the job by default or
returns results in place of the lost ones. An
:class:`~strom.api.async_retry_strategies.AsyncRetryStrategy` re-invokes a record whose result or
exception its predicates match, after a backoff, as long as ``can_retry(attempt)`` holds and the timeout has
not passed (:mod:`strom.api.async_retry_strategies`).

    >>> import asyncio
    >>> class Lookup(AsyncFunction):
    ...     async def async_invoke(self, value):
    ...         await asyncio.sleep(0)
    ...         return [value * 2]
    >>> asyncio.run(Lookup().async_invoke(21))
    [42]
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Generic, TypeVar

from strom.api.functions import RichFunction

__all__ = ["AsyncFunction"]

IN = TypeVar("IN")
OUT = TypeVar("OUT")


class AsyncFunction(RichFunction, Generic[IN, OUT]):
    """Triggers one asynchronous operation per record (Flink's ``AsyncFunction``).

    ``open``/``close`` and ``timeout`` run on the task thread; ``async_invoke`` runs on the subtask's event
    loop, a thread of its own, so it must not block: await I/O instead (``asyncio.to_thread`` for blocking
    calls). An exception raised by ``async_invoke`` that no retry strategy absorbs fails the job."""

    @abstractmethod
    async def async_invoke(self, value: IN) -> list[OUT]:
        """The results for ``value`` (a list, possibly empty)."""

    def timeout(self, value: IN) -> list[OUT]:
        """``async_invoke(value)`` did not finish in time: return results in its place, or raise (the default,
        which fails the job)."""
        raise TimeoutError(f"Async function call has timed out for input: {value}")
