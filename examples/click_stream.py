"""Click-stream analytics in event time — strom's flagship example (``make demo``).

A generated stream of page clicks (user, page, event time) arrives out of order, a few clicks very late. The job
counts each user's clicks per 5-second event-time window, names the page they clicked most, and sends clicks that
arrive after their window closed to a late-data side output. Checkpoints are on (every 500 ms); the job runs on
the embedded MiniCluster with two TaskManager processes, and results print as the windows close.

    make demo        # or: python examples/click_stream.py
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable
from datetime import timedelta
from typing import Any

from strom import (
    AggregateFunction,
    Configuration,
    DataGeneratorSource,
    OutputTag,
    ProcessWindowFunction,
    StreamExecutionEnvironment,
    TumblingEventTimeWindows,
    WatermarkStrategy,
)

EVENTS = 60_000
RATE = 12_000  # clicks per second (wall clock); event time advances 1 ms per click: windows close every ~0.4 s
USERS = 24
PAGES = ["/home", "/search", "/product", "/cart", "/checkout", "/help"]
WINDOW = timedelta(seconds=5)
OUT_OF_ORDER = timedelta(milliseconds=400)


def click(i: int) -> tuple[str, str, int]:
    """Click ``i``: (user, page, event time in ms). Mostly up to 300 ms out of order; one in 1000 is 3–6 s late."""
    h = (i * 2654435761 + 12345) & 0xFFFFFFFF
    user = f"user-{h % USERS:02d}"
    page = PAGES[(h >> 8) % len(PAGES) if (h >> 4) % 3 else 2]
    delay = (h >> 12) % 300
    if (h >> 20) % 1000 == 0:
        delay = 3000 + (h >> 4) % 3000
    return (user, page, i - delay)


class ClicksAndTopPage(AggregateFunction):
    """Per window and user: the number of clicks and the clicks per page."""

    def create_accumulator(self) -> tuple[int, dict[str, int]]:
        return (0, {})

    def add(self, value: tuple[str, str, int], acc: tuple[int, dict[str, int]]) -> tuple[int, dict[str, int]]:
        pages = acc[1]
        pages[value[1]] = pages.get(value[1], 0) + 1
        return (acc[0] + 1, pages)

    def get_result(self, acc: tuple[int, dict[str, int]]) -> tuple[int, str]:
        top = max(sorted(acc[1]), key=acc[1].__getitem__)
        return (acc[0], top)

    def merge(self, a: tuple[int, dict[str, int]], b: tuple[int, dict[str, int]]) -> tuple[int, dict[str, int]]:
        pages = dict(a[1])
        for page, n in b[1].items():
            pages[page] = pages.get(page, 0) + n
        return (a[0] + b[0], pages)


class WithWindow(ProcessWindowFunction):
    def process(self, key: str, context: Any, elements: Iterable[tuple[int, str]]) -> Iterable[Any]:
        for clicks, top in elements:
            yield ("window", context.window().start, key, clicks, top)


def fmt(ms: int) -> str:
    sign, ms = ("-" if ms < 0 else ""), abs(ms)
    return f"{sign}{ms // 60_000:02d}:{ms // 1000 % 60:02d}.{ms % 1000:03d}"


def main() -> None:
    config = Configuration(
        {
            "taskmanager.numberOfTaskSlots": 1,
            "pipeline.auto-watermark-interval": "100 ms",
            # a bounded restart strategy: a record that fails every attempt fails the job instead of looping
            "restart-strategy.type": "fixed-delay",
            "restart-strategy.fixed-delay.attempts": 3,
            "restart-strategy.fixed-delay.delay": "1 s",
        }
    )
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(2)
    env.enable_checkpointing(500)

    late = OutputTag("late-clicks")
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(OUT_OF_ORDER).with_timestamp_assigner(lambda c, ts: c[2])
    # one source subtask: the clicks keep their generated order, and event time advances evenly
    clicks = env.from_source(DataGeneratorSource(click, EVENTS, RATE), strategy, "clicks").set_parallelism(1)
    per_user = (
        clicks.key_by(lambda c: c[0])
        .window(TumblingEventTimeWindows.of(WINDOW))
        .side_output_late_data(late)
        .aggregate(ClicksAndTopPage(), window_function=WithWindow())
        .name("clicks per user and window")
    )
    report = per_user.union(per_user.get_side_output(late).map(lambda c: ("late", c)))

    print(f"click stream: {EVENTS} clicks of {USERS} users, 5 s event-time windows, watermark 400 ms behind,")
    print("checkpoints every 500 ms, parallelism 2 on two TaskManager processes\n")
    started = time.monotonic()
    windows: dict[tuple[int, str], tuple[int, str]] = {}
    late_clicks: list[tuple[str, str, int]] = []
    shown: set[int] = set()
    with report.execute_and_collect("click stream") as results:
        for row in results:
            if row[0] == "late":
                late_clicks.append(row[1])
                user, page, ts = row[1]
                print(f"  LATE   {user} clicked {page} at {fmt(ts)} — its window had already closed")
                continue
            _, start, user, count, top = row
            windows[(start, user)] = (count, top)
            if start not in shown and len([w for w in windows if w[0] == start]) == USERS:
                shown.add(start)
                busiest = max((w for w in windows if w[0] == start), key=lambda w: windows[w][0])
                total = sum(windows[w][0] for w in windows if w[0] == start)
                clicks_of, top_of = windows[busiest]
                print(
                    f"window [{fmt(start)}, {fmt(start + 5000)}) closed after {time.monotonic() - started:4.1f} s: "
                    f"{total:5d} clicks, busiest {busiest[1]} ({clicks_of} clicks, mostly {top_of})"
                )
        checkpoints = [c for c in results.client.get_checkpoint_statistics() if c.status == "COMPLETED"]

    # check against a plain-Python model: every click is counted once — in its window, or as late
    expected: Counter[tuple[int, str]] = Counter()
    for i in range(EVENTS):
        user, _, ts = click(i)
        expected[(ts - ts % 5000, user)] += 1
    for user, _, ts in late_clicks:
        expected[(ts - ts % 5000, user)] -= 1
    assert {k: v for k, v in expected.items() if v} == {k: v[0] for k, v in windows.items()}, "counts differ"
    print(
        f"\n{len(windows)} user windows, {sum(c for c, _ in windows.values())} clicks in windows + {len(late_clicks)} "
        f"late = {EVENTS}; {len(checkpoints)} checkpoints completed; counts equal a plain-Python model"
    )


if __name__ == "__main__":
    main()
