"""``DataOutput``: where an input of a task pushes what it read (Flink's ``PushingAsyncDataInput.DataOutput``).

An input processor pushes data buffers, the watermarks its valve lets through and watermark status changes into
one ``DataOutput`` per input. The output's members are the head operator's own bound methods —
``process_batch`` / ``process_watermark`` / ``process_watermark_status`` for a one-input head, their ``1`` / ``2``
variants for the inputs of a :class:`~strom.runtime.operators.two_input.TwoInputStreamOperator` — so a record
costs no call of its own on the way in (Flink's ``StreamTaskNetworkOutput`` is a class around the operator).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from strom.runtime.operators.base import StreamOperator
from strom.runtime.operators.two_input import TwoInputStreamOperator

__all__ = ["DataOutput"]


@dataclass(frozen=True, slots=True, kw_only=True)
class DataOutput:
    emit_batch: Callable[[list[Any]], None]
    emit_watermark: Callable[[int], None]
    #: ``True``: the input turned IDLE; ``False``: ACTIVE again
    emit_watermark_status: Callable[[bool], None]

    @classmethod
    def of_head(cls, head: StreamOperator) -> DataOutput:
        """The only input of a one-input head operator."""
        return cls(
            emit_batch=head.process_batch,
            emit_watermark=head.process_watermark,
            emit_watermark_status=head.process_watermark_status,
        )

    @classmethod
    def of_head_input(cls, head: StreamOperator, input_index: int) -> DataOutput:
        """Input ``input_index`` (1 or 2, as Flink counts them) of a two-input head operator."""
        if not isinstance(head, TwoInputStreamOperator):
            raise TypeError(
                f"expected a two-input head operator for input {input_index}; got '{type(head).__name__}'; "
                "hint: a one-input head takes DataOutput.of_head"
            )
        if input_index == 1:
            return cls(
                emit_batch=head.process_batch1,
                emit_watermark=head.process_watermark1,
                emit_watermark_status=head.process_watermark_status1,
            )
        if input_index == 2:
            return cls(
                emit_batch=head.process_batch2,
                emit_watermark=head.process_watermark2,
                emit_watermark_status=head.process_watermark_status2,
            )
        raise ValueError(f"expected input 1 or 2 of a two-input operator; got {input_index}")
