"""A keyed BATCH job whose sorted input is 4× ``execution.sorted-inputs.memory`` (issue 29, "peak memory of BATCH with
a sort that must spill"), on TaskManager processes: every subtask's sorter spills run files (their bytes in its
TaskManager's log) and the merged output is exact."""

from __future__ import annotations

import pickle
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from strom import Configuration, DataGeneratorSource, KeyedProcessFunction, StreamExecutionEnvironment
from strom.api.execution_mode import RuntimeExecutionMode
from strom.datastream.state import ValueStateDescriptor

pytestmark = pytest.mark.processes

KEYS = 997
RECORDS = 20_000
PARALLELISM = 2
SPILLED = re.compile(r"sorted input spilled (\d+) runs, (\d+) bytes, of (\d+) records")


def _event(i: int) -> tuple[int, int, str]:
    return ((i * 7919) % KEYS, i, "x" * 24)


class CountAndSum(KeyedProcessFunction):
    """A key's count and sum, emitted by a timer that fires at the end of the key (BATCH's watermark at +∞)."""

    def open(self, runtime_context: Any) -> None:
        self.count = runtime_context.get_state(ValueStateDescriptor("count"))
        self.total = runtime_context.get_state(ValueStateDescriptor("total"))

    def process_element(self, value: tuple[int, int, str], ctx: Any) -> None:
        self.count.update((self.count.value() or 0) + 1)
        self.total.update((self.total.value() or 0) + value[1])
        ctx.timer_service().register_event_time_timer(0)

    def on_timer(self, timestamp: int, ctx: Any) -> Any:
        yield (ctx.get_current_key(), self.count.value(), self.total.value())


@pytest.mark.timeout(180)
def test_a_sorted_input_four_times_its_memory_spills_and_gives_exact_output(tmp_path: Path) -> None:
    per_subtask = len(pickle.dumps([_event(i) for i in range(RECORDS)], protocol=5)) // PARALLELISM
    env = StreamExecutionEnvironment.get_execution_environment(
        Configuration(
            {
                "taskmanager.numberOfTaskSlots": 1,
                "minicluster.number-of-taskmanagers": PARALLELISM,
                "execution.sorted-inputs.enabled": True,
                "execution.sorted-inputs.memory": per_subtask // 4,
                "logging.level": "INFO",
                "env.log.dir": str(tmp_path / "logs"),
            }
        )
    )
    env.set_parallelism(PARALLELISM)
    env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    stream = env.from_source(DataGeneratorSource(_event, RECORDS), source_name="events")
    with stream.key_by(lambda e: e[0]).process(CountAndSum()).execute_and_collect() as results:
        got = Counter(tuple(r) for r in results)
    expected: dict[int, list[int]] = {}
    for i in range(RECORDS):
        key, value, _ = _event(i)
        count_total = expected.setdefault(key, [0, 0])
        count_total[0] += 1
        count_total[1] += value
    assert got == Counter((k, c, t) for k, (c, t) in expected.items())
    spills = [
        m.groups() for log in (tmp_path / "logs").rglob("taskmanager-*.log") for m in SPILLED.finditer(log.read_text())
    ]
    assert len(spills) == PARALLELISM, f"expected a spill report per sorting subtask; got {spills}"
    for runs, spilled_bytes, records in spills:
        assert int(runs) >= 3, f"expected ≥ 3 runs of an input 4× the sort memory; got {runs}"
        assert int(spilled_bytes) > per_subtask // 2
        assert int(records) > 0
    assert sum(int(r) for _, _, r in spills) == RECORDS
