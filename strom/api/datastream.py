"""``DataStream`` and ``KeyedStream``: the user's handle on a stream of records.

A stream builds its successors: the connected, broadcast-connected and interval-joined streams made here hand
their two-input operator back to their first input (``_two_input``), and they and the window joins ask a stream
whether it is keyed (``_as_keyed``) or a stream at all (``_is_data_stream``), so their modules need
``DataStream`` for annotations only and do not import this module back.

>>> env = StreamExecutionEnvironment.get_execution_environment()   # doctest: +SKIP
>>> words = env.from_collection(["a b", "b"]).flat_map(str.split)    # doctest: +SKIP
>>> words.key_by(lambda w: w).map(lambda w: (w, 1))                  # doctest: +SKIP
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Generic, TypeGuard, TypeVar, overload

from strom.api.aggregations import ComparableAggregator, SumAggregator
from strom.api.broadcast_stream import BroadcastConnectedStream, BroadcastStream
from strom.api.connected_streams import ConnectedStreams
from strom.api.eventtime import WatermarkStrategy
from strom.api.functions import (
    FilterFunction,
    FlatMapFunction,
    KeyedProcessFunction,
    KeySelector,
    MapFunction,
    ProcessFunction,
    ReduceFunction,
    SinkFunction,
)
from strom.api.join import CoGroupedStreams, JoinedStreams
from strom.api.output_tag import OutputTag
from strom.api.serialization import BatchSerializer
from strom.api.sink import GlobalCommittingSink, Sink
from strom.api.state import MapStateDescriptor
from strom.api.transformations import (
    OneInputTransformation,
    PartitionTransformation,
    SideOutputTransformation,
    SinkTransformation,
    Transformation,
    TwoInputTransformation,
    UnionTransformation,
)
from strom.api.typeinfo import TypeInformation, Types, fast_converter
from strom.api.windowed_stream import AllWindowedStream, WindowedStream
from strom.api.windowing.assigners import GlobalWindows, WindowAssigner
from strom.api.windowing.evictors import CountEvictor
from strom.api.windowing.triggers import CountTrigger, PurgingTrigger
from strom.exceptions import InvalidProgramError
from strom.runtime.network.partitioner import (
    BroadcastPartitioner,
    CustomPartitionerWrapper,
    ForwardPartitioner,
    KeyGroupStreamPartitioner,
    RebalancePartitioner,
    RescalePartitioner,
    ShufflePartitioner,
    StreamPartitioner,
)
from strom.runtime.operators.base import ChainingStrategy, StreamOperator
from strom.runtime.operators.global_committer import GlobalCommitSinkWriterOperator
from strom.runtime.operators.keyed import (
    KeyedProcessOperator,
    KeyedStreamFilter,
    KeyedStreamFlatMap,
    KeyedStreamMap,
    StreamGroupedReduce,
    key_selector_callable,
)
from strom.runtime.operators.simple import ProcessOperator, StreamFilter, StreamFlatMap, StreamMap
from strom.runtime.operators.sink import (
    CollectSinkOperator,
    PrintSinkFunction,
    PrintSinkOperator,
    SinkWriterOperator,
    StreamSink,
)
from strom.runtime.operators.timestamps_and_watermarks import TimestampsAndWatermarksOperator
from strom.runtime.state.state_backend import key_type_of

if TYPE_CHECKING:
    from strom.api.environment import StreamExecutionEnvironment
    from strom.api.interval_join import IntervalJoin
    from strom.client.job_client import CloseableIterator

__all__ = ["DataStream", "DataStreamSink", "KeyedStream"]

T = TypeVar("T")
K = TypeVar("K")


class DataStream(Generic[T]):
    def __init__(self, env: StreamExecutionEnvironment, transformation: Transformation) -> None:
        self._env = env
        self._transformation = transformation

    def get_transformation(self) -> Transformation:
        return self._transformation

    def get_execution_environment(self) -> StreamExecutionEnvironment:
        return self._env

    # -- operator properties -----------------------------------------------------------------------
    def _physical(self, what: str) -> Transformation:
        t = self._transformation
        if t.is_virtual:
            raise InvalidProgramError(
                f"{what} needs an operator; got the partitioning/union '{t.name}'; "
                "hint: call it on the operator before key_by/rebalance/union, or after the next operator"
            )
        return t

    def name(self, name: str) -> DataStream[T]:
        self._physical("name()").name = name
        return self

    def get_name(self) -> str:
        return self._transformation.name

    def set_description(self, description: str) -> DataStream[T]:
        """A longer description of the operator (kept with it, as Flink's, for plans and the web UI)."""
        self._physical("set_description()").description = description
        return self

    def uid(self, uid: str) -> DataStream[T]:
        self._physical("uid()").uid = uid
        return self

    def set_parallelism(self, parallelism: int) -> DataStream[T]:
        self._physical("set_parallelism()").set_parallelism(parallelism)
        return self

    def set_max_parallelism(self, max_parallelism: int) -> DataStream[T]:
        if not isinstance(max_parallelism, int) or not 1 <= max_parallelism <= 32768:
            raise InvalidProgramError(f"max parallelism must be an int in [1, 32768]; got {max_parallelism!r}")
        self._physical("set_max_parallelism()").max_parallelism = max_parallelism
        return self

    def disable_chaining(self) -> DataStream[T]:
        self._physical("disable_chaining()").chaining_strategy = ChainingStrategy.NEVER
        return self

    def start_new_chain(self) -> DataStream[T]:
        self._physical("start_new_chain()").chaining_strategy = ChainingStrategy.HEAD
        return self

    def slot_sharing_group(self, name: str) -> DataStream[T]:
        self._physical("slot_sharing_group()").slot_sharing_group = name
        return self

    def set_serializer(self, serializer: BatchSerializer) -> DataStream[T]:
        """Encode this stream's batches with ``serializer`` where they cross TaskManagers (default:
        :class:`~strom.api.serialization.PickleBatchSerializer`, pickle protocol 5)."""
        if not isinstance(serializer, BatchSerializer):
            raise InvalidProgramError(
                f"expected a strom.BatchSerializer for set_serializer(); got {type(serializer).__name__}; "
                "hint: subclass BatchSerializer with serialize(batch) -> bytes and deserialize(data) -> list"
            )
        self._physical("set_serializer()").serializer = serializer
        return self

    # -- operators ---------------------------------------------------------------------------------
    def _one_input(
        self,
        name: str,
        operator: StreamOperator,
        output_type: TypeInformation | None = None,
        *,
        same_type: bool = False,
    ) -> DataStream[Any]:
        """Append ``operator``; its records have the declared ``output_type`` (converted at its output), or with
        ``same_type`` the input's type (values pass unchanged: filters, timestamps)."""
        t = OneInputTransformation(name, self._transformation, operator)
        if same_type:  # the values pass unchanged: no conversion, the input's type for what follows
            t.output_type = self._transformation.output_type
        else:
            t.output_type = declared_type(output_type, name)
            operator.output_type = t.output_type
        self._env._add_operator(t)
        return DataStream(self._env, t)

    def _two_input(
        self, name: str, second: Transformation, operator: StreamOperator, output_type: object, where: str
    ) -> DataStream[Any]:
        """Append the two-input ``operator`` reading this stream (input 1) and ``second`` (input 2); its records
        have the declared ``output_type`` (checked as the type of ``where``). The connected, broadcast-connected
        and interval-joined streams end in it."""
        t = TwoInputTransformation(name, self._transformation, second, operator)
        t.output_type = operator.output_type = declared_type(output_type, where)
        self._env._add_operator(t)
        return DataStream(self._env, t)

    def _as_keyed(self) -> KeyedStream[T, Any] | None:
        """This stream as a :class:`KeyedStream`; ``None``: it is not keyed."""
        return None

    @staticmethod
    def _is_data_stream(value: object) -> TypeGuard[DataStream[Any]]:
        """Whether ``value`` is a stream (the check of a second input given to ``join``, ``interval_join``)."""
        return isinstance(value, DataStream)

    def get_type(self) -> TypeInformation:
        """The declared type of this stream's records (``Types.PICKLED_BYTE_ARRAY()`` when none was declared)."""
        return self._transformation.output_type or Types.PICKLED_BYTE_ARRAY()

    def map(
        self, func: MapFunction[T, Any] | Callable[[T], Any], output_type: TypeInformation | None = None
    ) -> DataStream[Any]:
        return self._one_input("Map", StreamMap(func), output_type)

    def flat_map(
        self, func: FlatMapFunction[T, Any] | Callable[[T], Iterable[Any]], output_type: TypeInformation | None = None
    ) -> DataStream[Any]:
        return self._one_input("Flat Map", StreamFlatMap(func), output_type)

    def filter(self, func: FilterFunction[T] | Callable[[T], bool]) -> DataStream[T]:
        return self._one_input("Filter", StreamFilter(func), same_type=True)

    def process(self, func: ProcessFunction[T, Any], output_type: TypeInformation | None = None) -> DataStream[Any]:
        if isinstance(func, KeyedProcessFunction):
            raise InvalidProgramError(
                "a KeyedProcessFunction needs a keyed stream; got a DataStream; hint: key_by(...).process(...)"
            )
        return self._one_input("Process", ProcessOperator(func), output_type)

    def assign_timestamps_and_watermarks(self, watermark_strategy: WatermarkStrategy[T]) -> DataStream[T]:
        """Give every record an event timestamp and the stream watermarks, by ``watermark_strategy``."""
        return self._one_input(
            "Timestamps/Watermarks", TimestampsAndWatermarksOperator(watermark_strategy), same_type=True
        )

    def get_side_output(self, output_tag: OutputTag) -> DataStream[Any]:
        """The records this operator emitted to ``output_tag`` (``ctx.output(tag, v)``, late window data)."""
        if not isinstance(output_tag, OutputTag):
            raise InvalidProgramError(
                f"get_side_output() expects an OutputTag; got a {type(output_tag).__name__}; hint: OutputTag('late')"
            )
        t = self._physical("get_side_output()")
        side = SideOutputTransformation(t, output_tag.tag_id)
        side.output_type = declared_type(output_tag.type_info, f"OutputTag('{output_tag.tag_id}')")
        return DataStream(self._env, side)

    def window_all(self, window_assigner: WindowAssigner[Any, Any]) -> AllWindowedStream[T]:
        """Windows over the whole (non-keyed) stream, evaluated by one operator instance."""
        keyed = self.key_by(_null_key)
        return AllWindowedStream(keyed, window_assigner)

    def count_window_all(self, size: int, slide: int | None = None) -> AllWindowedStream[T]:
        """Windows of ``size`` records over the whole stream, every ``slide`` records if given."""
        return _count_window(self.window_all(GlobalWindows.create()), size, slide)

    def key_by(
        self, key_selector: KeySelector[T, K] | Callable[[T], K], key_type: TypeInformation | None = None
    ) -> KeyedStream[T, K]:
        """Partition by key. With ``key_type`` the keys are converted to that type (``Types.FLOAT()`` keys are
        32-bit floats) before they are hashed and handed to keyed functions."""
        key_selector = typed_key_selector(key_selector, key_type)
        declared = key_type_of(key_selector)  # None: keys hash as PyFlink's pickled keys
        selector = key_selector_callable(key_selector)
        partitioner = KeyGroupStreamPartitioner(selector, max_parallelism=0, key_type=declared)  # max: the StreamGraph
        return KeyedStream(self._env, PartitionTransformation(self._transformation, partitioner), key_selector)

    def union(self, *streams: DataStream[T]) -> DataStream[T]:
        for s in streams:
            if not isinstance(s, DataStream):
                raise InvalidProgramError(f"union() expects DataStreams; got a {type(s).__name__}")
            if s._env is not self._env:
                raise InvalidProgramError("union() expects streams of the same environment; got another one")
        return DataStream(self._env, UnionTransformation([self._transformation, *(s._transformation for s in streams)]))

    def join(self, other: DataStream[Any]) -> JoinedStreams[T, Any]:
        """A window join with ``other``: ``.where(key).equal_to(other_key).window(assigner).apply(join_function)``
        pairs the elements of both streams with equal keys in the same window (Flink's ``JoinedStreams``)."""
        return JoinedStreams(self, other)

    def co_group(self, other: DataStream[Any]) -> CoGroupedStreams[T, Any]:
        """A window co-group with ``other``: ``.where(key).equal_to(other_key).window(assigner).apply(fn)`` calls
        ``fn(first, second)`` with both sides of each key and window (Flink's ``CoGroupedStreams``)."""
        return CoGroupedStreams(self, other)

    # -- partitioning ------------------------------------------------------------------------------
    def _partition(self, partitioner: StreamPartitioner) -> DataStream[T]:
        return DataStream(self._env, PartitionTransformation(self._transformation, partitioner))

    def forward(self) -> DataStream[T]:
        return self._partition(ForwardPartitioner())

    def rebalance(self) -> DataStream[T]:
        return self._partition(RebalancePartitioner())

    def rescale(self) -> DataStream[T]:
        return self._partition(RescalePartitioner())

    def shuffle(self) -> DataStream[T]:
        return self._partition(ShufflePartitioner())

    @overload
    def broadcast(self) -> DataStream[T]: ...

    @overload
    def broadcast(self, *descriptors: MapStateDescriptor) -> BroadcastStream[T]: ...

    def broadcast(self, *descriptors: MapStateDescriptor) -> DataStream[T] | BroadcastStream[T]:
        """Send every record to every instance of the next operator. With ``MapStateDescriptor`` s: a
        :class:`BroadcastStream` for the broadcast state pattern, to ``connect`` a stream with."""
        partitioned = PartitionTransformation(self._transformation, BroadcastPartitioner())
        if descriptors:
            return BroadcastStream(self._env, partitioned, descriptors)
        return DataStream(self._env, partitioned)

    @overload
    def connect(self, other: BroadcastStream[Any]) -> BroadcastConnectedStream[T, Any]: ...

    @overload
    def connect(self, other: DataStream[Any]) -> ConnectedStreams[T, Any]: ...

    def connect(self, other: DataStream[Any] | BroadcastStream[Any]) -> Any:
        """Two streams into one operator that knows which input each element came from: co-map, co-flat-map,
        co-process; or, with a :class:`BroadcastStream`, the broadcast state pattern."""
        if isinstance(other, BroadcastStream):
            if other.get_execution_environment() is not self._env:
                raise InvalidProgramError("connect() expects streams of the same environment; got another one")
            return BroadcastConnectedStream(self, other)
        if not isinstance(other, DataStream):
            raise InvalidProgramError(
                f"connect() expects a DataStream or a BroadcastStream; got a {type(other).__name__}"
            )
        if other._env is not self._env:
            raise InvalidProgramError("connect() expects streams of the same environment; got another one")
        return ConnectedStreams(self, other)

    def partition_custom(
        self, partitioner: Callable[[Any, int], int], key_selector: KeySelector[T, Any] | Callable[[T], Any]
    ) -> DataStream[T]:
        part: Any = getattr(partitioner, "partition", None)
        if not callable(part):
            if not callable(partitioner):
                raise InvalidProgramError(
                    f"partition_custom() expects a callable (key, num_partitions) -> int; got a "
                    f"{type(partitioner).__name__}; hint: lambda key, n: hash_of(key) % n"
                )
            part = partitioner
        return self._partition(CustomPartitionerWrapper(part, key_selector_callable(key_selector)))

    # -- sinks -------------------------------------------------------------------------------------
    def _sink(self, name: str, operator: StreamOperator) -> DataStreamSink[T]:
        t = SinkTransformation(name, self._transformation, operator)
        self._env._add_operator(t)
        return DataStreamSink(self._env, t)

    def print(self, sink_identifier: str | None = None) -> DataStreamSink[T]:
        """Each record on stdout, prefixed ``N> `` (the subtask) when the sink runs in parallel; records of a
        declared type as Flink prints them (a ``Types.TUPLE`` as ``(a,5)``, a row as ``+I[a,5]``), others with
        ``str()``."""
        declared = self._transformation.output_type
        formatter = declared.formatter() if declared is not None and not declared.is_pickled() else None
        function = PrintSinkFunction(sink_identifier or "", formatter=formatter)
        return self._sink("Print to Std. Out", PrintSinkOperator(function))

    def add_sink(self, sink_function: SinkFunction[T] | Callable[[T], None] | Sink[T]) -> DataStreamSink[T]:
        """A sink function per record, or a :class:`Sink` (as PyFlink's ``add_sink(JdbcSink.sink(...))``)."""
        if isinstance(sink_function, Sink):
            return self.sink_to(sink_function)
        return self._sink("Sink: Unnamed", StreamSink(sink_function))

    def sink_to(self, sink: Sink[T]) -> DataStreamSink[T]:
        if not isinstance(sink, Sink):
            raise InvalidProgramError(
                f"sink_to() expects a strom Sink; got a {type(sink).__name__}; hint: use add_sink() for functions"
            )
        sink.set_input_type(self._transformation.output_type)
        if isinstance(sink, GlobalCommittingSink):
            return self._sink("Sink: Writer", GlobalCommitSinkWriterOperator(sink))
        return self._sink("Sink: Writer", SinkWriterOperator(sink))

    def execute_and_collect(self, job_execution_name: str | None = None, limit: int | None = None) -> CloseableIterator:
        """Run the job and iterate this stream's records (use it as a context manager)."""
        sink_id = uuid.uuid4().hex
        # one collecting subtask, as Flink's CollectStreamSink: the client sees each upstream channel's order
        self._sink("Sink: Collect", CollectSinkOperator(sink_id)).set_parallelism(1)
        return self._env._execute_and_collect(sink_id, job_execution_name, limit)


class DataStreamSink(DataStream[T]):
    """Returned by the sink methods; supports ``name``, ``uid``, ``set_parallelism`` and chaining hints."""


class KeyedStream(DataStream[T], Generic[T, K]):
    def __init__(
        self,
        env: StreamExecutionEnvironment,
        transformation: PartitionTransformation,
        key_selector: KeySelector[T, K] | Callable[[T], K],
    ) -> None:
        super().__init__(env, transformation)
        self.key_selector = key_selector

    def _as_keyed(self) -> KeyedStream[T, K]:
        return self

    def _keyed(self, name: str, operator: StreamOperator) -> DataStream[Any]:
        """A keyed aggregation: its results have the input's declared type (and are converted to it)."""
        return self._one_input(name, operator, self._transformation.output_type)

    def map(
        self, func: MapFunction[T, Any] | Callable[[T], Any], output_type: TypeInformation | None = None
    ) -> DataStream[Any]:
        """As :meth:`DataStream.map`; the function may use keyed state (the record's key is current)."""
        return self._one_input("Map", KeyedStreamMap(func, self.key_selector), output_type)

    def flat_map(
        self, func: FlatMapFunction[T, Any] | Callable[[T], Iterable[Any]], output_type: TypeInformation | None = None
    ) -> DataStream[Any]:
        """As :meth:`DataStream.flat_map`; the function may use keyed state (the record's key is current)."""
        return self._one_input("Flat Map", KeyedStreamFlatMap(func, self.key_selector), output_type)

    def filter(self, func: FilterFunction[T] | Callable[[T], bool]) -> DataStream[T]:
        """As :meth:`DataStream.filter`; the function may use keyed state (the record's key is current)."""
        return self._one_input("Filter", KeyedStreamFilter(func, self.key_selector), same_type=True)

    def reduce(self, func: ReduceFunction[T] | Callable[[T, T], T]) -> DataStream[T]:
        return self._keyed("Keyed Reduce", StreamGroupedReduce(func, self.key_selector))

    def sum(self, field: int | str = 0) -> DataStream[T]:
        return self._keyed("Keyed Aggregation", StreamGroupedReduce(SumAggregator(field), self.key_selector))

    def min(self, field: int | str = 0) -> DataStream[T]:
        agg = ComparableAggregator(field, "min", by=False)
        return self._keyed("Keyed Aggregation", StreamGroupedReduce(agg, self.key_selector))

    def max(self, field: int | str = 0) -> DataStream[T]:
        agg = ComparableAggregator(field, "max", by=False)
        return self._keyed("Keyed Aggregation", StreamGroupedReduce(agg, self.key_selector))

    def min_by(self, field: int | str = 0) -> DataStream[T]:
        agg = ComparableAggregator(field, "min", by=True)
        return self._keyed("Keyed Aggregation", StreamGroupedReduce(agg, self.key_selector))

    def max_by(self, field: int | str = 0) -> DataStream[T]:
        agg = ComparableAggregator(field, "max", by=True)
        return self._keyed("Keyed Aggregation", StreamGroupedReduce(agg, self.key_selector))

    def process(self, func: Any, output_type: TypeInformation | None = None) -> DataStream[Any]:
        if isinstance(func, ProcessFunction):
            return self._one_input("Process", ProcessOperator(func), output_type)
        return self._one_input("KeyedProcess", KeyedProcessOperator(func, self.key_selector), output_type)

    def window(self, window_assigner: WindowAssigner[Any, Any]) -> WindowedStream[T]:
        """Group each key's records into windows (tumbling, sliding, session, global)."""
        return WindowedStream(self, window_assigner)

    def count_window(self, size: int, slide: int | None = None) -> WindowedStream[T]:
        """Windows of ``size`` records per key; with ``slide``, one every ``slide`` records (Flink's rules:
        a purging count trigger on global windows, or a count evictor with a count trigger)."""
        return _count_window(self.window(GlobalWindows.create()), size, slide)

    def interval_join(self, other: KeyedStream[Any, K]) -> IntervalJoin[T, Any, K]:
        """Join with the keyed stream ``other`` over a time interval: ``.between(lower, upper).process(fn)``
        pairs elements of equal keys with ``this.ts + lower <= other.ts <= this.ts + upper`` (Flink's
        ``KeyedStream.intervalJoin``; event time only)."""
        from strom.api.interval_join import IntervalJoin

        return IntervalJoin(self, other)


def declared_type(type_info: object, where: str) -> TypeInformation | None:
    """``type_info`` checked to be a ``TypeInformation`` (or ``None``: no declared type)."""
    if type_info is None or isinstance(type_info, TypeInformation):
        return type_info
    raise InvalidProgramError(
        f"expected the type of {where} as a TypeInformation; got {type_info!r:.60} ({type(type_info).__name__}); "
        "hint: Types.INT(), Types.TUPLE([Types.STRING(), Types.INT()]), Types.ROW_NAMED([...], [...])"
    )


def typed_key_selector(key_selector: Any, key_type: TypeInformation | None) -> Any:
    """``key_selector`` whose keys are converted to ``key_type`` (and carry it: :func:`key_type_of`); itself when the
    type is absent or pickled."""
    declared = declared_type(key_type, "key_by()")
    if declared is None or declared.is_pickled():
        return key_selector
    return _TypedKeySelector(key_selector_callable(key_selector), fast_converter(declared), declared)


class _TypedKeySelector:
    """A key selector whose keys are converted to the declared ``key_type``."""

    def __init__(
        self, selector: Callable[[Any], Any], convert: Callable[[Any], Any], key_type: TypeInformation
    ) -> None:
        self.selector = selector
        self.convert = convert
        #: the declared key type: keyed state places keys in key groups as Flink hashes values of this type
        self.key_type = key_type

    def __call__(self, value: Any) -> Any:
        return self.convert(self.selector(value))


def _null_key(value: Any) -> int:
    """The key of a non-keyed window: every record the same (Flink's ``NullByteKeySelector``)."""
    return 0


_W = TypeVar("_W", WindowedStream[Any], AllWindowedStream[Any])


def _count_window(stream: _W, size: int, slide: int | None) -> _W:
    for what, n in (("size", size), ("slide", slide)):
        if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
            raise InvalidProgramError(
                f"count window expects a positive int {what}; got {n!r}; "
                "hint: count_window(100) or count_window(100, 10)"
            )
    if slide is None:
        stream.trigger(PurgingTrigger.of(CountTrigger.of(size)))
    else:
        stream.evictor(CountEvictor.of(size)).trigger(CountTrigger.of(slide))
    return stream
