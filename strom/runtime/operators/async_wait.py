"""``AsyncWaitOperator``: async I/O (Flink's ``AsyncWaitOperator``, PyFlink 2.x's ``AsyncDataStream``).

Each input becomes a coroutine ``async_invoke(value)`` on the subtask's own asyncio event loop, which runs in one
thread beside the task thread (one loop per subtask, not a thread per request). At most ``capacity`` inputs are
in flight: a full operator blocks the task thread until one completes (backpressure). Completions come back
through a thread-safe queue; the task thread takes them — after each input batch, on a short processing-time
poll while anything is in flight, and at the end of input — and emits what the :class:`StreamElementQueue` says
is ready (input order, or completion order up to the next watermark). Results keep their input's timestamp.

A coroutine that does not finish within ``timeout`` gets ``timeout(value)`` called instead (by default: the job
fails); exceptions and results may be retried by the :class:`AsyncRetryStrategy`, within the same timeout. The
inputs in flight are the operator's state ("_async_wait_operator_state_", as Flink's): a restored subtask invokes
them again, so each input's results are emitted once into a checkpointed (exactly-once) sink.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from collections.abc import Collection
from typing import Any

from strom.api.async_function import AsyncFunction, AsyncRetryStrategy, NoRetryStrategy
from strom.api.functions import close_function, open_function
from strom.api.state import ListStateDescriptor
from strom.exceptions import InvalidProgramError
from strom.runtime.operators.async_queue import AsyncElement, StreamElementQueue
from strom.runtime.operators.base import ChainingStrategy, StreamOperator
from strom.runtime.streamrecord import TimestampedBatch, short_repr

__all__ = ["AsyncWaitOperator"]

STATE_NAME = "_async_wait_operator_state_"
_POLL_MS = 5  # how often the task thread looks for completions while inputs are in flight and no input comes
_WAIT_S = 0.05  # the task thread's wait for a completion when the operator is full (then it looks again)


class _Failure:
    __slots__ = ("error",)

    def __init__(self, error: BaseException) -> None:
        self.error = error


class AsyncWaitOperator(StreamOperator):
    chaining_strategy = ChainingStrategy.ALWAYS

    def __init__(
        self,
        function: AsyncFunction[Any, Any],
        *,
        timeout_ms: int,
        capacity: int,
        ordered: bool,
        retry_strategy: AsyncRetryStrategy[Any] | None = None,
    ) -> None:
        super().__init__()
        self.function = function
        self.timeout_ms = timeout_ms
        self.capacity = capacity
        self.ordered = ordered
        self.retry_strategy = retry_strategy or NoRetryStrategy()
        self._queue = StreamElementQueue(ordered=ordered)
        self._done: queue.SimpleQueue[tuple[AsyncElement, list[Any] | _Failure]] = queue.SimpleQueue()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._polling = False
        self._restored: list[tuple[Any, int | None]] = []

    # -- lifecycle -------------------------------------------------------------------------------------------
    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_done"] = None  # not picklable; made fresh where the operator runs
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._done = queue.SimpleQueue()

    def initialize_state(self, restore: Any) -> None:
        super().initialize_state(restore)
        if restore is not None:
            self._restored = list(self._state().get())

    def _state(self) -> Any:
        return self.operator_state_backend.get_list_state(ListStateDescriptor(STATE_NAME))

    def open(self) -> None:
        assert self.runtime_context is not None
        open_function(self.function, self.runtime_context)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name=f"async-io {self.name}", daemon=True)
        self._thread.start()
        restored, self._restored = self._restored, []
        for value, timestamp in restored:  # in flight at the checkpoint: invoke them again
            self._wait_for_room()
            self._submit(value, timestamp)
        self._poll_soon()

    def close(self) -> None:
        loop, thread = self._loop, self._thread
        self._loop = self._thread = None
        if loop is not None:
            with contextlib.suppress(Exception):
                asyncio.run_coroutine_threadsafe(_cancel_all(), loop).result(timeout=5)
            loop.call_soon_threadsafe(loop.stop)
            if thread is not None:
                thread.join(timeout=5)
            if not loop.is_running():
                loop.close()
        close_function(self.function)

    # -- input -----------------------------------------------------------------------------------------------
    def process_batch(self, batch: list[Any]) -> None:
        timestamps = batch.timestamps if type(batch) is TimestampedBatch else None
        for i, value in enumerate(batch):
            self._wait_for_room()
            self._submit(value, timestamps[i] if timestamps is not None else None)
        self._records_in += len(batch)
        self._drain()
        self._poll_soon()

    def process_watermark(self, timestamp: int) -> None:
        self.current_watermark = timestamp
        self._queue.add_watermark(timestamp)
        self._drain()

    def process_watermark_status(self, idle: bool) -> None:
        self.output.emit_watermark_status(idle)

    def finish(self) -> None:
        """End of input: every input in flight completes and leaves first (Flink waits for them as well)."""
        while not self._queue.is_empty():
            self._wait_for_completion()
            self._drain()

    def snapshot_state(self, checkpoint_id: int, timestamp_ms: int) -> Any:
        self._state().update(self._queue.snapshot())
        return super().snapshot_state(checkpoint_id, timestamp_ms)

    # -- async side ------------------------------------------------------------------------------------------
    def _submit(self, value: Any, timestamp: int | None) -> None:
        element = self._queue.add(value, timestamp)
        assert self._loop is not None
        asyncio.run_coroutine_threadsafe(self._invoke(element), self._loop)

    async def _invoke(self, element: AsyncElement) -> None:
        """On the event loop: ``async_invoke`` with retries until the timeout; the outcome goes to ``_done``."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout_ms / 1000.0
        strategy = self.retry_strategy
        predicate = strategy.get_retry_predicate()
        on_result, on_error = predicate.result_predicate(), predicate.exception_predicate()
        attempts = 1
        outcome: list[Any] | _Failure
        try:
            while True:
                remaining = deadline - loop.time()
                try:
                    if remaining <= 0:
                        raise TimeoutError
                    results = _as_results(await asyncio.wait_for(self.function.async_invoke(element.value), remaining))
                except TimeoutError:
                    outcome = _as_results(self.function.timeout(element.value))
                    break
                except Exception as exc:
                    if on_error is not None and strategy.can_retry(attempts) and on_error(exc):
                        await asyncio.sleep(max(0, strategy.get_backoff_time_millis(attempts)) / 1000.0)
                        attempts += 1
                        continue
                    raise
                if on_result is not None and strategy.can_retry(attempts) and on_result(results):
                    await asyncio.sleep(max(0, strategy.get_backoff_time_millis(attempts)) / 1000.0)
                    attempts += 1
                    continue
                outcome = results
                break
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # the task thread raises it as the user function's error
            outcome = _Failure(exc)
        self._done.put((element, outcome))

    # -- task thread -----------------------------------------------------------------------------------------
    def _wait_for_room(self) -> None:
        while len(self._queue) >= self.capacity:
            self._wait_for_completion()
            self._drain()

    def _wait_for_completion(self) -> None:
        """Block until an input completes (checking the loop is alive between short waits) and take it."""
        while True:
            try:
                self._complete(*self._done.get(timeout=_WAIT_S))
                return
            except queue.Empty:
                if self._thread is None or not self._thread.is_alive():
                    raise InvalidProgramError(f"the async I/O event loop of operator '{self.name}' stopped") from None

    def _complete(self, element: AsyncElement, outcome: list[Any] | _Failure) -> None:
        if isinstance(outcome, _Failure):
            role = f"async_invoke of operator '{self.name}' for the input {short_repr(element.value)}"
            raise self.user_error(outcome.error, None, role=role) from outcome.error
        self._queue.complete(element, outcome)

    def _drain(self) -> None:
        while True:
            try:
                self._complete(*self._done.get_nowait())
            except queue.Empty:
                break
        self._emit(self._queue.pop_ready())

    def _emit(self, ready: list[AsyncElement | int]) -> None:
        values: list[Any] = []
        timestamps: list[int | None] = []
        timed = False
        for item in ready:
            if isinstance(item, int):
                self._flush(values, timestamps, timed)
                values, timestamps, timed = [], [], False
                self.output.emit_watermark(item)
                continue
            values.extend(item.results)
            timestamps.extend([item.timestamp] * len(item.results))
            timed = timed or item.timestamp is not None
        self._flush(values, timestamps, timed)

    def _flush(self, values: list[Any], timestamps: list[int | None], timed: bool) -> None:
        if values:
            self.output.emit(TimestampedBatch(values, timestamps) if timed else values)

    def _poll_soon(self) -> None:
        ctx = self.runtime_context
        if self._polling or ctx is None or self._queue.is_empty():
            return
        self._polling = True
        pts = ctx.processing_time_service
        pts.register_timer(pts.get_current_processing_time() + _POLL_MS, self._on_poll)

    def _on_poll(self, time: int) -> None:
        self._polling = False
        self._drain()
        self._poll_soon()


def _as_results(results: object) -> list[Any]:
    if isinstance(results, str | bytes) or not isinstance(results, Collection):
        raise TypeError(
            f"expected async_invoke (and timeout) to return a collection of results; got {results!r:.60}; "
            "hint: return [result] for one result, [] for none"
        )
    return list(results)


async def _cancel_all() -> None:
    current = asyncio.current_task()
    tasks = [t for t in asyncio.all_tasks() if t is not current]
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
