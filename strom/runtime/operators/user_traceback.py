"""The user's traceback of a failed user function, as Python's own traceback would show it.

Two things stand between a raw ``traceback.format_exception`` and what the user should read:

* cloudpickle ships functions of the job file (``__main__``) by value and names their code ``<dynamic-code>``; the
  function keeps its module's ``__file__`` in its globals, so each such frame is shown under that file with its
  line, and its source line when the file is readable where the TaskManager runs. (On a cluster where it is not,
  :func:`add_source_lines` lets the client fill the lines in from the program file it ran.)
* strom's own frames — the operator loop calling the function, the partitioner hashing a key — are internal: they
  are left out unless ``internal`` (the TaskManager logs at DEBUG). An exception of the chain without a user frame
  is left out; a chain without any gives no traceback at all (the message says everything).
"""

from __future__ import annotations

import linecache
import os
import re
import sys
import traceback
from pathlib import Path
from types import FrameType

__all__ = ["DYNAMIC_CODE", "add_source_lines", "format_user_traceback"]

#: the ``co_filename`` cloudpickle gives the code of functions it pickles by value
DYNAMIC_CODE = "<dynamic-code>"
_STROM_DIR = str(Path(os.path.abspath(__file__)).parents[2]) + os.sep  # as co_filename spells strom/
_HEAD = "Traceback (most recent call last):\n"
_CAUSE = "\nThe above exception was the direct cause of the following exception:\n\n"
_CONTEXT = "\nDuring handling of the above exception, another exception occurred:\n\n"
_FRAME = re.compile(r'^  File "(?P<file>[^"]+)", line (?P<line>\d+), in .*$')


def format_user_traceback(exc: BaseException, *, internal: bool = False) -> str:
    """``exc`` with its chain, oldest first, as Python prints it (without the first ``Traceback`` line), limited
    to the user's frames (all frames with ``internal``); ``""`` when no exception of the chain ran user code."""
    blocks: list[str] = []
    seen: set[int] = set()
    current: BaseException | None = exc
    link = ""
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        frames = _frames(current, internal=internal)
        only = "".join(traceback.format_exception_only(current))
        if frames or current is exc:
            head = _HEAD + "".join(frames.format()) if frames else ""
            blocks.append(head + only + link)
        if current.__cause__ is not None:
            current, link = current.__cause__, _CAUSE
        elif current.__context__ is not None and not current.__suppress_context__:
            current, link = current.__context__, _CONTEXT
        else:
            current = None
    if len(blocks) == 1 and not blocks[0].startswith(_HEAD):
        return ""  # only the exception's own line, which the message already holds
    return "".join(reversed(blocks)).removeprefix(_HEAD)  # the header above it says so already


def _frames(exc: BaseException, *, internal: bool) -> traceback.StackSummary:
    walked: list[tuple[FrameType, int]] = list(traceback.walk_tb(exc.__traceback__))
    # the frames with their column positions (the ^^^ under the failing expression), their lines read later
    summary = traceback.TracebackException(type(exc), exc, exc.__traceback__, lookup_lines=False, compact=True).stack
    kept: list[traceback.FrameSummary] = []
    for (frame, _), fs in zip(walked, summary, strict=True):
        if fs.filename == DYNAMIC_CODE:
            fs.filename = str(frame.f_globals.get("__file__") or DYNAMIC_CODE)  # source read lazily from here
            linecache.checkcache(fs.filename)  # the job file may have changed since an earlier job ran here
        if internal or not fs.filename.startswith(_STROM_DIR):
            kept.append(fs)
    return traceback.StackSummary.from_list(kept)


def add_source_lines(text: str, program: str | None = None) -> str:
    """``text`` with the source line added under each frame of ``program`` (default: the file ``__main__`` ran)
    that has none: a TaskManager on another machine cannot read the job file the client ran."""
    if program is None:
        program = getattr(sys.modules.get("__main__"), "__file__", None)
    if not program or f'"{program}"' not in text:
        return text
    lines = text.split("\n")
    out: list[str] = []
    for i, line in enumerate(lines):
        out.append(line)
        m = _FRAME.match(line)
        if m is None or m["file"] != program or (i + 1 < len(lines) and lines[i + 1].startswith("    ")):
            continue
        source = linecache.getline(program, int(m["line"])).strip()
        if source:
            out.append(f"    {source}")
    return "\n".join(out)
