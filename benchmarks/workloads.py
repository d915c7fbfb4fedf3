"""Workloads of the data-plane benchmarks: the event generator, the W1/W2 functions, the checksums and the
plain-loop ceilings. No strom import here: this module is also what ``bench.py --verify-peers`` checks.

The block between the ``VENDORED`` markers is copied from ``/work/shared/bench/peers/common.py`` (the
generator and checksums with which PyFlink, Bytewax and Spark were measured; see RESULTS.md there), so a
fresh clone can run ``make bench``. The function bodies are verbatim; only type hints were added to the
signatures. ``bench.py`` compares this copy with the original whenever that file exists.
"""

from __future__ import annotations

import zlib
from typing import Any

Event = tuple[int, str, int, int]

# ---- VENDORED from /work/shared/bench/peers/common.py (bodies verbatim, signatures annotated) ------------
SEED = 42
NKEYS = 10_000
BASE_MS = 1_700_000_000_000  # multiple of 1000 and of 2000 -> windows align with epoch
MAX_DISORDER_MS = 200
KEYS = ["k%d" % j for j in range(NKEYS)]  # noqa: UP031 (verbatim)
_M64 = (1 << 64) - 1
_GOLD = 0x9E3779B97F4A7C15
_SEEDX = (SEED * 0xD1B54A32D192ED03) & _M64


def event(i: int) -> Event:
    z = ((i + 1) * _GOLD + _SEEDX) & _M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M64
    z ^= z >> 31
    return (i, KEYS[z % NKEYS], (z >> 20) % 1000, BASE_MS + i - ((z >> 40) % 201))


# ---- W1 -------------------------------------------------------------------
def w1_map(e: Event) -> Event:
    return (e[0], e[1], e[2] * 2, e[3])


def w1_filter(e: Event) -> bool:
    return e[2] % 3 != 0


# ---- checksums (order independent) ---------------------------------------
def w2_record_hash(key: str, win_start_ms: int, s: int, c: int) -> int:
    return zlib.crc32(("%s|%d|%d|%d" % (key, win_start_ms, s, c)).encode())  # noqa: UP031 (verbatim)


class W2Checksum:
    """Fold over W2 results (key, window_start_ms, sum, count)."""

    def __init__(self) -> None:
        self.windows = 0
        self.count = 0
        self.sum = 0
        self.hash = 0

    def add(self, key: str, ws: int, s: int, c: int) -> None:
        self.windows += 1
        self.count += c
        self.sum += s
        self.hash = (self.hash + w2_record_hash(key, ws, s, c)) & _M64

    def as_dict(self) -> dict[str, int]:
        return {"windows": self.windows, "count": self.count, "sum": self.sum, "hash": self.hash}


def merge_parts(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """Sum numeric fields of part dicts (hash fields mod 2^64)."""
    out: dict[str, Any] = {}
    for p in parts:
        for k, v in p.items():
            if k.startswith("t_"):
                continue
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                out[k] = out.get(k, 0) + v
    if "hash" in out:
        out["hash"] &= _M64
    return out


# ---- END VENDORED ------------------------------------------------------------------------------------------

#: W1 records out of the peers' runs (RESULTS.md: "W1 counts: 1 332 174 (N=2M), 665 136 (N=1M) in every system")
W1_KNOWN_COUNTS = {2_000_000: 1_332_174, 1_000_000: 665_136}

# ---- W2 (ours): keyed running reduce of (sum, count) ---------------------------------------------------------
# The peers' W2 is a 1 s tumbling event-time window; strom has no windows yet, so our W2 is the keyed part
# alone: key_by(key) -> running reduce of (sum, count) per key -> counting sink. The check: N records out, and
# the sum of the running counts over all of them. A key k with c_k events emits the running counts 1..c_k, so
# that sum is Σ_k c_k(c_k+1)/2 -- it falls if a key's state is lost or reset, or if a key's records are split
# between subtasks (each part restarts at 1), and order of arrival does not matter (parts add up).
W2Value = tuple[str, int, int]  # (key, running sum, running count)


def w2_to_value(e: Event) -> W2Value:
    return (e[1], e[2], 1)


def w2_key(v: W2Value) -> str:
    return v[0]


def w2_reduce(a: W2Value, b: W2Value) -> W2Value:
    return (a[0], a[1] + b[1], a[2] + b[2])


def w2_expected(final: dict[str, W2Value]) -> dict[str, int]:
    """What W2's counting sink must report, from the final (key, sum, count) of every key."""
    return {
        "records": sum(c for _, _, c in final.values()),  # a running reduce emits one record per input
        "sum_running_counts": sum(c * (c + 1) // 2 for _, _, c in final.values()),
    }


# ---- ceilings: the same generator and functions in a plain loop in one process ----------------------------------
def ceiling_w1(n: int) -> dict[str, int]:
    """As ``ref.py``'s w1: count the events that pass the filter."""
    c = 0
    for i in range(n):
        e = w1_map(event(i))
        if w1_filter(e):
            c += 1
    return {"records": c}


def ceiling_w2(n: int) -> dict[str, int]:
    """A dict of the running (key, sum, count) per key, updated with the job's own functions; the expected
    figures (records, sum_running_counts) are computed from its final values after the loop."""
    acc: dict[str, W2Value] = {}
    get = acc.get
    for i in range(n):
        v = w2_to_value(event(i))
        k = w2_key(v)
        old = get(k)
        acc[k] = v if old is None else w2_reduce(old, v)
    return w2_expected(acc)
