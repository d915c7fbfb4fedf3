"""Side outputs as PyFlink writes them: a process function yields (output_tag, value)."""

from strom.common import Types
from strom.datastream import OutputTag, ProcessFunction, StreamExecutionEnvironment

small = OutputTag("small", Types.INT())
odd = OutputTag("odd", Types.STRING())


class Route(ProcessFunction):
    def process_element(self, value, ctx: "ProcessFunction.Context"):
        if value < 3:
            yield small, value
        elif value % 2:
            yield odd, f"odd {value}"
        else:
            yield value * 100


def main() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    routed = env.from_collection(list(range(8)), type_info=Types.INT()).process(Route(), output_type=Types.INT())
    routed.print("main")
    routed.get_side_output(small).print("small")
    routed.get_side_output(odd).print("odd")
    env.execute()


if __name__ == "__main__":
    main()
