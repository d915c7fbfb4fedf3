"""Records with event timestamps (Flink's ``StreamRecord`` timestamps, in batch form).

A batch is a ``list`` of values. A stream that carries event time hands :class:`TimestampedBatch` es
instead: the same list of values plus a parallel list ``timestamps`` (ints of milliseconds, ``None`` for a
record without one). Streams without event time keep plain lists, and every operator keeps its plain-list
fast path (``type(batch) is list``); an operator that changes records carries each input record's timestamp
over to what it emits for that record, as Flink's operators do.

    >>> b = TimestampedBatch(["a", "b"], [10, 20])
    >>> b, b.timestamps, timestamps_of(["x"])
    (['a', 'b'], [10, 20], None)
    >>> import pickle; pickle.loads(pickle.dumps(b)).timestamps
    [10, 20]
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["TimestampedBatch", "short_repr", "timestamps_of"]


class TimestampedBatch(list):  # type: ignore[type-arg]
    """Values with a parallel list of event timestamps (``len(timestamps) == len(self)``)."""

    __slots__ = ("timestamps",)

    def __init__(self, values: Iterable[Any] = (), timestamps: list[int | None] | None = None) -> None:
        super().__init__(values)
        self.timestamps: list[int | None] = timestamps if timestamps is not None else [None] * len(self)

    def __reduce__(self) -> tuple[Any, ...]:
        return (TimestampedBatch, (list(self), self.timestamps))

    def __repr__(self) -> str:
        return list.__repr__(self)


def timestamps_of(batch: list[Any]) -> list[int | None] | None:
    """The timestamps of ``batch``, or ``None`` for a plain batch."""
    return batch.timestamps if type(batch) is TimestampedBatch else None


def short_repr(value: Any, limit: int = 120) -> str:
    """``repr(value)`` cut to ``limit`` characters, for error messages that name a record."""
    try:
        text = repr(value)
    except Exception:  # a user __repr__ may itself fail
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."
