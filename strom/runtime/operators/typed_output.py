"""``TypedOutput``: the output of an operator with a declared type (``output_type=``, ``type_info=``) converts
every record it emits to that type, where PyFlink's records cross into the Java side: ``Types.FLOAT()`` rounds to
32 bits, ``Types.ROW_NAMED`` makes named ``Row``\\ s, a value that does not fit fails the job naming the
operator, the subtask and the record. Operators without a declared type keep their plain output: untyped
streams pay nothing."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from strom.api.typeinfo import batch_converter
from strom.exceptions import UserFunctionError
from strom.runtime.streamrecord import short_repr, timestamps_of, with_timestamps

if TYPE_CHECKING:
    from strom.api.typeinfo import TypeInformation
    from strom.runtime.operators.base import Output, StreamOperator

__all__ = ["TypedOutput", "type_mismatch"]


def type_mismatch(exc: Exception, record: Any, type_info: TypeInformation, where: str) -> str:
    """The message of a record that does not fit its declared type (the value's type named once)."""
    name = f"({type(record).__name__})"
    of_type = "" if name in str(exc) else f" {name}"
    return (
        f"expected the records {where} to fit the declared type {type_info!r}; got {short_repr(record)}{of_type}: "
        f"{exc}; "
        "hint: return values of the declared type, or declare the type the function returns (output_type=...)"
    )


class TypedOutput:
    """Wraps an operator's :class:`~strom.runtime.operators.base.Output`: the main output is converted."""

    __slots__ = (
        "_convert",
        "_convert_batch",
        "_inner",
        "_operator",
        "_type_info",
        "emit_side",
        "emit_watermark",
        "emit_watermark_status",
    )

    def __init__(self, inner: Output, type_info: TypeInformation, operator: StreamOperator) -> None:
        self._inner = inner
        self._type_info = type_info
        self._convert: Callable[[Any], Any] = type_info.converter()
        self._convert_batch = batch_converter(type_info)
        self._operator = operator
        self.emit_side = inner.emit_side
        self.emit_watermark = inner.emit_watermark
        self.emit_watermark_status = inner.emit_watermark_status

    def emit(self, batch: list[Any]) -> None:
        try:
            out: list[Any] = self._convert_batch(batch)
        except (TypeError, ValueError, OverflowError) as exc:
            raise self._error(exc, batch) from None
        if out is not batch:  # converted: the new list takes the batch's timestamps (a batch that fits is itself)
            out = with_timestamps(out, timestamps_of(batch))
        self._inner.emit(out)

    def _error(self, exc: Exception, batch: list[Any]) -> UserFunctionError:
        convert = self._convert
        record: Any = None
        for record in batch:  # find the record (the comprehension's variable is gone)
            try:
                convert(record)
            except (TypeError, ValueError, OverflowError):
                break
        op = self._operator
        ctx = op.runtime_context
        info = ctx.info if ctx is not None else None
        subtask = f"subtask {info.subtask_index + 1}/{info.parallelism}" if info else "subtask ?"
        message = type_mismatch(exc, record, self._type_info, f"of operator '{op.name}' ({subtask})")
        return UserFunctionError(
            message,
            operator=op.name,
            subtask_index=info.subtask_index if info else 0,
            parallelism=info.parallelism if info else 1,
            attempt=info.attempt_number if info else 0,
            user_traceback="",
        )
