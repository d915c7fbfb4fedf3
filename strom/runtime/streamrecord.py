"""The stream batch: Flink's ``StreamRecord``\\ s in batch form — values with an optional column of event timestamps.

One representation crosses operators. A batch is a ``list`` of values (the task's input side recognises a data
buffer by ``isinstance(buf, list)``); its event timestamps (ints of milliseconds, ``None`` for a record without
one) are an optional column, read with :func:`timestamps_of` — ``None`` for a stream without event time — and
attached with :func:`with_timestamps`. A stream without event time therefore hands plain lists and pays nothing
for the column; the column rides in :class:`TimestampedBatch`, the ``list`` subclass that carries it (and
pickles with it), which code outside this module needs no branch on. An operator that changes records carries
each input record's timestamp over to what it emits for that record, as Flink's operators do.

    >>> b = with_timestamps(["a", "b"], [10, 20])
    >>> b, timestamps_of(b), timestamps_of(["x"]), with_timestamps(["x"], None)
    (['a', 'b'], [10, 20], None, ['x'])
    >>> timestamps_of(batch_slice(b, 1, 2))
    [20]
    >>> import pickle; timestamps_of(pickle.loads(pickle.dumps(b)))
    [10, 20]
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["SplitBatch", "TimestampedBatch", "batch_slice", "short_repr", "timestamps_of", "with_timestamps"]


class TimestampedBatch(list[Any]):
    """Values with a parallel list of event timestamps (``len(timestamps) == len(self)``): the carrier of the
    timestamp column (build one with :func:`with_timestamps`, read it with :func:`timestamps_of`)."""

    __slots__ = ("timestamps",)

    def __init__(self, values: Iterable[Any] = (), timestamps: list[int | None] | None = None) -> None:
        super().__init__(values)
        self.timestamps: list[int | None] = timestamps if timestamps is not None else [None] * len(self)

    def __reduce__(self) -> tuple[Any, ...]:
        return (TimestampedBatch, (list(self), self.timestamps))

    def __repr__(self) -> str:
        return list.__repr__(self)


class SplitBatch(TimestampedBatch):
    """A source reader's batch with the split of each record (a parallel ``split_ids`` column; Flink's reader
    collecting into ``ReaderOutput.createOutputForSplit(id)``): each split's own watermark generator sees its
    records (per-partition watermarks of ``KafkaSource``)."""

    __slots__ = ("split_ids",)

    def __init__(self, values: Iterable[Any], timestamps: list[int | None] | None, split_ids: list[Any]) -> None:
        super().__init__(values, timestamps)
        self.split_ids = split_ids

    def __reduce__(self) -> tuple[Any, ...]:
        return (SplitBatch, (list(self), self.timestamps, self.split_ids))


def timestamps_of(batch: list[Any]) -> list[int | None] | None:
    """The timestamp column of ``batch``, or ``None`` for a batch without one."""
    return getattr(batch, "timestamps", None)  # a plain list has no such attribute


def with_timestamps(values: list[Any], timestamps: list[Any] | None) -> list[Any]:
    """The batch of ``values`` with the timestamp column ``timestamps`` (``values`` itself when ``None``)."""
    return values if timestamps is None else TimestampedBatch(values, timestamps)


def batch_slice(batch: list[Any], start: int, end: int) -> list[Any]:
    """Records ``start:end`` of ``batch``, with their timestamps."""
    ts = timestamps_of(batch)
    if ts is None:
        return batch[start:end]
    if isinstance(batch, SplitBatch):
        return SplitBatch(batch[start:end], ts[start:end], batch.split_ids[start:end])
    return TimestampedBatch(batch[start:end], ts[start:end])


def short_repr(value: Any, limit: int = 120) -> str:
    """``repr(value)`` cut to ``limit`` characters, for error messages that name a record."""
    try:
        text = repr(value)
    except Exception:  # a user __repr__ may itself fail
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."
