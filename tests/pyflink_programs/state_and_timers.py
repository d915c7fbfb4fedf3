"""Keyed state and timers in PyFlink's style, at parallelism 2: typed state descriptors (a FLOAT value state is
32 bits), state TTL through PyFlink's builder, list and map state, and event-time timers that emit at the end."""

from strom.common import Time, Types, WatermarkStrategy
from strom.common.watermark_strategy import TimestampAssigner
from strom.datastream import KeyedProcessFunction, RuntimeContext, StreamExecutionEnvironment
from strom.datastream.state import ListStateDescriptor, MapStateDescriptor, StateTtlConfig, ValueStateDescriptor


class Ts(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp) -> int:
        return value[0]


class Totals(KeyedProcessFunction):
    def open(self, runtime_context: RuntimeContext):
        total = ValueStateDescriptor("total", Types.FLOAT())
        total.enable_time_to_live(
            StateTtlConfig.new_builder(Time.hours(1))
            .set_update_type(StateTtlConfig.UpdateType.OnReadAndWrite)
            .set_state_visibility(StateTtlConfig.StateVisibility.NeverReturnExpired)
            .disable_cleanup_in_background()
            .build()
        )
        self.total = runtime_context.get_state(total)
        self.seen = runtime_context.get_list_state(ListStateDescriptor("seen", Types.LONG()))
        self.per_hour = runtime_context.get_map_state(MapStateDescriptor("per_hour", Types.LONG(), Types.INT()))

    def process_element(self, value, ctx: "KeyedProcessFunction.Context"):
        current = self.total.value() or 0
        self.total.update(current + value[2])
        self.seen.add(value[0])
        bucket = value[0] // 1000
        self.per_hour.put(bucket, (self.per_hour.get(bucket) or 0) + 1)
        ctx.timer_service().register_event_time_timer(ctx.timestamp() + 1000)
        yield ctx.get_current_key(), self.total.value()

    def on_timer(self, timestamp: int, ctx: "KeyedProcessFunction.OnTimerContext"):
        yield "timer", ctx.get_current_key(), timestamp, sorted(self.seen.get()), sorted(self.per_hour.items())


def main() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    events = [(1000, "x", 0.1), (1500, "y", 2.2), (2500, "x", 0.7), (3100, "y", 1.3), (3200, "x", 10.01)]
    (
        env.from_collection(events, type_info=Types.TUPLE([Types.LONG(), Types.STRING(), Types.FLOAT()]))
        .assign_timestamps_and_watermarks(WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(Ts()))
        .key_by(lambda e: e[1])
        .process(Totals())
        .print()
    )
    env.execute()


if __name__ == "__main__":
    main()
