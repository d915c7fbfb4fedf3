"""strom: Apache Flink's runtime, rebuilt in Python.

    from strom import StreamExecutionEnvironment

    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    env.from_collection(["to be or not to be"]).flat_map(str.split).map(lambda w: (w, 1)) \\
        .key_by(lambda t: t[0]).sum(1).print()
    env.execute("word count")
"""

from strom.api.datastream import DataStream, DataStreamSink, KeyedStream
from strom.api.environment import StreamExecutionEnvironment
from strom.api.functions import (
    FilterFunction,
    FlatMapFunction,
    KeyedProcessFunction,
    KeySelector,
    MapFunction,
    ProcessFunction,
    ReduceFunction,
    RichFunction,
    RuntimeContext,
    SinkFunction,
)
from strom.api.job_client import CloseableIterator, JobClient, JobExecutionResult, TaskMetrics
from strom.api.serialization import BatchSerializer, PickleBatchSerializer
from strom.api.sink import Sink, SinkWriter, SinkWriterContext
from strom.api.source import Source, SourceReader, SourceReaderContext, SourceSplit
from strom.api.state import ValueState, ValueStateDescriptor
from strom.config import Configuration
from strom.exceptions import InvalidProgramError, JobExecutionError, StromError, UserFunctionError
from strom.runtime.execution_state import JobStatus

__version__ = "0.1.0"

__all__ = [
    "BatchSerializer",
    "CloseableIterator",
    "Configuration",
    "DataStream",
    "DataStreamSink",
    "FilterFunction",
    "FlatMapFunction",
    "InvalidProgramError",
    "JobClient",
    "JobExecutionError",
    "JobExecutionResult",
    "JobStatus",
    "KeySelector",
    "KeyedProcessFunction",
    "KeyedStream",
    "MapFunction",
    "PickleBatchSerializer",
    "ProcessFunction",
    "ReduceFunction",
    "RichFunction",
    "RuntimeContext",
    "Sink",
    "SinkFunction",
    "SinkWriter",
    "SinkWriterContext",
    "Source",
    "SourceReader",
    "SourceReaderContext",
    "SourceSplit",
    "StreamExecutionEnvironment",
    "StromError",
    "TaskMetrics",
    "UserFunctionError",
    "ValueState",
    "ValueStateDescriptor",
]
