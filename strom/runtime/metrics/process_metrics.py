"""A process's status metrics under Flink's ``Status.JVM.*`` names (Flink's ``MetricUtils.instantiateStatusMetrics``),
measured on the Python process that serves them — a JobManager or a TaskManager.

=============================================== ===================================================================
Flink's metric                                  what strom reports (Python process)
=============================================== ===================================================================
``Status.JVM.Memory.Heap.Used``                 resident set size (RSS), bytes: what the process holds in memory
``Status.JVM.Memory.Heap.Committed``            the same RSS (a Python heap is not committed ahead of use)
``Status.JVM.Memory.Heap.Max``                  the machine's physical memory, bytes (the only bound of a Python
                                                heap unless a cgroup sets one)
``Status.JVM.CPU.Time``                         CPU time of the process (user + system), nanoseconds, as Flink's
``Status.JVM.CPU.Load``                         CPU used since the previous reading / wall time / cores (0..1)
``Status.JVM.Threads.Count``                    the process's threads (the kernel's count, Python's elsewhere)
``Status.JVM.GarbageCollector.<G>.Count``       collections of Python's cyclic GC generation ``<G>``
                                                (``Generation0`` ... ``Generation2``)
``Status.JVM.GarbageCollector.<G>.Time``        milliseconds spent in them, measured by a ``gc.callbacks`` hook
                                                installed at the first reading (earlier collections count 0 ms)
=============================================== ===================================================================

JVM-only figures (non-heap, metaspace, direct and mapped buffers, class loading) have no counterpart and are
absent: Flink's own handlers read an absent metric as 0 (``TaskManagerMetricsInfo``).
"""

from __future__ import annotations

import gc
import os
import threading
import time
from typing import Any

__all__ = ["status_metrics"]

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
_lock = threading.Lock()
_last_cpu: tuple[float, float] | None = None  # (wall, cpu seconds) of the previous reading
_gc_started: dict[int, float] = {}
_gc_time_ms: dict[int, float] = {}
_gc_hooked = False


def _gc_callback(phase: str, info: dict[str, Any]) -> None:
    generation = int(info.get("generation", 0))
    if phase == "start":
        _gc_started[generation] = time.perf_counter()
    elif generation in _gc_started:
        _gc_time_ms[generation] = (
            _gc_time_ms.get(generation, 0.0) + (time.perf_counter() - _gc_started.pop(generation)) * 1e3
        )


def _rss_bytes() -> float:
    try:
        with open("/proc/self/statm") as f:
            return float(int(f.read().split()[1]) * _PAGE)
    except OSError:
        import resource

        return float(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)


def _physical_memory() -> float:
    try:
        return float(os.sysconf("SC_PHYS_PAGES") * _PAGE)
    except (ValueError, OSError, AttributeError):
        return -1.0


def _thread_count() -> float:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Threads:"):
                    return float(line.split()[1])
    except OSError:
        pass
    return float(threading.active_count())


def _cpu_load(cpu_s: float) -> float:
    global _last_cpu
    now = time.monotonic()
    last, _last_cpu = _last_cpu, (now, cpu_s)
    if last is None or now <= last[0]:
        return 0.0
    return max(0.0, min(1.0, (cpu_s - last[1]) / (now - last[0]) / (os.cpu_count() or 1)))


def status_metrics() -> dict[str, float]:
    """This process's ``Status.JVM.*`` metrics now (see the module's table)."""
    global _gc_hooked
    times = os.times()
    cpu_s = times.user + times.system
    with _lock:
        if not _gc_hooked:
            gc.callbacks.append(_gc_callback)
            _gc_hooked = True
        load = _cpu_load(cpu_s)
    rss = _rss_bytes()
    out = {
        "Status.JVM.Memory.Heap.Used": rss,
        "Status.JVM.Memory.Heap.Committed": rss,
        "Status.JVM.Memory.Heap.Max": _physical_memory(),
        "Status.JVM.CPU.Time": float(int(cpu_s * 1e9)),
        "Status.JVM.CPU.Load": load,
        "Status.JVM.Threads.Count": _thread_count(),
    }
    for generation, stats in enumerate(gc.get_stats()):
        out[f"Status.JVM.GarbageCollector.Generation{generation}.Count"] = float(stats["collections"])
        out[f"Status.JVM.GarbageCollector.Generation{generation}.Time"] = float(int(_gc_time_ms.get(generation, 0.0)))
    return out
