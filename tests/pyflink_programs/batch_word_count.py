"""A word count as PyFlink programs write it: BATCH runtime mode, a typed tuple stream, a keyed reduce that emits
one final count per word."""

from strom.common import Types
from strom.datastream import RuntimeExecutionMode, StreamExecutionEnvironment

LINES = [
    "the quick brown fox jumps over the lazy dog",
    "The dog barks, the fox runs",
    "a fox is quick and a dog is lazy",
    "über straße fox",
]


def main() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    env.set_parallelism(1)
    (
        env.from_collection(LINES)
        .flat_map(lambda line: line.split())
        .map(lambda w: (w, 1), output_type=Types.TUPLE([Types.STRING(), Types.INT()]))
        .key_by(lambda t: t[0])
        .reduce(lambda a, b: (a[0], a[1] + b[1]))
        .print()
    )
    env.execute()


if __name__ == "__main__":
    main()
