"""PyFlink's ``pyflink.datastream`` module path: a PyFlink DataStream program runs on strom with ``pyflink``
replaced by ``strom`` in its imports. Every name is re-exported from its strom module (one definition each);
docs/pyflink.md lists PyFlink's names with their status here."""

from __future__ import annotations

from typing import TYPE_CHECKING

from strom.lazy_exports import LazyExports

if TYPE_CHECKING:
    from strom.api.async_data_stream import AsyncDataStream
    from strom.api.async_function import AsyncFunction
    from strom.api.async_retry_strategies import AsyncRetryPredicate, AsyncRetryStrategy
    from strom.api.broadcast_stream import BroadcastConnectedStream, BroadcastStream
    from strom.api.checkpoint_config import CheckpointConfig, CheckpointingMode, ExternalizedCheckpointRetention
    from strom.api.co_functions import (
        BroadcastProcessFunction,
        CoFlatMapFunction,
        CoMapFunction,
        CoProcessFunction,
        KeyedBroadcastProcessFunction,
        KeyedCoProcessFunction,
    )
    from strom.api.connected_streams import ConnectedStreams
    from strom.api.datastream import DataStream, DataStreamSink, KeyedStream
    from strom.api.environment import StreamExecutionEnvironment
    from strom.api.execution_mode import RuntimeExecutionMode
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
        TimeDomain,
        TimerService,
    )
    from strom.api.output_tag import OutputTag
    from strom.api.state import AggregateFunction
    from strom.api.state_backend import EmbeddedRocksDBStateBackend, HashMapStateBackend, StateBackend
    from strom.api.windowed_stream import AllWindowedStream, WindowedStream
    from strom.api.windowing import (
        CountWindow,
        GlobalWindow,
        MergingWindowAssigner,
        TimeWindow,
        Trigger,
        TriggerResult,
        Window,
        WindowAssigner,
    )
    from strom.api.windowing.functions import (
        AllWindowFunction,
        ProcessAllWindowFunction,
        ProcessWindowFunction,
        WindowFunction,
    )
    from strom.client.job_client import CloseableIterator
    from strom.datastream import async_retry_predicates, async_retry_strategies  # PyFlink imports them from here

_LAZY = LazyExports(
    __name__,
    {
        "strom.api.async_data_stream": ("AsyncDataStream",),
        "strom.api.async_function": ("AsyncFunction",),
        "strom.api.async_retry_strategies": ("AsyncRetryPredicate", "AsyncRetryStrategy"),
        "strom.api.broadcast_stream": ("BroadcastConnectedStream", "BroadcastStream"),
        "strom.api.checkpoint_config": ("CheckpointConfig", "CheckpointingMode", "ExternalizedCheckpointRetention"),
        "strom.api.co_functions": (
            "BroadcastProcessFunction",
            "CoFlatMapFunction",
            "CoMapFunction",
            "CoProcessFunction",
            "KeyedBroadcastProcessFunction",
            "KeyedCoProcessFunction",
        ),
        "strom.api.connected_streams": ("ConnectedStreams",),
        "strom.api.datastream": ("DataStream", "DataStreamSink", "KeyedStream"),
        "strom.api.environment": ("StreamExecutionEnvironment",),
        "strom.api.execution_mode": ("RuntimeExecutionMode",),
        "strom.api.functions": (
            "FilterFunction",
            "FlatMapFunction",
            "KeyedProcessFunction",
            "KeySelector",
            "MapFunction",
            "Partitioner",
            "ProcessFunction",
            "ReduceFunction",
            "RuntimeContext",
            "SinkFunction",
            "TimeDomain",
            "TimerService",
        ),
        "strom.api.output_tag": ("OutputTag",),
        "strom.api.state": ("AggregateFunction",),
        "strom.api.state_backend": ("EmbeddedRocksDBStateBackend", "HashMapStateBackend", "StateBackend"),
        "strom.api.windowed_stream": ("AllWindowedStream", "WindowedStream"),
        "strom.api.windowing": (
            "CountWindow",
            "GlobalWindow",
            "MergingWindowAssigner",
            "TimeWindow",
            "Trigger",
            "TriggerResult",
            "Window",
            "WindowAssigner",
        ),
        "strom.api.windowing.functions": (
            "AllWindowFunction",
            "ProcessAllWindowFunction",
            "ProcessWindowFunction",
            "WindowFunction",
        ),
        "strom.client.job_client": ("CloseableIterator",),
        "strom.datastream": ("async_retry_predicates", "async_retry_strategies"),
    },
)

__all__ = [
    "AggregateFunction",
    "AllWindowFunction",
    "AllWindowedStream",
    "AsyncDataStream",
    "AsyncFunction",
    "AsyncRetryPredicate",
    "AsyncRetryStrategy",
    "BroadcastConnectedStream",
    "BroadcastProcessFunction",
    "BroadcastStream",
    "CheckpointConfig",
    "CheckpointingMode",
    "CloseableIterator",
    "CoFlatMapFunction",
    "CoMapFunction",
    "CoProcessFunction",
    "ConnectedStreams",
    "CountWindow",
    "DataStream",
    "DataStreamSink",
    "EmbeddedRocksDBStateBackend",
    "ExternalizedCheckpointRetention",
    "FilterFunction",
    "FlatMapFunction",
    "GlobalWindow",
    "HashMapStateBackend",
    "KeySelector",
    "KeyedBroadcastProcessFunction",
    "KeyedCoProcessFunction",
    "KeyedProcessFunction",
    "KeyedStream",
    "MapFunction",
    "MergingWindowAssigner",
    "OutputTag",
    "Partitioner",
    "ProcessAllWindowFunction",
    "ProcessFunction",
    "ProcessWindowFunction",
    "ReduceFunction",
    "RuntimeContext",
    "RuntimeExecutionMode",
    "SinkFunction",
    "StateBackend",
    "StreamExecutionEnvironment",
    "TimeDomain",
    "TimeWindow",
    "TimerService",
    "Trigger",
    "TriggerResult",
    "Window",
    "WindowAssigner",
    "WindowFunction",
    "WindowedStream",
    "async_retry_predicates",
    "async_retry_strategies",
]


def __getattr__(name: str) -> object:
    return _LAZY.load(name)


def __dir__() -> list[str]:
    return _LAZY.dir(globals())
