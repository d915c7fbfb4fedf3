"""PyFlink 2.x async I/O: an AsyncFunction whose async_invoke is a coroutine, ordered results, a timeout
callback, and a retry strategy with an exception predicate."""

import asyncio
import functools

from strom.common import Time, Types
from strom.datastream import (
    AsyncDataStream,
    AsyncFunction,
    AsyncRetryStrategy,
    RuntimeContext,
    StreamExecutionEnvironment,
    async_retry_predicates,
)


class Lookup(AsyncFunction):
    def open(self, runtime_context: RuntimeContext):
        self.failed = set()

    async def async_invoke(self, value):
        await asyncio.sleep(0.01 * (value % 3))
        if value % 4 == 1 and value not in self.failed:
            self.failed.add(value)
            raise ConnectionError(f"flaky {value}")  # retried once
        if value == 6:
            await asyncio.sleep(60)  # times out
        return [f"{value}->{value * value}"]

    def timeout(self, value):
        return [f"{value}->timeout"]


def main() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    numbers = env.from_collection(list(range(10)), type_info=Types.INT())
    strategy = AsyncRetryStrategy.fixed_delay(
        max_attempts=3,
        backoff_time_millis=10,
        result_predicate=None,
        exception_predicate=functools.partial(
            async_retry_predicates.exception_type_predicate, expected_error_type=ConnectionError
        ),
    )
    AsyncDataStream.ordered_wait_with_retry(
        numbers, Lookup(), Time.seconds(2), strategy, capacity=4, output_type=Types.STRING()
    ).print()
    env.execute()


if __name__ == "__main__":
    main()
