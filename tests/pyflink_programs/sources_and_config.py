"""PyFlink's sources and configuration habits: NumberSequenceSource with from_source, Configuration's typed
getters and setters, and the environment calls that have no meaning without a JVM (accepted)."""

from strom.common import Configuration, Types, WatermarkStrategy
from strom.datastream import StreamExecutionEnvironment
from strom.datastream.connectors.number_seq import NumberSequenceSource


def main() -> None:
    config = Configuration()
    config.set_integer("parallelism.default", 1)
    config.set_string("pipeline.name", "sources and config")
    config.set_string("state.backend.type", "hashmap")
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.add_jars()
    env.add_python_file(__file__)
    print(config.get_integer("parallelism.default", 0), config.get_string("pipeline.name", ""))
    print(config.contains_key("pipeline.name"), config.get_boolean("no.such.key", True))
    (
        env.from_source(NumberSequenceSource(1, 12), WatermarkStrategy.no_watermarks(), "numbers")
        .filter(lambda n: n % 3 == 0)
        .map(lambda n: (n, n * n), output_type=Types.TUPLE([Types.LONG(), Types.LONG()]))
        .print()
    )
    env.execute()


if __name__ == "__main__":
    main()
