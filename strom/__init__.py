"""strom: Apache Flink's runtime, rebuilt in Python.

    from strom import StreamExecutionEnvironment

    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    env.from_collection(["to be or not to be"]).flat_map(str.split).map(lambda w: (w, 1)) \\
        .key_by(lambda t: t[0]).sum(1).print()
    env.execute("word count")
"""

from strom.api.checkpoint import (
    CheckpointedFunction,
    CheckpointListener,
    FunctionInitializationContext,
    FunctionSnapshotContext,
)
from strom.api.checkpoint_config import CheckpointConfig, CheckpointingMode, ExternalizedCheckpointRetention
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
from strom.api.state import (
    AggregateFunction,
    AggregatingState,
    AggregatingStateDescriptor,
    ListState,
    ListStateDescriptor,
    MapState,
    MapStateDescriptor,
    ReducingState,
    ReducingStateDescriptor,
    StateTtlConfig,
    StateVisibility,
    UpdateType,
    ValueState,
    ValueStateDescriptor,
)
from strom.config import Configuration
from strom.connectors.datagen import DataGeneratorSource
from strom.connectors.file_system import CsvEncoder, FileSink, JsonLinesEncoder, SimpleStringEncoder
from strom.exceptions import CheckpointError, InvalidProgramError, JobExecutionError, StromError, UserFunctionError
from strom.runtime.execution_state import JobStatus

__version__ = "0.1.0"

__all__ = [
    "AggregateFunction",
    "AggregatingState",
    "AggregatingStateDescriptor",
    "BatchSerializer",
    "CheckpointConfig",
    "CheckpointError",
    "CheckpointListener",
    "CheckpointedFunction",
    "CheckpointingMode",
    "CloseableIterator",
    "Configuration",
    "CsvEncoder",
    "DataGeneratorSource",
    "DataStream",
    "DataStreamSink",
    "ExternalizedCheckpointRetention",
    "FileSink",
    "FilterFunction",
    "FlatMapFunction",
    "FunctionInitializationContext",
    "FunctionSnapshotContext",
    "InvalidProgramError",
    "JobClient",
    "JobExecutionError",
    "JobExecutionResult",
    "JobStatus",
    "JsonLinesEncoder",
    "KeySelector",
    "KeyedProcessFunction",
    "KeyedStream",
    "ListState",
    "ListStateDescriptor",
    "MapFunction",
    "MapState",
    "MapStateDescriptor",
    "PickleBatchSerializer",
    "ProcessFunction",
    "ReduceFunction",
    "ReducingState",
    "ReducingStateDescriptor",
    "RichFunction",
    "RuntimeContext",
    "SimpleStringEncoder",
    "Sink",
    "SinkFunction",
    "SinkWriter",
    "SinkWriterContext",
    "Source",
    "SourceReader",
    "SourceReaderContext",
    "SourceSplit",
    "StateTtlConfig",
    "StateVisibility",
    "StreamExecutionEnvironment",
    "StromError",
    "TaskMetrics",
    "UpdateType",
    "UserFunctionError",
    "ValueState",
    "ValueStateDescriptor",
]
