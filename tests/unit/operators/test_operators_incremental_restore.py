"""Window operators (their panes and timers in the RocksDB backend's tables) across an incremental RocksDB checkpoint,
restored as the task does it (``restore_incremental_keyed_state`` before ``initialize_state``) into RocksDB and into
the heap backend: the same output as without the restart."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from operator_harness import OperatorHarness

from strom import EventTimeSessionWindows, ProcessWindowFunction, TumblingEventTimeWindows
from strom.api.windowed_stream import window_operator
from strom.runtime.checkpoint.snapshot import OperatorRestoreState
from strom.runtime.checkpoint.storage import CheckpointStorageLocation
from strom.runtime.operators.windowing.internal_functions import internal_window_function
from strom.runtime.state.incremental_state_handler import restore_incremental_keyed_state
from strom.runtime.state.key_groups import KeyGroupRange

pytestmark = pytest.mark.timeout(60)


class WithWindow(ProcessWindowFunction):
    def process(self, key: Any, context: Any, elements: Iterable[Any]) -> Iterable[Any]:
        w = context.window()
        yield (key, w.start, w.end, sum(e[1] for e in elements))


def _harness(assigner: Any, backend: str) -> OperatorHarness:
    op = window_operator(
        key_selector=lambda t: t[0],
        assigner=assigner,
        trigger=assigner.get_default_trigger(),
        evictor=None,
        window_function=internal_window_function(WithWindow(), keyed=True),
        contents="list",
    )
    return OperatorHarness(op, state_backend=backend)


@pytest.mark.parametrize("after", ["rocksdb", "hashmap"])
@pytest.mark.parametrize(
    "assigner", [TumblingEventTimeWindows.of(1000), EventTimeSessionWindows.with_gap(300)], ids=["tumbling", "session"]
)
def test_windows_restore_from_an_incremental_checkpoint_with_the_uninterrupted_output(
    tmp_path: Path, assigner: Any, after: str
) -> None:
    first = [((f"k{i % 3}", i), i * 37 % 1500) for i in range(30)]
    second = [((f"k{i % 3}", i), 1500 + i * 53 % 1500) for i in range(30, 60)]

    def run(restart: bool) -> list[Any]:
        h = _harness(assigner, "rocksdb").open()
        h.process_elements(first)
        h.process_watermark(700)
        out = h.records()
        if restart:
            h.operator.keyed_backend.prepare_incremental_snapshot(1, KeyGroupRange(0, 127))  # type: ignore[union-attr]
            snap = h.operator.snapshot_state(1, 0)
            assert snap is not None
            resolved = snap.resolve()
            assert resolved.keyed_incremental is not None and not resolved.keyed
            location = CheckpointStorageLocation(uri=str(tmp_path / f"job-{restart}" / "chk-1"))
            handle = resolved.keyed_incremental.upload(location, "window-0")
            h = _harness(assigner, after)
            keyed = restore_incremental_keyed_state(h.operator, [handle], checkpoint_id=1, reuse_shared=True)
            assert bool(keyed) == (after == "hashmap")  # into RocksDB directly, into the heap as canonical blobs
            h.operator.initialize_state(OperatorRestoreState(1, keyed=keyed))
            h.operator.open()
        h.process_elements(second)
        h.process_watermark(10_000)
        return sorted(out + h.records())

    assert run(restart=True) == run(restart=False)
