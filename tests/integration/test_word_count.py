"""The foundation's acceptance program: word count on a MiniCluster with TaskManager processes."""

from __future__ import annotations

import os
from collections import Counter

import pytest

from strom import MapFunction, RuntimeContext, StreamExecutionEnvironment

LINES = ["to be or not to be", "that is the question"] * 1000


class TagWithPid(MapFunction):
    """Passes records through, tagging each with the pid and subtask that processed it."""

    def open(self, runtime_context: RuntimeContext) -> None:
        self.subtask = runtime_context.get_index_of_this_subtask()

    def map(self, value: tuple[str, int]) -> tuple[str, int, int, int]:
        return (value[0], value[1], os.getpid(), self.subtask)


@pytest.mark.processes  # asserts the subtasks ran in TaskManager processes, not in this one
@pytest.mark.timeout(90)
@pytest.mark.parametrize("parallelism", [1, 2, 4])
def test_word_count_matches_counter_and_runs_in_separate_processes(parallelism: int) -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(parallelism)
    lines = env.from_collection(LINES)
    counts = (
        lines.flat_map(lambda line: line.split())
        .map(lambda w: (w, 1))
        .key_by(lambda t: t[0])
        .reduce(lambda a, b: (a[0], a[1] + b[1]))
        .map(TagWithPid())
    )
    counts.print()
    final: dict[str, int] = {}
    pids_by_subtask: dict[int, set[int]] = {}
    with counts.execute_and_collect() as results:
        for word, count, pid, subtask in results:
            final[word] = count  # running counts: keep the last per word
            pids_by_subtask.setdefault(subtask, set()).add(pid)

    assert final == Counter(w for line in LINES for w in line.split())
    # one-slot TaskManagers: every subtask of the keyed stage ran in its own OS process
    assert all(len(p) == 1 for p in pids_by_subtask.values())
    pids = set().union(*pids_by_subtask.values())
    assert os.getpid() not in pids
    if parallelism > 1:
        # 10 distinct words spread over the subtasks; each subtask that got words is a distinct process
        assert len(pids) == len(pids_by_subtask) >= 2


@pytest.mark.processes  # asserts the result's task pids are two processes other than this one
@pytest.mark.timeout(60)
def test_execute_returns_result_with_task_processes() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    seen: list[int] = []
    env.from_sequence(1, 1000).map(lambda x: x * 2).add_sink(seen.append)
    result = env.execute("sequence")
    assert result.job_name == "sequence"
    assert result.net_runtime_ms >= 0
    pids = set(result.task_pids.values())
    assert len(pids) == 2 and os.getpid() not in pids
    assert seen == []  # the sink ran in TaskManager processes, not here


@pytest.mark.timeout(60)
def test_print_goes_to_stdout_with_subtask_prefix(capfd: pytest.CaptureFixture[str]) -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    env.from_sequence(1, 6).map(lambda x: x * 10).print()
    env.execute()
    out = capfd.readouterr().out.splitlines()
    values = sorted(int(line.split(">")[1]) for line in out if ">" in line)
    prefixes = {line.split(">")[0] for line in out if ">" in line}
    assert values == [10, 20, 30, 40, 50, 60]
    assert prefixes == {"1", "2"}


@pytest.mark.timeout(60)
def test_from_sequence_is_split_across_subtasks() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(3)

    class Subtask(MapFunction):
        def open(self, ctx: RuntimeContext) -> None:
            self.i = ctx.get_index_of_this_subtask()

        def map(self, v: int) -> tuple[int, int]:
            return (self.i, v)

    stream = env.from_sequence(0, 29_999).map(Subtask())
    with stream.execute_and_collect() as results:
        got = list(results)
    assert sorted(v for _, v in got) == list(range(30_000))
    by_subtask: dict[int, list[int]] = {}
    for i, v in got:
        by_subtask.setdefault(i, []).append(v)
    # contiguous ranges, one per subtask, as Flink's NumberSequenceSource
    assert sorted((min(v), max(v)) for v in by_subtask.values()) == [
        (0, 9999),
        (10000, 19999),
        (20000, 29999),
    ]
