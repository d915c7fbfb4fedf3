"""``SourceOperator``: reads the splits assigned to its subtask through a ``SourceReader``."""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Any

from strom.api.source import Source, SourceReader, SourceReaderContext, SourceSplit
from strom.runtime.operators.base import ChainingStrategy, StreamOperator

__all__ = ["InputStatus", "SourceOperator"]


class InputStatus(enum.Enum):
    MORE_AVAILABLE = 0
    NOTHING_AVAILABLE = 1
    END_OF_INPUT = 2


class SourceOperator(StreamOperator):
    chaining_strategy = ChainingStrategy.HEAD

    def __init__(self, source: Source[Any]) -> None:
        super().__init__()
        self.source = source
        self.splits: Sequence[SourceSplit] = ()
        self.batch_size = 512
        self._reader: SourceReader[Any] | None = None

    def open(self) -> None:
        ctx = self.runtime_context
        assert ctx is not None
        try:
            self._reader = self.source.create_reader(
                SourceReaderContext(
                    subtask_index=ctx.info.subtask_index,
                    parallelism=ctx.info.parallelism,
                    batch_size=self.batch_size,
                )
            )
            self._reader.add_splits(self.splits)
        except Exception as exc:
            raise self.user_error(exc, None) from exc

    def emit_next(self) -> InputStatus:
        reader = self._reader
        assert reader is not None
        try:
            batch = reader.poll_batch()
        except Exception as exc:
            raise self.user_error(exc, None) from exc
        if batch is None:
            return InputStatus.END_OF_INPUT
        if not batch:
            return InputStatus.NOTHING_AVAILABLE
        self._records_in += len(batch)
        self.output.emit(batch)
        return InputStatus.MORE_AVAILABLE

    def process_batch(self, batch: list[Any]) -> None:
        raise TypeError("a source operator has no input")

    def close(self) -> None:
        if self._reader is not None:
            try:
                self._reader.close()
            except Exception as exc:
                raise self.user_error(exc, None) from exc
            finally:
                self._reader = None
