"""Word count on the embedded MiniCluster: two TaskManager processes, keyed running counts.

make demo        # or: python examples/word_count.py
"""

from collections import Counter

from strom import StreamExecutionEnvironment

TEXT = [
    "to be or not to be that is the question",
    "whether tis nobler in the mind to suffer",
    "the slings and arrows of outrageous fortune",
    "or to take arms against a sea of troubles",
]


def main() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    lines = env.from_collection(TEXT * 250)
    counts = (
        lines.flat_map(lambda line: line.split())
        .map(lambda w: (w, 1))
        .key_by(lambda t: t[0])
        .reduce(lambda a, b: (a[0], a[1] + b[1]))
    )
    with counts.execute_and_collect("word count") as results:
        final = {w: c for w, c in results}  # running counts: keep the last per word

    expected = Counter(w for line in TEXT * 250 for w in line.split())
    assert final == expected, "word counts differ from collections.Counter"
    print(f"{'word':<12} count")
    for word, count in sorted(final.items(), key=lambda kv: (-kv[1], kv[0]))[:10]:
        print(f"{word:<12} {count}")
    print(f"... {len(final)} distinct words, {sum(final.values())} in all — same as collections.Counter")


if __name__ == "__main__":
    main()
