"""``strom demo``: the word count of ``examples/word_count.py``, shipped inside the package."""

from __future__ import annotations

from collections import Counter

from strom.api.environment import StreamExecutionEnvironment

_TEXT = [
    "to be or not to be that is the question",
    "whether tis nobler in the mind to suffer",
    "the slings and arrows of outrageous fortune",
]


def run_demo() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    counts = (
        env.from_collection(_TEXT * 100)
        .flat_map(lambda line: line.split())
        .map(lambda w: (w, 1))
        .key_by(lambda t: t[0])
        .reduce(lambda a, b: (a[0], a[1] + b[1]))
    )
    with counts.execute_and_collect("strom demo") as results:
        final = {w: c for w, c in results}
    assert final == Counter(w for line in _TEXT * 100 for w in line.split())
    for word, count in sorted(final.items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"{word:<12} {count}")
