"""The TaskManager's settings of CPython's cyclic garbage collector (what Flink leaves to the JVM's GC options).

CPython collects its youngest generation every 700 net allocations of container objects and, every 100 such
collections, the whole heap. A streaming task allocates containers at the rate of its records — batches, tuples,
window state, timers — most of which live a while (in-flight buffers, open windows), so with these defaults a
young collection runs every few hundred records and keeps re-scanning what is still alive, and a full collection
walks every object of the process (modules, classes, the runtime) several times a second. Measured on the
event-time window benchmark (W2, one TaskManager): 15–20 % of the task threads' time went to the collector.

A TaskExecutor therefore, before its first task runs:

- freezes the objects alive at that point (``gc.freeze()``: the interpreter, the runtime's modules and the
  TaskExecutor — they live as long as the process, full collections never scan them again);
- collects the youngest generation every ``YOUNG_GENERATION_THRESHOLD`` net allocations instead of 700
  (the older generations keep their ratios).

Reference cycles are still collected, only less often: at most that many more young objects wait for a
collection. Reference counting, which frees everything else, is unaffected. When the TaskExecutor closes it puts
the collector back as it found it — a TaskManager hosted in a Spark Python worker leaves nothing behind for the
next Spark task of a reused worker.
"""

from __future__ import annotations

import gc

__all__ = ["YOUNG_GENERATION_THRESHOLD", "StreamingGarbageCollection"]

YOUNG_GENERATION_THRESHOLD = 50_000


class StreamingGarbageCollection:
    """The collector settings of one TaskExecutor's life: :meth:`apply` before the first task, :meth:`restore`
    when it closes. Both are idempotent."""

    __slots__ = ("_saved",)

    def __init__(self) -> None:
        self._saved: tuple[int, int, int] | None = None

    @property
    def applied(self) -> bool:
        return self._saved is not None

    def apply(self) -> None:
        if self._saved is not None:
            return
        young, older, oldest = self._saved = gc.get_threshold()
        gc.freeze()
        gc.set_threshold(max(young, YOUNG_GENERATION_THRESHOLD), older, oldest)

    def restore(self) -> None:
        if self._saved is None:
            return
        gc.set_threshold(*self._saved)
        gc.unfreeze()
        self._saved = None
