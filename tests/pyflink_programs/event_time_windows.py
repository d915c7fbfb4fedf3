"""Event-time windows with PyFlink's habits: Time and Duration, a TimestampAssigner subclass, a generic
ProcessWindowFunction context, typed window results and a windowed aggregate."""

from collections.abc import Iterable

from strom.common import Duration, Time, Types, WatermarkStrategy
from strom.common.watermark_strategy import TimestampAssigner
from strom.datastream import ProcessWindowFunction, StreamExecutionEnvironment
from strom.datastream.functions import AggregateFunction
from strom.datastream.window import SlidingEventTimeWindows, TimeWindow, TumblingEventTimeWindows


class Ts(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp) -> int:
        return value[1]


class Describe(ProcessWindowFunction[tuple, tuple, str, TimeWindow]):
    def process(self, key: str, context: ProcessWindowFunction.Context[TimeWindow], elements: Iterable[tuple]):
        values = [e[2] for e in elements]
        yield key, context.window().start, context.window().end, sum(values), len(values)


class Average(AggregateFunction):
    def create_accumulator(self):
        return 0, 0

    def add(self, value, accumulator):
        return accumulator[0] + value[2], accumulator[1] + 1

    def get_result(self, accumulator):
        return accumulator[0] / accumulator[1]

    def merge(self, a, b):
        return a[0] + b[0], a[1] + b[1]


EVENTS = [
    ("a", 1000, 1),
    ("b", 1500, 2),
    ("a", 2500, 3),
    ("a", 4100, 4),
    ("b", 3900, 5),
    ("a", 9000, 6),
    ("a", 8200, 7),
    ("b", 12000, 8),
    ("a", 5100, 9),
    ("b", 15500, 10),
]


def main() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    events = env.from_collection(EVENTS, type_info=Types.TUPLE([Types.STRING(), Types.LONG(), Types.INT()]))
    timed = events.assign_timestamps_and_watermarks(
        WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_millis(500)).with_timestamp_assigner(Ts())
    )
    windows = (
        timed.key_by(lambda e: e[0], key_type=Types.STRING())
        .window(TumblingEventTimeWindows.of(Time.seconds(3)))
        .process(Describe(), Types.TUPLE([Types.STRING(), Types.LONG(), Types.LONG(), Types.INT(), Types.INT()]))
    )
    windows.print("tumbling")
    (
        timed.key_by(lambda e: e[0])
        .window(SlidingEventTimeWindows.of(Time.seconds(4), Time.seconds(2)))
        .aggregate(Average(), accumulator_type=Types.TUPLE([Types.INT(), Types.INT()]), output_type=Types.DOUBLE())
        .print("sliding")
    )
    env.execute("event time windows")


if __name__ == "__main__":
    main()
