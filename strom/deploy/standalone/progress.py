"""``strom run``'s progress of an attached remote job, read from the REST API.

On a terminal: a block redrawn about once a second — the job's state and duration, per vertex its state and
records in/out, the last completed checkpoint. Otherwise (a pipe, a log file): one summary line every
``interval`` seconds and one when the job ends, so logs stay short. Plain ANSI escapes; no dependency.
"""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO

from strom.exceptions import ClusterError

__all__ = ["ProgressReporter", "summary_line", "vertex_lines"]


def _count(value: Any) -> str:
    n = int(value) if isinstance(value, int | float) else 0
    for unit, size in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if n >= size:
            return f"{n / size:.1f}{unit}"
    return str(n)


def _checkpoint(checkpoints: dict[str, Any] | None) -> str:
    if not checkpoints:
        return "no checkpoints"
    latest = (checkpoints.get("latest") or {}).get("completed")
    if not latest:
        return "no checkpoint completed yet"
    size, duration = _count(latest.get("state_size", 0)), latest.get("end_to_end_duration", 0)
    return f"checkpoint {latest.get('id')} ({size}B, {duration} ms)"


def summary_line(details: dict[str, Any], checkpoints: dict[str, Any] | None) -> str:
    """``job 'name' (id) RUNNING 12 s: 3 vertices, 1.2M records in, 1.2M out; checkpoint 7 (...)``."""
    vertices = details.get("vertices", [])
    records_in = sum(v.get("metrics", {}).get("read-records", 0) for v in vertices)
    records_out = sum(v.get("metrics", {}).get("write-records", 0) for v in vertices)
    seconds = max(0, int(details.get("duration", 0))) / 1000
    return (
        f"job '{details.get('name')}' ({details.get('jid')}) {details.get('state')} {seconds:.0f} s: "
        f"{len(vertices)} vertices, {_count(records_in)} records in, {_count(records_out)} out; "
        f"{_checkpoint(checkpoints)}"
    )


def vertex_lines(details: dict[str, Any]) -> list[str]:
    rows = []
    for v in details.get("vertices", []):
        m = v.get("metrics", {})
        name = str(v.get("name", ""))
        name = name if len(name) <= 40 else name[:39] + "…"
        rows.append(
            f"  {name:<40} {v.get('status', ''):<12} p={v.get('parallelism', 0):<3} "
            f"in {_count(m.get('read-records', 0)):>7}  out {_count(m.get('write-records', 0)):>7}"
        )
    return rows


class ProgressReporter:
    """Called by :class:`RemoteJobClient` while it waits; ``finish()`` prints the last state."""

    def __init__(self, out: TextIO | None = None, *, interval: float = 10.0) -> None:
        self.out = out or sys.stdout
        self.live = self.out.isatty()
        self.interval = interval
        self._drawn = 0
        self._last = 0.0

    def _read(self, client: Any) -> tuple[dict[str, Any], dict[str, Any] | None]:
        details = client.job_details()
        try:
            checkpoints = client.rest.get(f"/jobs/{client.job_id}/checkpoints")
        except ClusterError:  # 404: checkpointing is off
            checkpoints = None
        return details, checkpoints

    def __call__(self, client: Any) -> None:
        if not self.live and time.monotonic() - self._last < self.interval:
            return
        self._last = time.monotonic()
        details, checkpoints = self._read(client)
        if not self.live:
            print(summary_line(details, checkpoints), file=self.out, flush=True)
            return
        lines = [summary_line(details, checkpoints), *vertex_lines(details)]
        if self._drawn:
            self.out.write(f"\x1b[{self._drawn}F")  # back to the block's first line
        for line in lines:
            self.out.write("\x1b[2K" + line + "\n")
        for _ in range(self._drawn - len(lines)):  # fewer lines than before: clear the rest
            self.out.write("\x1b[2K\n")
        self._drawn = max(self._drawn, len(lines))
        self.out.flush()

    def finish(self, client: Any) -> None:
        """One last line with the final state (after the job ended)."""
        try:
            details, checkpoints = self._read(client)
        except ClusterError:
            return
        if self.live:
            self._last = 0.0
            self(client)
        else:
            print(summary_line(details, checkpoints), file=self.out, flush=True)
