"""The TaskManager's settings of CPython's cyclic garbage collector (what Flink leaves to the JVM's GC options).

CPython collects its youngest generation every 700 net allocations of container objects and, every 100 such
collections, the whole heap. A streaming task allocates containers at the rate of its records — batches, tuples,
window state, timers — most of which live a while (in-flight buffers, open windows), so with these defaults a
young collection runs every few hundred records and keeps re-scanning what is still alive, and a full collection
walks every object of the process (modules, classes, the runtime) several times a second. Measured on the
event-time window benchmark (W2, one TaskManager): 15–20 % of the task threads' time went to the collector.

A TaskManager therefore, once per process before its first task runs:

- freezes the objects alive at that point (``gc.freeze()``: the interpreter, the runtime's modules and the
  TaskExecutor — they live as long as the process, full collections never scan them again);
- collects the youngest generation every ``YOUNG_GENERATION_THRESHOLD`` net allocations instead of 700
  (the older generations keep their ratios).

Reference cycles are still collected, only less often: at most that many more young objects wait for a
collection. Reference counting, which frees everything else, is unaffected.
"""

from __future__ import annotations

import gc
import threading

__all__ = ["YOUNG_GENERATION_THRESHOLD", "tune_for_streaming"]

YOUNG_GENERATION_THRESHOLD = 50_000

_lock = threading.Lock()
_tuned = False


def tune_for_streaming() -> bool:
    """Apply the TaskManager's collector settings to this process; idempotent. ``True`` if this call did."""
    global _tuned
    with _lock:
        if _tuned:
            return False
        _tuned = True
    gc.freeze()
    young, older, oldest = gc.get_threshold()
    gc.set_threshold(max(young, YOUNG_GENERATION_THRESHOLD), older, oldest)
    return True
