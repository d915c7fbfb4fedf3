"""Keyed state in map, flat_map and filter after key_by, at parallelism 2: each function keeps per-key state
through get_runtime_context() (PyFlink's RuntimeContext in open()), and what it emits depends on that state."""

from strom.common import Types
from strom.datastream import (
    FilterFunction,
    FlatMapFunction,
    MapFunction,
    RuntimeContext,
    StreamExecutionEnvironment,
)
from strom.datastream.state import ListStateDescriptor, ValueStateDescriptor


class RunningMax(MapFunction):
    def open(self, runtime_context: RuntimeContext):
        self.best = runtime_context.get_state(ValueStateDescriptor("best", Types.INT()))

    def map(self, value):
        best = self.best.value()
        if best is None or value[1] > best:
            self.best.update(value[1])
            best = value[1]
        return value[0], value[1], best


class PairUp(FlatMapFunction):
    def open(self, runtime_context: RuntimeContext):
        self.pending = runtime_context.get_list_state(ListStateDescriptor("pending", Types.INT()))

    def flat_map(self, value):
        held = list(self.pending.get())
        if held:
            self.pending.clear()
            yield value[0], held[0] + value[1]
        else:
            self.pending.add(value[1])


class FirstTwo(FilterFunction):
    def open(self, runtime_context: RuntimeContext):
        self.seen = runtime_context.get_state(ValueStateDescriptor("seen", Types.INT()))

    def filter(self, value):
        seen = (self.seen.value() or 0) + 1
        self.seen.update(seen)
        return seen <= 2


env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(2)
events = env.from_collection(
    [("a", 3), ("b", 7), ("a", 1), ("c", 4), ("b", 9), ("a", 8), ("c", 2), ("b", 5), ("c", 6), ("a", 2)],
    type_info=Types.TUPLE([Types.STRING(), Types.INT()]),
)
out = Types.TUPLE([Types.STRING(), Types.INT(), Types.INT()])
events.key_by(lambda e: e[0]).map(RunningMax(), output_type=out).print("max")
events.key_by(lambda e: e[0]).flat_map(PairUp(), output_type=Types.TUPLE([Types.STRING(), Types.INT()])).print("pairs")
events.key_by(lambda e: e[0]).filter(FirstTwo()).print("first")
env.execute("keyed functions")
