"""Thread information of this process: a thread dump (Flink's ``ThreadDumpInfo``, what ``jstack`` shows a JVM) and
stack samples of chosen threads (Flink's ``ThreadInfoSample``, what its flame graphs are built from), both taken
from the Python interpreter's frames (``sys._current_frames``).

A stack is a tuple of frames from the outermost call to the innermost, each ``function (file:line)``. Sampling on
request, as Flink's ``ThreadInfoRequestCoordinator`` does: ``num_samples`` stacks of each thread, ``delay_s``
apart; it sleeps between samples, so it runs off the event loop (``asyncio.to_thread``).
"""

from __future__ import annotations

import sys
import threading
import time
import traceback
from collections.abc import Mapping
from types import FrameType

__all__ = ["Stack", "sample_stacks", "thread_dump"]

Stack = tuple[str, ...]


def _frames(frame: FrameType | None) -> Stack:
    out = []
    while frame is not None:
        code = frame.f_code
        out.append(f"{code.co_name} ({code.co_filename}:{frame.f_lineno})")
        frame = frame.f_back
    return tuple(reversed(out))


def thread_dump() -> list[tuple[str, str]]:
    """(thread name, its stringified info) of every thread of this process: a header as Java's ``ThreadInfo``
    writes one (``"name" Id=<ident> daemon``), then the stack innermost first, each line ``\\tat ...``."""
    frames = sys._current_frames()
    out = []
    for t in sorted(threading.enumerate(), key=lambda t: t.name):
        if t.ident is None:
            continue
        frame = frames.get(t.ident)
        header = f'"{t.name}" Id={t.ident}{" daemon" if t.daemon else ""} native_id={t.native_id}\n'
        lines = [f"\tat {line.strip()}\n" for line in _stack_lines(frame)]
        out.append((t.name, header + "".join(lines) + "\n"))
    return out


def _stack_lines(frame: FrameType | None) -> list[str]:
    if frame is None:
        return []
    summary = traceback.extract_stack(frame)
    return [f"{f.name} ({f.filename}:{f.lineno})" for f in reversed(summary)]


def sample_stacks(threads: Mapping[str, int], num_samples: int, delay_s: float) -> dict[str, list[Stack]]:
    """``num_samples`` stacks of each thread of ``threads`` (key -> thread ident) that runs, ``delay_s`` apart
    (blocking); a thread that ended has none."""
    samples: dict[str, list[Stack]] = {key: [] for key in threads}
    for i in range(num_samples):
        if i:
            time.sleep(delay_s)
        frames = sys._current_frames()
        for key, ident in threads.items():
            frame = frames.get(ident)
            if frame is not None:
                samples[key].append(_frames(frame))
    return {key: stacks for key, stacks in samples.items() if stacks}
