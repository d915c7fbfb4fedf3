"""``AsyncWaitOperator``: runs an :class:`~strom.api.async_function.AsyncFunction` over a stream, up to
``capacity`` records in flight at once (Flink's ``AsyncWaitOperator``).

Threads. The user function's ``open``/``close``/``timeout`` and everything that touches the queue or emits run
on the task thread. Every ``async_invoke`` coroutine runs on one asyncio event loop per subtask, in a thread of
its own (:class:`AsyncInvoker`), inside that loop's ``TaskGroup``: the task thread hands a record over with
``call_soon_threadsafe``; the loop hands each outcome back through ``completions`` and one mail in the task's
mailbox (one at a time: a mail already pending takes the later outcomes along), so results are emitted between
two units of input even while the task is idle. The element queue itself is the pure state machine of
:mod:`strom.runtime.operators.async_queue` (ordered, or unordered with watermarks as barriers).

Backpressure. With ``capacity`` elements held, the task thread blocks — on a condition, a slice at a time so a
cancelled task notices — until an outcome arrives, handles it and tries again; meanwhile it reads no input.
Unlike Flink's ``mailboxExecutor.yield()`` it runs no other mail while it waits (a checkpoint trigger would
snapshot a source half-way through a batch); the wait ends with the next completion or timeout.

Timeouts and retries run on the loop: the timeout spans every attempt of a record (PyFlink's), a retry
follows ``get_backoff_time_millis(attempt)`` when the strategy's predicates match and ``can_retry(attempt)``.
A record that times out gets ``timeout(value)`` on the task thread. Results carry their input's timestamp.

Checkpoints. Every element held (in flight, or completed and not yet emitted, and the watermarks between) goes
into the operator list state ``_async_wait_operator_state_``; a restored subtask issues them again in
``open()``, so each record's results are emitted exactly once downstream of an exactly-once checkpoint. At the
end of input ``finish()`` waits for every element before the task ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import threading
from collections import deque
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from strom.api.async_function import AsyncFunction
from strom.api.async_retry_strategies import AsyncRetryStrategy
from strom.api.state import ListState, ListStateDescriptor
from strom.exceptions import ClusterError, TaskCancelledError
from strom.runtime.operators.abstract_udf_stream_operator import AbstractUdfStreamOperator
from strom.runtime.operators.async_queue import (
    OrderedStreamElementQueue,
    RecordEntry,
    StreamElementQueue,
    UnorderedStreamElementQueue,
    WatermarkEntry,
)
from strom.runtime.streamrecord import short_repr, timestamps_of, with_timestamps

if TYPE_CHECKING:
    from strom.runtime.checkpoint.snapshot import OperatorRestoreState, OperatorSnapshot

__all__ = ["STATE_NAME", "AsyncInvoker", "AsyncWaitOperator", "Outcome"]

STATE_NAME = "_async_wait_operator_state_"
_WAIT_SLICE = 0.2  # seconds a blocked task thread waits for an outcome before it looks for cancellation
_START_TIMEOUT = 30.0
_STOP_TIMEOUT = 5.0


class Outcome(enum.Enum):
    COMPLETED = "completed"  # payload: what async_invoke returned
    FAILED = "failed"  # payload: the exception
    TIMED_OUT = "timed out"  # payload: None


OnDone = Callable[[RecordEntry, Outcome, Any], None]


class AsyncInvoker:
    """One asyncio event loop in a thread of its own, running the ``async_invoke`` of every record in flight.

    ``submit`` (any thread) starts a record's coroutine in the loop's ``TaskGroup``; ``on_done(entry, outcome,
    payload)`` is called on the loop thread when it ends. ``close`` cancels what still runs and joins the
    thread."""

    def __init__(
        self,
        function: AsyncFunction[Any, Any],
        *,
        timeout_ms: int,
        retry_strategy: AsyncRetryStrategy[Any],
        on_done: OnDone,
    ) -> None:
        self._function = function
        self._timeout_s = timeout_ms / 1000.0 if timeout_ms > 0 else None
        self._strategy = retry_strategy
        predicate = retry_strategy.get_retry_predicate()
        self._retry_result = predicate.result_predicate()
        self._retry_exception = predicate.exception_predicate()
        self._on_done = on_done
        self._loop = asyncio.new_event_loop()
        self._group: asyncio.TaskGroup | None = None
        self._main: asyncio.Task[None] | None = None
        self._ready = threading.Event()
        self._thread: threading.Thread | None = None
        self.failure: BaseException | None = None  # the loop thread itself broke (not a user coroutine)

    def start(self, thread_name: str) -> None:
        self._thread = threading.Thread(target=self._run, name=thread_name, daemon=True)
        self._thread.start()
        if not self._ready.wait(_START_TIMEOUT):
            raise ClusterError(
                f"expected the async I/O event loop '{thread_name}' to start within {_START_TIMEOUT:.0f} s; "
                "it did not; hint: the TaskManager may be overloaded"
            )

    def is_alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def submit(self, entry: RecordEntry) -> None:
        """Any thread: start ``entry``'s coroutine on the loop."""
        self._loop.call_soon_threadsafe(self._spawn, entry)

    def close(self) -> None:
        """Cancel every coroutine still running and stop the loop (idempotent)."""
        thread = self._thread
        if thread is None:
            self._loop.close()
            return
        main = self._main
        if main is not None and not self._loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                self._loop.call_soon_threadsafe(main.cancel)
        thread.join(_STOP_TIMEOUT)  # a coroutine that ignores cancellation is left behind (daemon thread)
        self._thread = None

    # -- the loop thread -----------------------------------------------------------------------------
    def _run(self) -> None:
        loop = self._loop
        asyncio.set_event_loop(loop)
        try:
            self._main = loop.create_task(self._serve())
            loop.run_until_complete(self._main)
        except asyncio.CancelledError:
            pass  # close() cancelled the loop's main task: the normal end of this thread
        except BaseException as exc:  # the thread's boundary: the operator reports it
            self.failure = exc
        finally:
            self._ready.set()
            try:
                loop.run_until_complete(loop.shutdown_asyncgens())
            finally:
                loop.close()

    async def _serve(self) -> None:
        async with asyncio.TaskGroup() as group:
            self._group = group
            self._ready.set()
            await asyncio.Event().wait()  # until close() cancels it; the group then cancels every record's task

    def _spawn(self, entry: RecordEntry) -> None:
        group = self._group
        if group is None:
            return  # closing
        group.create_task(self._run_element(entry))

    async def _run_element(self, entry: RecordEntry) -> None:
        scope = asyncio.timeout(self._timeout_s)
        try:
            async with scope:
                results = await self._attempts(entry.value)
        except TimeoutError as exc:
            if scope.expired():
                self._on_done(entry, Outcome.TIMED_OUT, None)
            else:  # the user's own TimeoutError
                self._on_done(entry, Outcome.FAILED, exc)
            return
        except Exception as exc:
            self._on_done(entry, Outcome.FAILED, exc)
            return
        self._on_done(entry, Outcome.COMPLETED, results)

    async def _attempts(self, value: Any) -> Any:
        """``async_invoke(value)``, again after a backoff while the retry strategy asks for it."""
        attempt = 1
        invoke = self._function.async_invoke
        while True:
            results: Any = None
            error: Exception | None = None
            try:
                results = await invoke(value)
            except Exception as exc:
                error = exc
            if self._should_retry(results, error, attempt):
                await asyncio.sleep(max(self._strategy.get_backoff_time_millis(attempt), 0) / 1000.0)
                attempt += 1
                continue
            if error is not None:
                raise error
            return results

    def _should_retry(self, results: Any, error: Exception | None, attempt: int) -> bool:
        if error is None:
            matched = results is not None and self._retry_result is not None and self._retry_result(results)
        else:
            matched = self._retry_exception is not None and self._retry_exception(error)
        return bool(matched) and self._strategy.can_retry(attempt)


class AsyncWaitOperator(AbstractUdfStreamOperator):
    """Emits ``async_invoke``'s results per record: in input order (``ordered``) or as they complete."""

    def __init__(
        self,
        function: AsyncFunction[Any, Any],
        *,
        timeout_ms: int,
        capacity: int,
        ordered: bool,
        retry_strategy: AsyncRetryStrategy[Any],
    ) -> None:
        super().__init__(function)
        self.function = function
        self.timeout_ms = timeout_ms
        self.capacity = capacity
        self.ordered = ordered
        self.retry_strategy = retry_strategy
        self._init_runtime()

    def _init_runtime(self) -> None:
        self._queue: StreamElementQueue | None = None
        self._invoker: AsyncInvoker | None = None
        self._cond: threading.Condition | None = None
        self._completions: deque[tuple[RecordEntry, Outcome, Any]] = deque()
        self._mail_pending = False
        self._closed = False
        self._state: ListState[Any] | None = None
        self._restored: list[Any] = []

    # -- lifecycle (task thread) ------------------------------------------------------------------------
    def initialize_state(self, restore: OperatorRestoreState | None) -> None:
        super().initialize_state(restore)
        self._state = self.operator_state_backend.get_list_state(ListStateDescriptor(STATE_NAME))
        if restore is not None:
            self._restored = list(self._state.get() or ())

    def open(self) -> None:
        super().open()  # the user function's open()
        ctx = self.runtime_context
        assert ctx is not None
        self._queue = (OrderedStreamElementQueue if self.ordered else UnorderedStreamElementQueue)(self.capacity)
        self._cond = threading.Condition(threading.Lock())
        self._invoker = AsyncInvoker(
            self.function, timeout_ms=self.timeout_ms, retry_strategy=self.retry_strategy, on_done=self._on_done
        )
        self._invoker.start(f"async I/O of {ctx.get_task_name_with_subtasks()}")
        restored, self._restored = self._restored, []
        for element in restored:  # issued again, in the order they were held (Flink's AsyncWaitOperator.open)
            if element[0] == "watermark":
                self.process_watermark(element[1])
            else:
                self._add_record(element[1], element[2])
        self._emit_completed()

    def process_batch(self, batch: list[Any]) -> None:
        timestamps = timestamps_of(batch)
        add = self._add_record
        if timestamps is None:
            for v in batch:
                add(v, None)
        else:
            for v, t in zip(batch, timestamps, strict=True):
                add(v, t)
        if self._completions:
            self._process_completions()

    def process_watermark(self, timestamp: int) -> None:
        """A watermark queues behind the records before it (in both modes) and is emitted in its turn."""
        self.current_watermark = timestamp
        queue = self._queue
        assert queue is not None
        while not queue.try_put_watermark(timestamp):
            self._wait_for_completion()
        self._emit_completed()

    def finish(self) -> None:
        """End of input: wait for every record in flight and emit its results."""
        queue = self._queue
        assert queue is not None
        self._process_completions()
        while not queue.is_empty():
            self._wait_for_completion()

    def close(self) -> None:
        self._closed = True
        invoker, self._invoker = self._invoker, None
        try:
            if invoker is not None:
                invoker.close()
        finally:
            super().close()  # the user function's close()

    # -- checkpoints (task thread) ----------------------------------------------------------------------
    def snapshot_state(self, checkpoint_id: int, timestamp_ms: int) -> OperatorSnapshot | None:
        assert self._state is not None
        queue = self._queue
        held = queue.values() if queue is not None else []
        self._state.update(
            [
                ("watermark", e.timestamp) if isinstance(e, WatermarkEntry) else ("record", e.value, e.timestamp)
                for e in held
            ]
        )
        return super().snapshot_state(checkpoint_id, timestamp_ms)

    # -- records in ---------------------------------------------------------------------------------------
    def _add_record(self, value: Any, timestamp: int | None) -> None:
        queue = self._queue
        assert queue is not None and self._invoker is not None
        entry = queue.try_put_record(value, timestamp)
        while entry is None:  # full: backpressure until an element completes
            self._wait_for_completion()
            entry = queue.try_put_record(value, timestamp)
        entry.position = self._records_in
        self._records_in += 1
        self._invoker.submit(entry)

    def _wait_for_completion(self) -> None:
        """Block until at least one outcome arrived, then handle what arrived."""
        cond = self._cond
        assert cond is not None and self.runtime_context is not None
        executor = self.runtime_context.mailbox_executor
        with cond:
            while not self._completions:
                if executor is not None and executor.closed:
                    raise TaskCancelledError(f"task of operator '{self.name}' cancelled while waiting for async I/O")
                invoker = self._invoker
                if invoker is None or not invoker.is_alive():
                    failure = invoker.failure if invoker is not None else None
                    raise ClusterError(
                        f"expected the async I/O event loop of operator '{self.name}' to run; it stopped"
                        f"{f' ({type(failure).__name__}: {failure})' if failure else ''}; hint: see the TaskManager log"
                    ) from failure
                cond.wait(_WAIT_SLICE)
        self._process_completions()

    # -- outcomes (loop thread → task thread) -------------------------------------------------------------
    def _on_done(self, entry: RecordEntry, outcome: Outcome, payload: Any) -> None:
        """Loop thread: queue the outcome; make sure one mail will handle it on the task thread."""
        cond = self._cond
        assert cond is not None
        with cond:
            self._completions.append((entry, outcome, payload))
            cond.notify()
            if self._mail_pending or self._closed:
                return
            self._mail_pending = True
        executor = self.runtime_context.mailbox_executor if self.runtime_context is not None else None
        if executor is not None:
            executor.execute(self._completion_mail, f"async I/O results of '{self.name}'")

    def _completion_mail(self) -> None:
        cond = self._cond
        assert cond is not None
        with cond:
            self._mail_pending = False
        if not self._closed:
            self._process_completions()

    def _process_completions(self) -> None:
        """Task thread: complete the queue entries whose outcomes arrived, then emit what may go."""
        cond = self._cond
        queue = self._queue
        assert cond is not None and queue is not None
        with cond:
            arrived = list(self._completions)
            self._completions.clear()
        for entry, outcome, payload in arrived:
            queue.complete(entry, self._results(entry, outcome, payload))
        self._emit_completed()

    def _results(self, entry: RecordEntry, outcome: Outcome, payload: Any) -> list[Any]:
        if outcome is Outcome.FAILED:
            raise self._record_error(payload, entry) from payload
        what = "async_invoke"
        if outcome is Outcome.TIMED_OUT:
            what = "timeout"
            try:
                payload = self.function.timeout(entry.value)
            except Exception as exc:
                raise self._record_error(exc, entry, f"timeout() of operator '{self.name}'") from exc
        if payload is None or isinstance(payload, str | bytes) or not isinstance(payload, Iterable):
            wrong = TypeError(
                f"expected {what}() of {type(self.function).__name__} to return a list of results; got "
                f"{short_repr(payload)}; hint: return [] for no result, [value] for one"
            )
            raise self._record_error(wrong, entry) from None
        return list(payload)

    def _record_error(self, exc: BaseException, entry: RecordEntry, role: str = "") -> BaseException:
        saved, self._records_in = self._records_in, entry.position
        try:
            return self.user_error(exc, [entry.value], entry.value, role=role)
        finally:
            self._records_in = saved

    # -- records out --------------------------------------------------------------------------------------
    def _emit_completed(self) -> None:
        queue = self._queue
        assert queue is not None
        popped = queue.pop_completed()
        if not popped:
            return
        values: list[Any] = []
        stamps: list[int | None] = []
        timed = False
        output = self.output
        for e in popped:
            if isinstance(e, WatermarkEntry):
                if values:
                    output.emit(with_timestamps(values, stamps if timed else None))
                    values, stamps, timed = [], [], False
                output.emit_watermark(e.timestamp)
                continue
            results = e.results
            assert results is not None
            if results:
                values.extend(results)
                if e.timestamp is not None:
                    timed = True
                stamps.extend([e.timestamp] * len(results))
        if values:
            output.emit(with_timestamps(values, stamps if timed else None))
