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
from strom.api.typeinfo import TypeInformation, Types, converting
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
    """A stream of records of type ``T`` (Flink's ``DataStream``): each method appends an operator, a partitioning or a
    sink to the program and returns the stream after it; nothing runs until ``env.execute()``.

    The examples build programs only and take ``env`` from ``StreamExecutionEnvironment.get_execution_environment()``.

    >>> words = env.from_collection(["to be", "or not"]).flat_map(str.split).name("split")
    >>> words.get_name()
    'split'
    """

    def __init__(self, env: StreamExecutionEnvironment, transformation: Transformation) -> None:
        self._env = env
        self._transformation = transformation

    def get_transformation(self) -> Transformation:
        """The transformation behind this stream (Flink's ``getTransformation``), a node of the StreamGraph.

        >>> env.from_collection([1, 2]).map(str).get_transformation().name
        'Map'
        """
        return self._transformation

    def get_execution_environment(self) -> StreamExecutionEnvironment:
        """The environment this stream belongs to (Flink's ``getExecutionEnvironment``).

        >>> env.from_collection([1]).get_execution_environment() is env
        True
        """
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
        """Name this operator (Flink's ``name``) in logs, metrics, the plan and the web UI. Call it on an operator, not
        on a ``key_by``, ``rebalance`` or ``union``.

        >>> env.from_collection([1, 2]).map(lambda x: x * 10).name("times ten").get_name()
        'times ten'
        """
        self._physical("name()").name = name
        return self

    def get_name(self) -> str:
        """The operator's name (Flink's ``getName``): given by :meth:`name`, or a default (``Map``, ``Filter``).

        >>> env.from_collection([1, 2]).filter(bool).get_name()
        'Filter'
        """
        return self._transformation.name

    def set_description(self, description: str) -> DataStream[T]:
        """A longer description of the operator (Flink's ``setDescription``), kept with it for plans and the web UI.

        >>> counts = env.from_collection(["1"]).map(int).set_description("parses the click counts of the raw log")
        """
        self._physical("set_description()").description = description
        return self

    def uid(self, uid: str) -> DataStream[T]:
        """A stable ID of this operator (Flink's ``uid``): a savepoint's state is matched to operators by it, so a
        changed program still restores. Give one to every stateful operator.

        >>> sums = env.from_collection([("a", 1)]).key_by(lambda t: t[0]).sum(1).uid("sum-per-key")
        """
        self._physical("uid()").uid = uid
        return self

    def set_parallelism(self, parallelism: int) -> DataStream[T]:
        """Run this operator as ``parallelism`` subtasks (Flink's ``setParallelism``; default: the environment's).

        >>> parsed = env.from_collection(["1", "2"]).map(int).set_parallelism(2)
        """
        self._physical("set_parallelism()").set_parallelism(parallelism)
        return self

    def set_max_parallelism(self, max_parallelism: int) -> DataStream[T]:
        """The operator's maximum parallelism, 1 to 32768 (Flink's ``setMaxParallelism``): the number of key groups its
        keyed state is split into, the highest parallelism a savepoint of it can be rescaled to.

        >>> sums = env.from_collection([("a", 1)]).key_by(lambda t: t[0]).sum(1).set_max_parallelism(128)
        """
        if not isinstance(max_parallelism, int) or not 1 <= max_parallelism <= 32768:
            raise InvalidProgramError(f"max parallelism must be an int in [1, 32768]; got {max_parallelism!r}")
        self._physical("set_max_parallelism()").max_parallelism = max_parallelism
        return self

    def disable_chaining(self) -> DataStream[T]:
        """Keep this operator out of every operator chain (Flink's ``disableChaining``): it runs as a task of its own
        and its records travel through the network stack.

        >>> squares = env.from_collection([1, 2]).map(lambda x: x * x).disable_chaining()
        """
        self._physical("disable_chaining()").chaining_strategy = ChainingStrategy.NEVER
        return self

    def start_new_chain(self) -> DataStream[T]:
        """Begin a new operator chain here (Flink's ``startNewChain``): not chained to its predecessor; its successors
        may chain to it.

        >>> kept = env.from_collection([1, -2]).map(abs).start_new_chain().filter(lambda x: x > 1)
        """
        self._physical("start_new_chain()").chaining_strategy = ChainingStrategy.HEAD
        return self

    def slot_sharing_group(self, name: str) -> DataStream[T]:
        """Put this operator into the slot sharing group ``name`` (Flink's ``slotSharingGroup``; default ``"default"``):
        only subtasks of one group share a TaskManager slot.

        >>> heavy = env.from_collection([1, 2]).map(lambda x: x**2).slot_sharing_group("heavy")
        """
        self._physical("slot_sharing_group()").slot_sharing_group = name
        return self

    def set_serializer(self, serializer: BatchSerializer) -> DataStream[T]:
        """Encode this stream's batches with ``serializer`` where they cross TaskManagers (default:
        :class:`~strom.api.serialization.PickleBatchSerializer`, pickle protocol 5).

        >>> from strom import PickleBatchSerializer
        >>> lines = env.from_collection([1, 2]).map(str).set_serializer(PickleBatchSerializer())
        """
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
        """The declared type of this stream's records (``Types.PICKLED_BYTE_ARRAY()`` when none was declared).

        >>> env.from_collection(["a"]).map(len, Types.INT()).get_type() == Types.INT()
        True
        """
        return self._transformation.output_type or Types.PICKLED_BYTE_ARRAY()

    def map(
        self, func: MapFunction[T, Any] | Callable[[T], Any], output_type: TypeInformation | None = None
    ) -> DataStream[Any]:
        """One output per record: ``func(value)`` (Flink's ``map``). ``func`` is a :class:`MapFunction` or a callable;
        with ``output_type`` the results are of that declared type (converted at the operator's output).

        >>> doubled = env.from_collection([1, 2, 3]).map(lambda x: x * 2)  # 2, 4, 6
        >>> pairs = env.from_collection(["a"]).map(lambda w: (w, 1), Types.TUPLE([Types.STRING(), Types.INT()]))
        """
        return self._one_input("Map", StreamMap(func), output_type)

    def flat_map(
        self, func: FlatMapFunction[T, Any] | Callable[[T], Iterable[Any]], output_type: TypeInformation | None = None
    ) -> DataStream[Any]:
        """Zero or more outputs per record: every element of ``func(value)`` (Flink's ``flatMap``). ``func`` is a
        :class:`FlatMapFunction` (its ``flat_map`` yields) or a callable returning an iterable.

        >>> words = env.from_collection(["to be", "or not"]).flat_map(str.split)  # to, be, or, not
        """
        return self._one_input("Flat Map", StreamFlatMap(func), output_type)

    def filter(self, func: FilterFunction[T] | Callable[[T], bool]) -> DataStream[T]:
        """The records for which ``func(value)`` is true (Flink's ``filter``); the stream keeps its type.

        >>> evens = env.from_collection([1, 2, 3, 4]).filter(lambda x: x % 2 == 0)  # 2, 4
        """
        return self._one_input("Filter", StreamFilter(func), same_type=True)

    def process(self, func: ProcessFunction[T, Any], output_type: TypeInformation | None = None) -> DataStream[Any]:
        """A :class:`ProcessFunction` per record (Flink's ``process``): ``process_element(value, ctx)`` yields outputs,
        reads the record's timestamp and emits to side outputs (``ctx.output(tag, v)``). Timers and keyed state need a
        keyed stream: ``key_by(...).process(KeyedProcessFunction)``.

        >>> class Split(ProcessFunction):
        ...     def process_element(self, value, ctx):
        ...         yield from value.split()
        >>> words = env.from_collection(["to be"]).process(Split())
        """
        if isinstance(func, KeyedProcessFunction):
            raise InvalidProgramError(
                "a KeyedProcessFunction needs a keyed stream; got a DataStream; hint: key_by(...).process(...)"
            )
        return self._one_input("Process", ProcessOperator(func), output_type)

    def assign_timestamps_and_watermarks(self, watermark_strategy: WatermarkStrategy[T]) -> DataStream[T]:
        """Give every record an event timestamp and the stream watermarks, by ``watermark_strategy`` (Flink's
        ``assignTimestampsAndWatermarks``).

        >>> strategy = WatermarkStrategy.for_bounded_out_of_orderness(5_000).with_timestamp_assigner(lambda e, ts: e[1])
        >>> timed = env.from_collection([("ann", 1_000), ("bob", 2_000)]).assign_timestamps_and_watermarks(strategy)
        """
        return self._one_input(
            "Timestamps/Watermarks", TimestampsAndWatermarksOperator(watermark_strategy), same_type=True
        )

    def get_side_output(self, output_tag: OutputTag) -> DataStream[Any]:
        """The records this operator emitted to ``output_tag`` (``ctx.output(tag, v)``, late window data; Flink's
        ``getSideOutput``).

        >>> small = OutputTag("small", Types.INT())
        >>> class Route(ProcessFunction):
        ...     def process_element(self, value, ctx):
        ...         if value < 10:
        ...             ctx.output(small, value)
        ...         else:
        ...             yield value
        >>> smalls = env.from_collection([3, 42]).process(Route()).get_side_output(small)  # 3
        """
        if not isinstance(output_tag, OutputTag):
            raise InvalidProgramError(
                f"get_side_output() expects an OutputTag; got a {type(output_tag).__name__}; hint: OutputTag('late')"
            )
        t = self._physical("get_side_output()")
        side = SideOutputTransformation(t, output_tag.tag_id)
        side.output_type = declared_type(output_tag.type_info, f"OutputTag('{output_tag.tag_id}')")
        return DataStream(self._env, side)

    def window_all(self, window_assigner: WindowAssigner[Any, Any]) -> AllWindowedStream[T]:
        """Windows over the whole (non-keyed) stream, evaluated by one operator instance (Flink's ``windowAll``).

        >>> from strom import TumblingProcessingTimeWindows
        >>> per_second = env.from_collection([3, 1]).window_all(TumblingProcessingTimeWindows.of(1_000)).reduce(max)
        """
        keyed = self.key_by(_null_key)
        return AllWindowedStream(keyed, window_assigner)

    def count_window_all(self, size: int, slide: int | None = None) -> AllWindowedStream[T]:
        """Windows of ``size`` records over the whole stream, every ``slide`` records if given (Flink's
        ``countWindowAll``).

        >>> sums = env.from_collection(range(9)).count_window_all(3).reduce(lambda a, b: a + b)  # 3, 12, 21
        """
        return _count_window(self.window_all(GlobalWindows.create()), size, slide)

    def key_by(
        self, key_selector: KeySelector[T, K] | Callable[[T], K], key_type: TypeInformation | None = None
    ) -> KeyedStream[T, K]:
        """Partition by key (Flink's ``keyBy``). With ``key_type`` the keys are converted to that type
        (``Types.FLOAT()`` keys are 32-bit floats) before they are hashed and handed to keyed functions.

        >>> per_user = env.from_collection([("ann", 3), ("bob", 1)]).key_by(lambda click: click[0])
        >>> per_price = env.from_collection([(1.5, "tea")]).key_by(lambda t: t[0], Types.FLOAT())
        """
        key_selector = typed_key_selector(key_selector, key_type)
        declared = key_type_of(key_selector)  # None: keys hash as PyFlink's pickled keys
        selector = key_selector_callable(key_selector)
        partitioner = KeyGroupStreamPartitioner(selector, max_parallelism=0, key_type=declared)  # max: the StreamGraph
        return KeyedStream(self._env, PartitionTransformation(self._transformation, partitioner), key_selector)

    def union(self, *streams: DataStream[T]) -> DataStream[T]:
        """This stream and ``streams`` (of the same type) as one (Flink's ``union``); each input's order is kept, not
        the order across inputs.

        >>> both = env.from_collection([1, 2]).union(env.from_collection([3]))  # 1, 2, 3 in some interleaving
        """
        for s in streams:
            if not isinstance(s, DataStream):
                raise InvalidProgramError(f"union() expects DataStreams; got a {type(s).__name__}")
            if s._env is not self._env:
                raise InvalidProgramError("union() expects streams of the same environment; got another one")
        return DataStream(self._env, UnionTransformation([self._transformation, *(s._transformation for s in streams)]))

    def join(self, other: DataStream[Any]) -> JoinedStreams[T, Any]:
        """A window join with ``other``: ``.where(key).equal_to(other_key).window(assigner).apply(join_function)``
        pairs the elements of both streams with equal keys in the same window (Flink's ``JoinedStreams``).

        >>> from strom import TumblingEventTimeWindows
        >>> clicks, views = env.from_collection([("ann", 1)]), env.from_collection([("ann", "home")])
        >>> pairs = (
        ...     clicks.join(views).where(lambda c: c[0]).equal_to(lambda v: v[0])
        ...     .window(TumblingEventTimeWindows.of(60_000)).apply(lambda c, v: (c[0], c[1], v[1]))
        ... )
        """
        return JoinedStreams(self, other)

    def co_group(self, other: DataStream[Any]) -> CoGroupedStreams[T, Any]:
        """A window co-group with ``other``: ``.where(key).equal_to(other_key).window(assigner).apply(fn)`` calls
        ``fn(first, second)`` with both sides of each key and window (Flink's ``CoGroupedStreams``).

        >>> from strom import TumblingEventTimeWindows
        >>> clicks, views = env.from_collection([("ann", 1)]), env.from_collection([("ann", "home")])
        >>> counts = (
        ...     clicks.co_group(views).where(lambda c: c[0]).equal_to(lambda v: v[0])
        ...     .window(TumblingEventTimeWindows.of(60_000)).apply(lambda cs, vs: [(len(cs), len(vs))])
        ... )
        """
        return CoGroupedStreams(self, other)

    # -- partitioning ------------------------------------------------------------------------------
    def _partition(self, partitioner: StreamPartitioner) -> DataStream[T]:
        return DataStream(self._env, PartitionTransformation(self._transformation, partitioner))

    def forward(self) -> DataStream[T]:
        """Each record to the next operator's subtask of the same index (Flink's ``forward``; equal parallelism).

        >>> out = env.from_collection([1, 2]).map(abs).forward().map(str)
        """
        return self._partition(ForwardPartitioner())

    def rebalance(self) -> DataStream[T]:
        """Records round-robin over all of the next operator's subtasks (Flink's ``rebalance``): evens out skew.

        >>> spread = env.from_collection([1, 2, 3]).rebalance().map(lambda x: x * x).set_parallelism(2)
        """
        return self._partition(RebalancePartitioner())

    def rescale(self) -> DataStream[T]:
        """Records round-robin over a subset of the next operator's subtasks (Flink's ``rescale``): each upstream
        subtask feeds its share of the downstream ones only, with fewer channels than :meth:`rebalance`.

        >>> spread = env.from_collection([1, 2, 3]).rescale().map(str).set_parallelism(2)
        """
        return self._partition(RescalePartitioner())

    def shuffle(self) -> DataStream[T]:
        """Each record to a uniformly random subtask of the next operator (Flink's ``shuffle``).

        >>> spread = env.from_collection([1, 2, 3]).shuffle().map(str).set_parallelism(2)
        """
        return self._partition(ShufflePartitioner())

    @overload
    def broadcast(self) -> DataStream[T]: ...

    @overload
    def broadcast(self, *descriptors: MapStateDescriptor) -> BroadcastStream[T]: ...

    def broadcast(self, *descriptors: MapStateDescriptor) -> DataStream[T] | BroadcastStream[T]:
        """Send every record to every instance of the next operator. With ``MapStateDescriptor`` s: a
        :class:`BroadcastStream` for the broadcast state pattern, to ``connect`` a stream with.

        >>> everywhere = env.from_collection([1, 2]).broadcast().map(str).set_parallelism(2)
        >>> rules_state = MapStateDescriptor("rules", Types.STRING(), Types.INT())
        >>> rules = env.from_collection([("ann", 10)]).broadcast(rules_state)
        """
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
        co-process; or, with a :class:`BroadcastStream`, the broadcast state pattern.

        >>> from strom import CoMapFunction
        >>> class Tag(CoMapFunction):
        ...     def map1(self, value):
        ...         return ("click", value)
        ...     def map2(self, value):
        ...         return ("view", value)
        >>> tagged = env.from_collection([1]).connect(env.from_collection(["home"])).map(Tag())
        """
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
        """Each record to the subtask ``partitioner(key, num_partitions)`` picks for its key, ``key_selector(value)``
        (Flink's ``partitionCustom``); ``partitioner`` may be a :class:`Partitioner` (``partition(key, n)``).

        >>> by_parity = env.from_collection([1, 2, 3]).partition_custom(lambda key, n: key % n, lambda x: x % 2)
        """
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
        ``str()``.

        >>> shown = env.from_collection(["a", "b"]).map(str.upper).print()  # A, B on stdout
        """
        declared = self._transformation.output_type
        formatter = declared.formatter() if declared is not None and not declared.is_pickled() else None
        function = PrintSinkFunction(sink_identifier or "", formatter=formatter)
        return self._sink("Print to Std. Out", PrintSinkOperator(function))

    def add_sink(self, sink_function: SinkFunction[T] | Callable[[T], None] | Sink[T]) -> DataStreamSink[T]:
        """A sink function per record (Flink's ``addSink``), or a :class:`Sink` (as PyFlink's
        ``add_sink(JdbcSink.sink(...))``).

        >>> logged = env.from_collection(["a"]).add_sink(lambda value: print("got", value))
        """
        if isinstance(sink_function, Sink):
            return self.sink_to(sink_function)
        return self._sink("Sink: Unnamed", StreamSink(sink_function))

    def sink_to(self, sink: Sink[T]) -> DataStreamSink[T]:
        """Write this stream to ``sink``, a :class:`Sink` of the unified sink API (Flink's ``sinkTo``), such as
        ``FileSink`` or ``JdbcSink.sink(...)``. A function per record goes to :meth:`add_sink`.

        >>> from strom.connectors import FileSink, SimpleStringEncoder
        >>> files = FileSink.for_row_format("/tmp/out", SimpleStringEncoder()).build()
        >>> written = env.from_collection(["a", "b"]).sink_to(files).name("to files")
        """
        if not isinstance(sink, Sink):
            raise InvalidProgramError(
                f"sink_to() expects a strom Sink; got a {type(sink).__name__}; hint: use add_sink() for functions"
            )
        sink.set_input_type(self._transformation.output_type)
        if isinstance(sink, GlobalCommittingSink):
            return self._sink("Sink: Writer", GlobalCommitSinkWriterOperator(sink))
        return self._sink("Sink: Writer", SinkWriterOperator(sink))

    def execute_and_collect(self, job_execution_name: str | None = None, limit: int | None = None) -> CloseableIterator:
        """Run the job and iterate this stream's records (Flink's ``executeAndCollect``; use it as a context manager).

        >>> with env.from_collection([1, 2, 3]).map(lambda x: x * 2).execute_and_collect() as results:  # doctest: +SKIP
        ...     print(sorted(results))
        [2, 4, 6]
        """
        sink_id = uuid.uuid4().hex
        # one collecting subtask, as Flink's CollectStreamSink: the client sees each upstream channel's order
        self._sink("Sink: Collect", CollectSinkOperator(sink_id)).set_parallelism(1)
        return self._env._execute_and_collect(sink_id, job_execution_name, limit)


class DataStreamSink(DataStream[T]):
    """Returned by the sink methods; supports ``name``, ``uid``, ``set_parallelism`` and chaining hints."""


class KeyedStream(DataStream[T], Generic[T, K]):
    """A stream partitioned by key (Flink's ``KeyedStream``, from :meth:`DataStream.key_by`): the functions applied to
    it see each record's key as current (keyed state, timers), and its aggregations keep one running value per key.

    >>> per_word = env.from_collection([("a", 1), ("b", 2), ("a", 3)]).key_by(lambda t: t[0])
    >>> totals = per_word.sum(1)  # ('a', 1), ('b', 2), ('a', 4)
    """

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
        """As :meth:`DataStream.map`; the function may use keyed state (the record's key is current).

        >>> ones = env.from_collection(["a", "b", "a"]).key_by(lambda w: w).map(lambda w: (w, 1))
        """
        return self._one_input("Map", KeyedStreamMap(func, self.key_selector), output_type)

    def flat_map(
        self, func: FlatMapFunction[T, Any] | Callable[[T], Iterable[Any]], output_type: TypeInformation | None = None
    ) -> DataStream[Any]:
        """As :meth:`DataStream.flat_map`; the function may use keyed state (the record's key is current).

        >>> letters = env.from_collection(["ab", "c"]).key_by(len).flat_map(list)  # a, b, c
        """
        return self._one_input("Flat Map", KeyedStreamFlatMap(func, self.key_selector), output_type)

    def filter(self, func: FilterFunction[T] | Callable[[T], bool]) -> DataStream[T]:
        """As :meth:`DataStream.filter`; the function may use keyed state (the record's key is current).

        >>> active = env.from_collection([("a", 0), ("b", 2)]).key_by(lambda t: t[0]).filter(lambda t: t[1] > 0)
        """
        return self._one_input("Filter", KeyedStreamFilter(func, self.key_selector), same_type=True)

    def reduce(self, func: ReduceFunction[T] | Callable[[T, T], T]) -> DataStream[T]:
        """Each record combined with its key's previous result, every result emitted (Flink's rolling ``reduce``).
        ``func`` is a :class:`ReduceFunction` or a callable ``(accumulated, value) -> accumulated`` of the record type.

        >>> keyed = env.from_collection([("a", 1), ("a", 2)]).key_by(lambda t: t[0])
        >>> totals = keyed.reduce(lambda acc, t: (acc[0], acc[1] + t[1]))  # ('a', 1), ('a', 3)
        """
        return self._keyed("Keyed Reduce", StreamGroupedReduce(func, self.key_selector))

    def sum(self, field: int | str = 0) -> DataStream[T]:
        """A rolling sum of ``field`` per key (Flink's ``sum``). ``field``: a tuple index or an attribute (dict key)
        name; the other fields stay those of the key's first record.

        >>> keyed = env.from_collection([("a", 1), ("a", 2)]).key_by(lambda t: t[0])
        >>> totals = keyed.sum(1)  # ('a', 1), ('a', 3)
        """
        return self._keyed("Keyed Aggregation", StreamGroupedReduce(SumAggregator(field), self.key_selector))

    def min(self, field: int | str = 0) -> DataStream[T]:
        """A rolling minimum of ``field`` per key (Flink's ``min``): only ``field`` changes, the other fields stay those
        of the key's first record; :meth:`min_by` emits the whole record holding the minimum.

        >>> keyed = env.from_collection([("a", 5, "x"), ("a", 3, "y")]).key_by(lambda t: t[0])
        >>> lowest = keyed.min(1)  # ('a', 5, 'x'), ('a', 3, 'x')
        """
        agg = ComparableAggregator(field, "min", by=False)
        return self._keyed("Keyed Aggregation", StreamGroupedReduce(agg, self.key_selector))

    def max(self, field: int | str = 0) -> DataStream[T]:
        """A rolling maximum of ``field`` per key (Flink's ``max``): only ``field`` changes, the other fields stay those
        of the key's first record; :meth:`max_by` emits the whole record holding the maximum.

        >>> keyed = env.from_collection([("a", 3, "x"), ("a", 5, "y")]).key_by(lambda t: t[0])
        >>> highest = keyed.max(1)  # ('a', 3, 'x'), ('a', 5, 'x')
        """
        agg = ComparableAggregator(field, "max", by=False)
        return self._keyed("Keyed Aggregation", StreamGroupedReduce(agg, self.key_selector))

    def min_by(self, field: int | str = 0) -> DataStream[T]:
        """Per key, the record with the smallest ``field`` so far, the first on ties (Flink's ``minBy``).

        >>> keyed = env.from_collection([("a", 5, "x"), ("a", 3, "y")]).key_by(lambda t: t[0])
        >>> lowest = keyed.min_by(1)  # ('a', 5, 'x'), ('a', 3, 'y')
        """
        agg = ComparableAggregator(field, "min", by=True)
        return self._keyed("Keyed Aggregation", StreamGroupedReduce(agg, self.key_selector))

    def max_by(self, field: int | str = 0) -> DataStream[T]:
        """Per key, the record with the largest ``field`` so far, the first on ties (Flink's ``maxBy``).

        >>> keyed = env.from_collection([("a", 3, "x"), ("a", 5, "y")]).key_by(lambda t: t[0])
        >>> highest = keyed.max_by(1)  # ('a', 3, 'x'), ('a', 5, 'y')
        """
        agg = ComparableAggregator(field, "max", by=True)
        return self._keyed("Keyed Aggregation", StreamGroupedReduce(agg, self.key_selector))

    def process(self, func: Any, output_type: TypeInformation | None = None) -> DataStream[Any]:
        """A :class:`KeyedProcessFunction` per record, its key current (Flink's ``process`` on a ``KeyedStream``): keyed
        state, event- and processing-time timers (``on_timer``), side outputs. A :class:`ProcessFunction` runs as on a
        :class:`DataStream`.

        >>> from strom import ValueStateDescriptor
        >>> class Count(KeyedProcessFunction):
        ...     def open(self, runtime_context):
        ...         self.n = runtime_context.get_state(ValueStateDescriptor("n", Types.LONG()))
        ...     def process_element(self, value, ctx):
        ...         self.n.update((self.n.value() or 0) + 1)
        ...         yield ctx.get_current_key(), self.n.value()
        >>> counts = env.from_collection(["a", "b", "a"]).key_by(lambda w: w).process(Count())
        """
        if isinstance(func, ProcessFunction):
            return self._one_input("Process", ProcessOperator(func), output_type)
        return self._one_input("KeyedProcess", KeyedProcessOperator(func, self.key_selector), output_type)

    def window(self, window_assigner: WindowAssigner[Any, Any]) -> WindowedStream[T]:
        """Group each key's records into windows (tumbling, sliding, session, global; Flink's ``window``).

        >>> from strom import TumblingEventTimeWindows
        >>> keyed = env.from_collection([("a", 1), ("a", 2)]).key_by(lambda t: t[0])
        >>> per_minute = keyed.window(TumblingEventTimeWindows.of(60_000)).reduce(lambda a, b: (a[0], a[1] + b[1]))
        """
        return WindowedStream(self, window_assigner)

    def count_window(self, size: int, slide: int | None = None) -> WindowedStream[T]:
        """Windows of ``size`` records per key (Flink's ``countWindow``); with ``slide``, one every ``slide`` records
        (Flink's rules: a purging count trigger on global windows, or a count evictor with a count trigger).

        >>> keyed = env.from_collection([("a", 1), ("a", 2)]).key_by(lambda t: t[0])
        >>> per_ten = keyed.count_window(10).reduce(lambda a, b: (a[0], a[1] + b[1]))
        """
        return _count_window(self.window(GlobalWindows.create()), size, slide)

    def interval_join(self, other: KeyedStream[Any, K]) -> IntervalJoin[T, Any, K]:
        """Join with the keyed stream ``other`` over a time interval: ``.between(lower, upper).process(fn)``
        pairs elements of equal keys with ``this.ts + lower <= other.ts <= this.ts + upper`` (Flink's
        ``KeyedStream.intervalJoin``; event time only).

        >>> clicks = env.from_collection([("ann", 1)]).key_by(lambda c: c[0])
        >>> views = env.from_collection([("ann", "home")]).key_by(lambda v: v[0])
        >>> joined = clicks.interval_join(views).between(-5_000, 5_000).process(lambda c, v, ctx: [(c[0], v[1])])
        """
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
    """``key_selector`` whose keys are converted to ``key_type`` (and carry it as ``key_type``:
    :func:`key_type_of`), one function calling the user's selector and testing its key (a ``STRING`` key is one
    ``type()`` check); itself when the type is absent or pickled."""
    declared = declared_type(key_type, "key_by()")
    if declared is None or declared.is_pickled():
        return key_selector
    selector = converting(key_selector_callable(key_selector), declared)
    # the declared key type: keyed state places keys in key groups as Flink hashes values of this type
    vars(selector)["key_type"] = declared
    return selector


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
