"""``AbstractUdfStreamOperator``: an operator around one user function (Flink's class of that name), and the one
loop every such operator runs its batches through.

:meth:`AbstractUdfStreamOperator.process_elements` is that loop: it cuts the batch into slices when what the
function emits would outgrow ``execution.batch-bytes`` (:class:`~strom.runtime.operators.batch_budget.BatchBudget`),
runs a per-record loop of :mod:`strom.runtime.operators.udf_loop` over each slice — which sets the key context,
calls the function and carries the timestamps over — wraps a failure once in a ``UserFunctionError`` naming the
record (an unhashable key explained), counts the input and emits the output, or flushes the collector. Map,
filter, flat_map, process and their keyed forms (:mod:`~strom.runtime.operators.simple`,
:mod:`~strom.runtime.operators.keyed`), the co-operators of ``connect`` and the broadcast operators (both inputs,
:mod:`~strom.runtime.operators.co`) all derive from it.
"""

from __future__ import annotations

from operator import length_hint
from typing import TYPE_CHECKING, Any

from strom.api.checkpoint import (
    CheckpointedFunction,
    CheckpointListener,
    FunctionInitializationContext,
    FunctionSnapshotContext,
)
from strom.api.functions import close_function, open_function
from strom.runtime.operators.base import StreamOperator
from strom.runtime.operators.udf_loop import KeyOf, Loop, explain_key_error

if TYPE_CHECKING:
    from strom.runtime.checkpoint.snapshot import OperatorRestoreState, OperatorSnapshot

__all__ = ["AbstractUdfStreamOperator", "innermost"]


class AbstractUdfStreamOperator(StreamOperator):
    """An operator around one user function, opened and closed with the operator.

    A function implementing :class:`CheckpointedFunction` gets ``initialize_state`` before ``open`` and
    ``snapshot_state`` at every checkpoint; one implementing :class:`CheckpointListener` hears of every
    completed and aborted checkpoint (Flink's ``AbstractUdfStreamOperator`` / ``StreamingFunctionUtils``). A
    function wrapping the user's (``wrapped_function``, as the window join's) is looked through, as Flink's
    ``WrappingFunction``.
    """

    #: whether what the function emits for a record may be larger than the record (map, flat_map, process): the
    #: loop then slices its input so that the output of one slice stays within ``execution.batch-bytes``
    output_grows = True
    #: the key selector of a keyed operator's input: the loop runs each record in its key context
    _key: KeyOf | None = None

    def __init__(self, user_function: object) -> None:
        super().__init__()
        self.user_function = user_function

    def process_elements(self, batch: list[Any], loop: Loop, key_of: KeyOf | None = None) -> None:
        """Run ``batch`` through ``loop`` (its per-record loop, ``key_of`` the key selector of its input, for the
        explanation of an unhashable key): in slices within the output's byte budget, failures wrapped once with
        the failing record, the output emitted — or the collector flushed when the loop used it."""
        budget = self.output_budget
        n = len(batch)
        if n > budget.records and self.output_grows:
            for part in budget.slices(batch):
                self.process_elements(part, loop, key_of)
            return
        it = iter(batch)
        try:
            out = loop(it, batch)
        except Exception as exc:
            v = batch[n - length_hint(it) - 1]  # the iterator stands right after the failing record
            raise self.keyed_user_error(exc, batch, v, key_of) from exc
        self._records_in += n
        if out is None:
            collector = self._collector
            assert collector is not None
            budget.observe(collector.values, n)
            collector.flush(self.output)
        elif out:
            if self.output_grows:
                budget.observe(out, n)
            self.output.emit(out)

    def keyed_user_error(self, exc: Exception, batch: list[Any], record: Any, key_of: KeyOf | None) -> BaseException:
        """:meth:`user_error` for a keyed loop: an unhashable key (a ``TypeError`` of the state or the function
        when routing needed no hash, one consumer) is the key selector's error, said in one line."""
        explained = explain_key_error(exc, record, key_of)
        role = f"the key selector (key_by) of operator '{self.name}'" if explained is not exc else ""
        return self.user_error(explained, batch, record, role=role)

    def initialize_state(self, restore: OperatorRestoreState | None) -> None:
        super().initialize_state(restore)
        fn = innermost(self.user_function, CheckpointedFunction)
        if isinstance(fn, CheckpointedFunction):
            ctx = FunctionInitializationContext(
                self.operator_state_backend, self.keyed_backend, self.restored_checkpoint_id
            )
            try:
                fn.initialize_state(ctx)
            except Exception as exc:
                raise self.user_error(exc, None, role=f"initialize_state of operator '{self.name}'") from exc

    def snapshot_state(self, checkpoint_id: int, timestamp_ms: int) -> OperatorSnapshot | None:
        fn = innermost(self.user_function, CheckpointedFunction)
        if isinstance(fn, CheckpointedFunction):
            try:
                fn.snapshot_state(FunctionSnapshotContext(checkpoint_id, timestamp_ms))
            except Exception as exc:
                raise self.user_error(exc, None, role=f"snapshot_state of operator '{self.name}'") from exc
        return super().snapshot_state(checkpoint_id, timestamp_ms)

    def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        fn = innermost(self.user_function, CheckpointListener)
        if isinstance(fn, CheckpointListener):
            try:
                fn.notify_checkpoint_complete(checkpoint_id)
            except Exception as exc:
                raise self.user_error(exc, None, role=f"notify_checkpoint_complete of '{self.name}'") from exc

    def notify_checkpoint_aborted(self, checkpoint_id: int) -> None:
        fn = innermost(self.user_function, CheckpointListener)
        if isinstance(fn, CheckpointListener):
            try:
                fn.notify_checkpoint_aborted(checkpoint_id)
            except Exception as exc:
                raise self.user_error(exc, None, role=f"notify_checkpoint_aborted of '{self.name}'") from exc

    def open(self) -> None:
        assert self.runtime_context is not None
        try:
            open_function(self.user_function, self.runtime_context)
        except Exception as exc:
            raise self.user_error(exc, None) from exc

    def close(self) -> None:
        try:
            close_function(self.user_function)
        except Exception as exc:
            raise self.user_error(exc, None) from exc


def innermost(fn: object, kind: type) -> object:
    """``fn`` if it is a ``kind``; else the first ``kind`` among the functions it wraps (``wrapped_function``)."""
    for _ in range(16):  # wrappers nest a few levels at most
        if isinstance(fn, kind) or not hasattr(fn, "wrapped_function"):
            return fn
        fn = fn.wrapped_function
    return fn
