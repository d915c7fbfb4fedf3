"""strom: Apache Flink's runtime, rebuilt in Python.

    from strom import StreamExecutionEnvironment

    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    env.from_collection(["to be or not to be"]).flat_map(str.split).map(lambda w: (w, 1)) \\
        .key_by(lambda t: t[0]).sum(1).print()
    env.execute("word count")
"""

from strom.api.broadcast_stream import BroadcastConnectedStream, BroadcastStream
from strom.api.checkpoint import (
    CheckpointedFunction,
    CheckpointListener,
    FunctionInitializationContext,
    FunctionSnapshotContext,
)
from strom.api.checkpoint_config import CheckpointConfig, CheckpointingMode, ExternalizedCheckpointRetention
from strom.api.co_functions import (
    BroadcastProcessFunction,
    BroadcastState,
    CoFlatMapFunction,
    CoMapFunction,
    CoProcessFunction,
    KeyedBroadcastProcessFunction,
    KeyedCoProcessFunction,
    ProcessJoinFunction,
    ReadOnlyBroadcastState,
)
from strom.api.connected_streams import ConnectedStreams
from strom.api.datastream import DataStream, DataStreamSink, KeyedStream
from strom.api.environment import StreamExecutionEnvironment
from strom.api.eventtime import (
    BoundedOutOfOrdernessWatermarks,
    TimestampAssigner,
    Watermark,
    WatermarkGenerator,
    WatermarkOutput,
    WatermarkStrategy,
)
from strom.api.functions import (
    CoGroupFunction,
    FilterFunction,
    FlatJoinFunction,
    FlatMapFunction,
    JoinFunction,
    KeyedProcessFunction,
    KeySelector,
    MapFunction,
    ProcessFunction,
    ReduceFunction,
    RichFunction,
    RuntimeContext,
    SinkFunction,
    TimeDomain,
    TimerService,
)
from strom.api.interval_join import IntervalJoin, IntervalJoined
from strom.api.job_client import CloseableIterator, JobClient, JobExecutionResult, TaskMetrics
from strom.api.join import CoGroupedStreams, JoinedStreams
from strom.api.output_tag import OutputTag
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
from strom.api.windowed_stream import AllWindowedStream, WindowedStream
from strom.api.windowing import (
    ContinuousEventTimeTrigger,
    ContinuousProcessingTimeTrigger,
    CountEvictor,
    CountTrigger,
    DeltaEvictor,
    DynamicEventTimeSessionWindows,
    DynamicProcessingTimeSessionWindows,
    EventTimeSessionWindows,
    EventTimeTrigger,
    Evictor,
    GlobalWindow,
    GlobalWindows,
    ProcessingTimeSessionWindows,
    ProcessingTimeTrigger,
    PurgingTrigger,
    SlidingEventTimeWindows,
    SlidingProcessingTimeWindows,
    TimeEvictor,
    TimeWindow,
    Trigger,
    TriggerResult,
    TumblingEventTimeWindows,
    TumblingProcessingTimeWindows,
    WindowAssigner,
)
from strom.api.windowing.functions import (
    AllWindowFunction,
    ProcessAllWindowFunction,
    ProcessWindowFunction,
    WindowFunction,
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
    "AllWindowFunction",
    "AllWindowedStream",
    "BatchSerializer",
    "BoundedOutOfOrdernessWatermarks",
    "BroadcastConnectedStream",
    "BroadcastProcessFunction",
    "BroadcastState",
    "BroadcastStream",
    "CheckpointConfig",
    "CheckpointError",
    "CheckpointListener",
    "CheckpointedFunction",
    "CheckpointingMode",
    "CloseableIterator",
    "CoFlatMapFunction",
    "CoGroupFunction",
    "CoGroupedStreams",
    "CoMapFunction",
    "CoProcessFunction",
    "Configuration",
    "ConnectedStreams",
    "ContinuousEventTimeTrigger",
    "ContinuousProcessingTimeTrigger",
    "CountEvictor",
    "CountTrigger",
    "CsvEncoder",
    "DataGeneratorSource",
    "DataStream",
    "DataStreamSink",
    "DeltaEvictor",
    "DynamicEventTimeSessionWindows",
    "DynamicProcessingTimeSessionWindows",
    "EventTimeSessionWindows",
    "EventTimeTrigger",
    "Evictor",
    "ExternalizedCheckpointRetention",
    "FileSink",
    "FilterFunction",
    "FlatJoinFunction",
    "FlatMapFunction",
    "FunctionInitializationContext",
    "FunctionSnapshotContext",
    "GlobalWindow",
    "GlobalWindows",
    "IntervalJoin",
    "IntervalJoined",
    "InvalidProgramError",
    "JobClient",
    "JobExecutionError",
    "JobExecutionResult",
    "JobStatus",
    "JoinFunction",
    "JoinedStreams",
    "JsonLinesEncoder",
    "KeySelector",
    "KeyedBroadcastProcessFunction",
    "KeyedCoProcessFunction",
    "KeyedProcessFunction",
    "KeyedStream",
    "ListState",
    "ListStateDescriptor",
    "MapFunction",
    "MapState",
    "MapStateDescriptor",
    "OutputTag",
    "PickleBatchSerializer",
    "ProcessAllWindowFunction",
    "ProcessFunction",
    "ProcessJoinFunction",
    "ProcessWindowFunction",
    "ProcessingTimeSessionWindows",
    "ProcessingTimeTrigger",
    "PurgingTrigger",
    "ReadOnlyBroadcastState",
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
    "SlidingEventTimeWindows",
    "SlidingProcessingTimeWindows",
    "Source",
    "SourceReader",
    "SourceReaderContext",
    "SourceSplit",
    "StateTtlConfig",
    "StateVisibility",
    "StreamExecutionEnvironment",
    "StromError",
    "TaskMetrics",
    "TimeDomain",
    "TimeEvictor",
    "TimeWindow",
    "TimerService",
    "TimestampAssigner",
    "Trigger",
    "TriggerResult",
    "TumblingEventTimeWindows",
    "TumblingProcessingTimeWindows",
    "UpdateType",
    "UserFunctionError",
    "ValueState",
    "ValueStateDescriptor",
    "Watermark",
    "WatermarkGenerator",
    "WatermarkOutput",
    "WatermarkStrategy",
    "WindowAssigner",
    "WindowFunction",
    "WindowedStream",
]
