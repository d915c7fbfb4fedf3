"""Incremental RocksDB checkpoints (issue 28 §2): after 1 % of the keys change, what does a checkpoint upload?

    python benchmarks/state_incremental.py [--keys 100000] [--rounds 3] [--checkpoints 8] [--changed 0.01]

Per round and compaction style (``state.backend.rocksdb.compaction.style``: LEVEL, RocksDB's and Flink's default,
and UNIVERSAL; paired, alternating which runs first), in process on a local checkpoint directory: keyed
``ValueState`` of N keys × 1 KiB (random bytes, so compression does not flatter the figure) in a fresh RocksDB
backend, compacted (as the state of a job that ran for a while; a bulk load's own first compaction would otherwise
rewrite all of it during the measurement); checkpoint 1 (full: nothing to reference yet), confirmed complete; then,
``--checkpoints`` times, 1 % of the keys get new values and the next checkpoint uploads only the SST files the last
completed one did not hold.

Printed per round: the state size (bytes a checkpoint references), the upload of the second checkpoint as a share of
the state (the issue's figure; goal < 5 %), the median, mean and largest share over the following checkpoints (a
compaction rewrites files: the share of a checkpoint right after one is larger), and the synchronous part (flush +
RocksDB checkpoint, task thread) and asynchronous part (upload) of the first and the later checkpoints. The
canonical full snapshot of the same state (a checkpoint without incremental checkpoints) is timed beside it.
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from strom.api.state import ValueStateDescriptor
from strom.runtime.checkpoint.snapshot import OperatorSnapshot
from strom.runtime.checkpoint.storage import CheckpointStorageLocation
from strom.runtime.state.key_groups import KeyGroupRange
from strom.runtime.state.rocksdb.rocksdb_keyed_state_backend import RocksDBKeyedStateBackend

VALUE_BYTES = 1024
STYLES = ("LEVEL", "UNIVERSAL")


def checkpoint(backend: RocksDBKeyedStateBackend, root: Path, cid: int) -> tuple[int, int, float, float]:
    """(state size, bytes uploaded, synchronous s, asynchronous s) of incremental checkpoint ``cid``."""
    t0 = time.perf_counter()
    backend.prepare_incremental_snapshot(cid, KeyGroupRange(0, backend.max_parallelism - 1))
    snap = OperatorSnapshot(keyed_supplier=backend.async_snapshot()).resolve()
    t1 = time.perf_counter()
    assert snap.keyed_incremental is not None
    handle = snap.keyed_incremental.upload(CheckpointStorageLocation(uri=str(root / "job" / f"chk-{cid}")), "op-0")
    t2 = time.perf_counter()
    backend.notify_checkpoint_complete(cid)
    return handle.size, snap.keyed_incremental.uploaded_bytes, t1 - t0, t2 - t1


def one_round(style: str, keys: int, checkpoints: int, changed: float, seed: int) -> dict[str, float]:
    root = Path(tempfile.mkdtemp(prefix="strom-incremental-bench-"))
    rng = random.Random(seed)
    backend = RocksDBKeyedStateBackend(max_parallelism=128, path=str(root / "db"), compaction_style=style)
    try:
        state = backend.get_state(ValueStateDescriptor("v"))
        for k in range(keys):
            backend.current_key = k
            state.update(rng.randbytes(VALUE_BYTES))
        for cf in backend.column_families().values():  # the state of a job that ran a while: compacted, at rest
            cf.compact_range(None, None)
        _, _, sync1, async1 = checkpoint(backend, root, 1)
        shares, syncs, asyncs = [], [], []
        for cid in range(2, checkpoints + 2):
            for k in rng.sample(range(keys), int(keys * changed)):
                backend.current_key = k
                state.update(rng.randbytes(VALUE_BYTES))
            size, uploaded, sync, async_ = checkpoint(backend, root, cid)
            shares.append(100.0 * uploaded / size)
            syncs.append(sync)
            asyncs.append(async_)
        t0 = time.perf_counter()
        backend.snapshot()
        canonical_s = time.perf_counter() - t0
    finally:
        backend.dispose()
        shutil.rmtree(root, ignore_errors=True)
    return {
        "state_mb": size / 1e6,
        "2nd_%": shares[0],
        "median_%": statistics.median(shares),
        "mean_%": statistics.fmean(shares),
        "max_%": max(shares),
        "sync1_ms": sync1 * 1e3,
        "async1_ms": async1 * 1e3,
        "sync_ms": statistics.median(syncs) * 1e3,
        "async_ms": statistics.median(asyncs) * 1e3,
        "full_ms": canonical_s * 1e3,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keys", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--checkpoints", type=int, default=8, help="checkpoints after the first, each after a change")
    parser.add_argument("--changed", type=float, default=0.01, help="fraction of keys changed between checkpoints")
    args = parser.parse_args()
    rows: dict[str, list[dict[str, float]]] = {style: [] for style in STYLES}
    for seed in range(args.rounds):
        for style in STYLES if seed % 2 == 0 else reversed(STYLES):
            rows[style].append(one_round(style, args.keys, args.checkpoints, args.changed, seed))
    print(f"{args.keys} keys x {VALUE_BYTES} B, {args.changed:.0%} of them changed before each of {args.checkpoints} ")
    print(f"checkpoints after the first, {args.rounds} paired rounds")
    columns = list(rows[STYLES[0]][0])
    print("style     round " + " ".join(f"{c:>9}" for c in columns))
    for style in STYLES:
        for i, row in enumerate(rows[style]):
            print(f"{style:9} {i:>5} " + " ".join(f"{row[c]:>9.1f}" for c in columns))
        print(
            f"{style:9} {'med':>5} "
            + " ".join(f"{statistics.median(r[c] for r in rows[style]):>9.1f}" for c in columns)
        )
    for style in STYLES:
        second = statistics.median(r["2nd_%"] for r in rows[style])
        mean = statistics.median(r["mean_%"] for r in rows[style])
        print(f"{style}: the second checkpoint uploads {second:.1f} % of the state, later ones {mean:.1f} % on average")


if __name__ == "__main__":
    main()
