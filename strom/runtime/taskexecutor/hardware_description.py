"""``HardwareDescription``: what a TaskManager's machine offers it, as Flink's REST API shows it (``hardware`` of
``TaskManagerInfo``): CPU cores, physical memory, free memory, managed memory — in bytes, -1 where unknown.

Flink measures the JVM (``Hardware.getNumberCPUCores``, ``getSizeOfPhysicalMemory``, the JVM's free heap); a Python
TaskManager reports the cores it may run on (its CPU affinity), the machine's physical memory (a cgroup's limit when
lower), the memory available to new allocations when asked (``MemAvailable``, a cgroup's headroom when lower) and
no managed memory of its own (-1: RocksDB's share is sized per job, see ``taskmanager.memory.managed.*``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

__all__ = ["HardwareDescription"]

_CGROUP = Path("/sys/fs/cgroup")


@dataclass(frozen=True, slots=True, kw_only=True)
class HardwareDescription:
    cpu_cores: int
    physical_memory: int
    free_memory: int
    managed_memory: int = -1

    @classmethod
    def of_this_process(cls) -> HardwareDescription:
        limit = _cgroup_limit()
        physical = _physical_memory()
        free = _mem_available()
        if limit > 0:
            physical = min(physical, limit) if physical > 0 else limit
            used = _cgroup_usage()
            if used >= 0:
                free = min(free, max(0, limit - used)) if free >= 0 else max(0, limit - used)
        return cls(cpu_cores=_cores(), physical_memory=physical, free_memory=free)

    def to_json(self) -> dict[str, int]:
        """Flink's ``HardwareDescription`` fields."""
        return {
            "cpuCores": self.cpu_cores,
            "physicalMemory": self.physical_memory,
            "freeMemory": self.free_memory,
            "managedMemory": self.managed_memory,
        }


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or -1


def _physical_memory() -> int:
    try:
        return int(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return -1


def _mem_available() -> int:
    """``MemAvailable`` of ``/proc/meminfo`` in bytes; -1 where there is none (not Linux, or unreadable)."""
    try:
        lines = Path("/proc/meminfo").read_text().splitlines()
    except OSError:
        return -1
    found = [line.split() for line in lines if line.startswith("MemAvailable:")]
    return int(found[0][1]) * 1024 if found and len(found[0]) > 1 and found[0][1].isdigit() else -1


def _read_int(path: Path) -> int:
    try:
        text = path.read_text().strip()
    except OSError:
        return -1
    return int(text) if text.isdigit() else -1  # "max": no limit


def _cgroup_limit() -> int:
    return _read_int(_CGROUP / "memory.max")


def _cgroup_usage() -> int:
    return _read_int(_CGROUP / "memory.current")
