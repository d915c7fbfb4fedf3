"""``TwoInputStreamOperator``: an operator fed by two inputs (Flink's interface of that name and the
two-input half of ``AbstractStreamOperator``).

The task (:class:`~strom.runtime.tasks.stream_task.TwoInputStreamTask`) hands records of the first input to
``process_batch1`` and of the second to ``process_batch2``. Each input's watermark, already merged over its
channels, arrives through ``process_watermark1`` / ``process_watermark2``; the operator's own event time is
their minimum with idle inputs left out (:class:`IndexedCombinedWatermarkStatus`), and only a rise of it
reaches ``process_watermark`` — which fires the operator's timers and forwards the watermark, as for one
input. The operator is idle, and says so downstream, when both inputs are.

A two-input operator always heads its task's chain (Flink chains two-input operators only as heads), so it
never gets ``process_batch``.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Any

from strom.runtime.operators.abstract_udf_stream_operator import AbstractUdfStreamOperator
from strom.runtime.operators.base import StreamingRuntimeContext, StreamOperator
from strom.runtime.state.state_backend import backend_parameters, create_keyed_state_backend, key_type_of
from strom.runtime.watermark.combined_watermark_status import IndexedCombinedWatermarkStatus

__all__ = ["AbstractUdfTwoInputStreamOperator", "TwoInputStreamOperator", "ensure_keyed_backend"]


class TwoInputStreamOperator(StreamOperator):
    """Mixin base of the two-input operators (no ``__init__`` of its own: it composes with the UDF base)."""

    _combined: IndexedCombinedWatermarkStatus | None = None

    def process_batch(self, batch: list[Any]) -> None:
        raise TypeError(
            f"expected records of two-input operator '{self.name}' through process_batch1/process_batch2; "
            "got process_batch; hint: a two-input operator heads its task and is never chained after another"
        )

    @abstractmethod
    def process_batch1(self, batch: list[Any]) -> None:
        """Records of the first input."""

    @abstractmethod
    def process_batch2(self, batch: list[Any]) -> None:
        """Records of the second input."""

    # -- event time (Flink's processWatermark1/2, processWatermarkStatus1/2) -------------------------------
    def _combined_status(self) -> IndexedCombinedWatermarkStatus:
        if self._combined is None:
            self._combined = IndexedCombinedWatermarkStatus(2)
        return self._combined

    def process_watermark1(self, timestamp: int) -> None:
        self._input_watermark(0, timestamp)

    def process_watermark2(self, timestamp: int) -> None:
        self._input_watermark(1, timestamp)

    def process_watermark_status1(self, idle: bool) -> None:
        self._input_status(0, idle)

    def process_watermark_status2(self, idle: bool) -> None:
        self._input_status(1, idle)

    def _input_watermark(self, index: int, timestamp: int) -> None:
        combined = self._combined_status()
        if combined.update_watermark(index, timestamp):
            self.process_watermark(combined.combined_watermark)

    def _input_status(self, index: int, idle: bool) -> None:
        combined = self._combined_status()
        was_idle = combined.idle
        if combined.update_status(index, idle=idle):
            self.process_watermark(combined.combined_watermark)
        if combined.idle != was_idle:
            self.process_watermark_status(combined.idle)


class AbstractUdfTwoInputStreamOperator(TwoInputStreamOperator, AbstractUdfStreamOperator):
    """A two-input operator around one user function (opened, closed and checkpointed with the operator)."""


def ensure_keyed_backend(operator: StreamOperator, runtime_context: StreamingRuntimeContext) -> None:
    """Give a keyed operator its task's keyed state backend (created on first use), before ``setup``."""
    if runtime_context.keyed_backend is None:
        info = runtime_context.info
        selector = getattr(operator, "key_selector", None) or getattr(operator, "key_selector1", None)
        runtime_context.keyed_backend = create_keyed_state_backend(
            info.state_backend,
            max_parallelism=info.max_parallelism,
            parameters=backend_parameters(info, operator.operator_id, key_type_of(selector)),
        )
    operator.keyed_backend = runtime_context.keyed_backend
