"""PyFlink's ``pyflink.datastream.functions`` module path: the user-function interfaces (re-exports)."""

from strom.api.async_function import AsyncFunction
from strom.api.async_retry_strategies import AsyncRetryPredicate, AsyncRetryStrategy
from strom.api.co_functions import (
    BroadcastProcessFunction,
    CoFlatMapFunction,
    CoMapFunction,
    CoProcessFunction,
    KeyedBroadcastProcessFunction,
    KeyedCoProcessFunction,
)
from strom.api.functions import (
    FilterFunction,
    FlatMapFunction,
    KeyedProcessFunction,
    KeySelector,
    MapFunction,
    Partitioner,
    ProcessFunction,
    ReduceFunction,
    RuntimeContext,
    SinkFunction,
    TimerService,
)
from strom.api.state import AggregateFunction
from strom.api.windowing.functions import (
    AllWindowFunction,
    ProcessAllWindowFunction,
    ProcessWindowFunction,
    WindowFunction,
)

__all__ = [
    "AggregateFunction",
    "AllWindowFunction",
    "AsyncFunction",
    "AsyncRetryPredicate",
    "AsyncRetryStrategy",
    "BroadcastProcessFunction",
    "CoFlatMapFunction",
    "CoMapFunction",
    "CoProcessFunction",
    "FilterFunction",
    "FlatMapFunction",
    "KeySelector",
    "KeyedBroadcastProcessFunction",
    "KeyedCoProcessFunction",
    "KeyedProcessFunction",
    "MapFunction",
    "Partitioner",
    "ProcessAllWindowFunction",
    "ProcessFunction",
    "ProcessWindowFunction",
    "ReduceFunction",
    "RuntimeContext",
    "SinkFunction",
    "TimerService",
    "WindowFunction",
]
