"""The public surface is deliberate: adding or removing a name is a visible change."""

from __future__ import annotations

import strom


def test_all_is_pinned() -> None:
    assert sorted(strom.__all__) == sorted(
        [
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
    )


def test_every_exported_name_exists() -> None:
    for name in strom.__all__:
        assert getattr(strom, name) is not None


def test_runtime_says_it_is_internal() -> None:
    import strom.runtime

    assert strom.runtime.__doc__ is not None and "Internal" in strom.runtime.__doc__
