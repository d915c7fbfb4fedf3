"""BATCH mode results for event time: out-of-order input that a streaming job would drop as late is windowed in
full and fires at the end of input."""

from strom.common import Time, Types, WatermarkStrategy
from strom.common.watermark_strategy import TimestampAssigner
from strom.datastream import RuntimeExecutionMode, StreamExecutionEnvironment
from strom.datastream.window import TumblingEventTimeWindows


class Ts(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp) -> int:
        return value[1]


def main() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    env.set_parallelism(1)
    events = [("a", 9000, 1), ("b", 100, 2), ("a", 100, 3), ("b", 7000, 4), ("a", 200, 5), ("b", 300, 6)]
    timed = env.from_collection(
        events, type_info=Types.TUPLE([Types.STRING(), Types.LONG(), Types.INT()])
    ).assign_timestamps_and_watermarks(WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(Ts()))
    (
        timed.key_by(lambda e: e[0])
        .window(TumblingEventTimeWindows.of(Time.seconds(5)))
        .reduce(
            lambda a, b: (a[0], max(a[1], b[1]), a[2] + b[2]),
            output_type=Types.TUPLE([Types.STRING(), Types.LONG(), Types.INT()]),
        )
        .print("window")
    )
    env.execute()


if __name__ == "__main__":
    main()
