"""Flink's ``ExecNode.translateToPlan``: a logical plan → strom DataStream operators.

Scans become sources, ``Calc`` one compiled closure (``map``, or ``flat_map`` when it filters), ``Aggregate`` a
``key_by`` on the key tuple and a :class:`~strom.table.runtime.group_agg_operator.GroupAggOperator` over keyed state,
``Union`` a stream union, ``Join`` a keyed two-input join over state; rows stay :class:`~strom.api.row.Row`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from strom.api.row import _create_row
from strom.table.errors import TableException
from strom.table.functions.aggregate_functions import resolve_aggregate
from strom.table.planner.changelog import is_insert_only
from strom.table.planner.codegen import compile_calc
from strom.table.planner.expand_logical import Expand
from strom.table.planner.logical import (
    Aggregate,
    Calc,
    Correlate,
    DataStreamScan,
    IntervalJoin,
    Join,
    OverAggregate,
    Rank,
    RelNode,
    Sort,
    TableScan,
    Union,
    Values,
    WatermarkAssigner,
    WindowAggregate,
    WindowJoin,
    WindowTableFunction,
)
from strom.table.planner.partition_pushdown import push_partition_filter
from strom.table.planner.row_count_window_logical import RowCountWindowAggregate
from strom.table.planner.temporal_logical import LookupJoin, MatchRecognize, TemporalJoin
from strom.table.planner.window_lineage import is_window_deduplicate, window_rank_columns
from strom.table.runtime.aggs_handle import AggCall, GeneratedAggsHandle
from strom.table.runtime.group_agg import KeyByIndices
from strom.table.runtime.group_agg_operator import GroupAggOperator
from strom.table.runtime.window.table_stream_operator import RowKeySelector

if TYPE_CHECKING:
    from strom.api.datastream import DataStream
    from strom.api.environment import StreamExecutionEnvironment

__all__ = ["Translator"]


class _HandleFactory:
    """Builds the :class:`GeneratedAggsHandle` of an Aggregate in each subtask (picklable: plain data)."""

    def __init__(
        self, calls: tuple[tuple[str, tuple[Any, ...], tuple[int, ...], bool, int | None], ...], retracting: bool
    ) -> None:
        self.calls = calls
        self.retracting = retracting

    def __call__(self) -> GeneratedAggsHandle:
        built = []
        for name, arg_types, args, distinct, filter_arg in self.calls:
            resolved = resolve_aggregate(name, list(arg_types), retracting=self.retracting)
            built.append(AggCall(resolved.function, args, distinct, filter_arg))
        return GeneratedAggsHandle(built)


def aggs_handle_factory(rel: Aggregate | WindowAggregate | RowCountWindowAggregate) -> _HandleFactory:
    """The handle factory of an Aggregate's calls (also used by the window operators' planner)."""
    input_types = rel.input.row_type.types
    calls = tuple((c.name, tuple(input_types[a] for a in c.args), c.args, c.distinct, c.filter_arg) for c in rel.calls)
    return _HandleFactory(calls, retracting=not is_insert_only(rel.input))


class _First:
    def __init__(self, values: Any) -> None:
        self.values = values

    def __call__(self, row: Any) -> Any:
        return self.values(row)[0]


class _TableFunctionRows:
    """A Python table function's results as rows of the input's kind (a scalar, tuple or Row per result)."""

    def __init__(self, function: Any) -> None:
        self.function = function

    def __call__(self, row: Any) -> list[Any]:
        results = self.function(row)
        if results is None:
            return []
        out = []
        for result in results:
            values = (
                list(result._values)
                if hasattr(result, "_values")
                else (list(result) if isinstance(result, tuple | list) else [result])
            )
            out.append(_create_row(None, values, row._row_kind))
        return out


class _PairCondition:
    """A join's residual condition over ``left ++ right`` as the window join's ``condition(left, right)``."""

    def __init__(self, predicate: Any) -> None:
        self.predicate = predicate

    def __call__(self, left: Any, right: Any) -> bool:
        return bool(self.predicate(_create_row(None, [*left._values, *right._values])))


class _WithRankOne:
    """A deduplicated row with its row number, always 1 (the ``rn`` column the query reads)."""

    def __call__(self, row: Any) -> Any:
        return _create_row(None, [*row._values, 1], row._row_kind)


class Translator:
    """Translates plans into one environment's transformations."""

    def __init__(self, env: StreamExecutionEnvironment, *, batch: bool = False) -> None:
        self.env = env
        self.batch = batch  # BATCH mode: Arrow batch operators where the plan allows (planner/batch_physical.py)

    def translate(self, rel: RelNode) -> DataStream[Any]:
        if self.batch:
            from strom.table.planner.batch_physical import translate_batch

            batched = translate_batch(self, rel)
            if batched is not None:
                return batched
        method = getattr(self, f"_{type(rel).__name__.lower()}", None)
        if method is None:
            raise TableException(f"expected a plan node the translator knows; got {type(rel).__name__}")
        stream: DataStream[Any] = method(rel)
        return stream

    def _tablescan(self, rel: TableScan) -> DataStream[Any]:
        stream: DataStream[Any] = rel.source.create_stream(self.env, rel.row_type)
        return stream

    def _datastreamscan(self, rel: DataStreamScan) -> DataStream[Any]:
        stream: DataStream[Any] = rel.stream
        return stream

    def _values(self, rel: Values) -> DataStream[Any]:
        rows = [_create_row(None, list(r)) for r in rel.rows]
        return self.env.from_collection(rows).name("Values")

    def _calc(self, rel: Calc) -> DataStream[Any]:
        from strom.table.planner.calc_scan_fusion import fuse_calc_into_scan
        from strom.table.runtime.pandas_calc import pandas_calc, split_pandas_calc

        fused = fuse_calc_into_scan(self, rel)  # the scan's computed columns, watermark and this Calc in one step
        if fused is not None:
            return fused
        upstream = self.translate(push_partition_filter(rel))
        name = f"Calc(select=[{', '.join(rel.row_type.names)}])"
        split = split_pandas_calc(rel.projection, rel.condition, len(rel.input.row_type))
        if split is not None:  # pandas scalar functions: once per batch (Flink's PythonCalcSplitRule)
            calc = pandas_calc(upstream, *split, name=name)
            return calc.set_parallelism(1) if isinstance(rel.input, Sort) else calc
        from strom.table.runtime.async_calc import async_calc, max_concurrent_operations, split_async_calc

        split = split_async_calc(rel.projection, rel.condition, len(rel.input.row_type))
        if split is not None:  # async scalar functions: concurrently per batch (Flink's AsyncCalcSplitRule)
            calc = async_calc(upstream, *split, name=name, max_concurrent=max_concurrent_operations(self.env))
            return calc.set_parallelism(1) if isinstance(rel.input, Sort) else calc
        fn = compile_calc(rel.projection, rel.condition)
        calc = upstream.flat_map(fn).name(name) if rel.condition is not None else upstream.map(fn).name(name)
        single = isinstance(rel.input, Sort) or (isinstance(rel.input, Join) and not rel.input.left_keys)
        return calc.set_parallelism(1) if single else calc  # keeps the order of a sort's / a keyless join's rows

    def _aggregate(self, rel: Aggregate) -> DataStream[Any]:
        upstream = self.translate(rel.input)
        selector = RowKeySelector(rel.group_keys)  # GroupAggFunction's loop over a batch (group_agg_operator.py)
        keys = ", ".join(rel.input.row_type.names[k] for k in rel.group_keys)
        empty_row = self.batch and not rel.group_keys  # BATCH: one row over no input, as Flink's HashAggregate
        operator = GroupAggOperator(selector, aggs_handle_factory(rel), emit_on_empty_input=empty_row)
        aggregate = upstream.key_by(selector)._one_input(f"GroupAggregate(groupBy=[{keys}])", operator)
        return aggregate.set_parallelism(1) if empty_row else aggregate

    def _expand(self, rel: Expand) -> DataStream[Any]:
        from strom.table.runtime.expand import ExpandFunction

        function = ExpandFunction(rel.keys, rel.sets, rel.constants)
        return self.translate(rel.input).flat_map(function).name(f"Expand(fields=[{', '.join(rel.row_type.names)}])")

    def _union(self, rel: Union) -> DataStream[Any]:
        first, *rest = (self.translate(m) for m in rel.members)
        return first.union(*rest) if rest else first

    def _join(self, rel: Join) -> DataStream[Any]:
        from strom.table.planner.codegen import compile_condition
        from strom.table.runtime.join_condition_with_null_filters import join_null_filter
        from strom.table.runtime.streaming_join import StreamingJoinFunction

        left = self.translate(rel.left).key_by(KeyByIndices(rel.left_keys))
        right = self.translate(rel.right).key_by(KeyByIndices(rel.right_keys))
        condition = compile_condition(rel.condition) if rel.condition is not None else None
        null_filter = join_null_filter(rel)
        function = StreamingJoinFunction(
            rel.kind, len(rel.left.row_type), len(rel.right.row_type), condition, null_filter
        )
        joined: DataStream[Any] = left.connect(right).process(function)
        if not rel.left_keys:  # Flink's single exchange: a join without keys runs in one subtask
            joined = joined.set_parallelism(1)
        return joined.name(f"Join(joinType=[{rel.kind}])")

    def _windowtablefunction(self, rel: WindowTableFunction) -> DataStream[Any]:
        from strom.table.runtime.window.window_table_function import window_tvf

        upstream = self.translate(rel.input)
        if rel.kind == "SESSION":
            from strom.table.runtime.window.session_window import session_window_tvf

            return session_window_tvf(
                upstream, gap=rel.params[0], partition_indices=rel.partition_keys, rowtime_index=rel.rowtime_index
            )
        return window_tvf(upstream, rel.assigner(), rowtime_index=rel.rowtime_index)

    def _windowaggregate(self, rel: WindowAggregate) -> DataStream[Any]:
        from strom.table.runtime.window.window_aggregate import window_aggregate

        upstream = self.translate(rel.input)
        if rel.window.kind == "SESSION":
            from strom.table.planner.window_converter import check_session_keys
            from strom.table.runtime.window.session_window import session_window_aggregate

            check_session_keys(rel)
            return session_window_aggregate(
                upstream,
                key_indices=rel.group_keys,
                aggs=aggs_handle_factory(rel)(),
                gap=rel.window.params[0],
                window_properties=rel.window_properties,
            )
        if rel.window.group_window and rel.window.kind == "HOP" and rel.window.params[1] % rel.window.params[0]:
            from strom.table.runtime.window.group_window_aggregate import sliding_window_aggregate

            slide, size, offset = rel.window.params
            return sliding_window_aggregate(
                upstream,
                key_indices=rel.group_keys,
                aggs=aggs_handle_factory(rel)(),
                size=size,
                slide=slide,
                offset=offset,
                window_properties=rel.window_properties,
            )
        return window_aggregate(
            upstream,
            key_indices=rel.group_keys,
            aggs=aggs_handle_factory(rel)(),
            assigner=rel.window.assigner(),
            window_properties=rel.window_properties,
        )

    def _overaggregate(self, rel: OverAggregate) -> DataStream[Any]:
        from strom.table.runtime.over_aggregate import over_aggregate

        input_types = rel.input.row_type.types
        calls = tuple(
            (c.name, tuple(input_types[a] for a in c.args), c.args, c.distinct, c.filter_arg) for c in rel.calls
        )
        return over_aggregate(
            self.translate(rel.input),
            key_indices=rel.partition_keys,
            aggs=_HandleFactory(calls, retracting=True)(),
            rows=rel.rows,
            preceding=rel.preceding,
            rowtime_index=rel.rowtime_index,
        )

    def _windowjoin(self, rel: WindowJoin) -> DataStream[Any]:
        from strom.table.planner.codegen import compile_condition
        from strom.table.runtime.join_condition_with_null_filters import with_null_filters
        from strom.table.runtime.window.window_join import window_join

        residual = _PairCondition(compile_condition(rel.condition)) if rel.condition is not None else None
        condition = with_null_filters(rel, residual)
        return window_join(
            self.translate(rel.left),
            self.translate(rel.right),
            left_key_indices=rel.left_keys,
            right_key_indices=rel.right_keys,
            left_window_end_index=rel.left_window_end,
            right_window_end_index=rel.right_window_end,
            left_arity=len(rel.left.row_type),
            right_arity=len(rel.right.row_type),
            join_type=rel.kind,
            condition=condition,
        )

    def _intervaljoin(self, rel: IntervalJoin) -> DataStream[Any]:
        from strom.table.planner.codegen import compile_condition
        from strom.table.runtime.interval_join import interval_join
        from strom.table.runtime.join_condition_with_null_filters import join_null_filter

        condition = _PairCondition(compile_condition(rel.condition)) if rel.condition is not None else None
        return interval_join(
            self.translate(rel.left),
            self.translate(rel.right),
            left_key_indices=rel.left_keys,
            right_key_indices=rel.right_keys,
            lower_bound=rel.lower_bound,
            upper_bound=rel.upper_bound,
            left_arity=len(rel.left.row_type),
            right_arity=len(rel.right.row_type),
            join_type=rel.kind,
            condition=condition,
            filter_null_keys=bool(join_null_filter(rel)[0]),
        )

    def _rowcountwindowaggregate(self, rel: RowCountWindowAggregate) -> DataStream[Any]:
        from strom.table.runtime.row_count_window import row_count_window_aggregate

        return row_count_window_aggregate(self.translate(rel.input), rel, aggs_handle_factory(rel))

    def _temporaljoin(self, rel: TemporalJoin) -> DataStream[Any]:
        from strom.table.planner.temporal_translator import translate_temporal_join

        return translate_temporal_join(self, rel)

    def _lookupjoin(self, rel: LookupJoin) -> DataStream[Any]:
        from strom.table.planner.temporal_translator import translate_lookup_join

        return translate_lookup_join(self, rel)

    def _matchrecognize(self, rel: MatchRecognize) -> DataStream[Any]:
        from strom.table.planner.temporal_translator import translate_match

        return translate_match(self, rel)

    def _correlate(self, rel: Correlate) -> DataStream[Any]:
        return self.translate(rel.input).flat_map(_TableFunctionRows(rel.function)).name("Correlate")

    def _watermarkassigner(self, rel: WatermarkAssigner) -> DataStream[Any]:
        from strom.table.planner.codegen import compile_projection, rowtime_offset_millis
        from strom.table.planner.watermark_push_down import push_watermark_into_scan
        from strom.table.runtime.watermark_assigner import RowtimeWatermarkStrategy

        pushed = push_watermark_into_scan(self.env, rel)
        if pushed is not None:
            return pushed

        values = compile_projection([rel.expression])
        offset = rowtime_offset_millis(rel.expression, rel.rowtime_index)
        strategy = RowtimeWatermarkStrategy(rel.rowtime_index, _First(values), offset)
        return self.translate(rel.input).assign_timestamps_and_watermarks(strategy)

    def _rank(self, rel: Rank) -> DataStream[Any]:
        from strom.table.runtime.rank import RankFunction

        windowed = window_rank_columns(rel)
        if windowed is not None and rel.offset == 0 and is_window_deduplicate(rel):
            return self._window_deduplicate(rel, windowed)
        if windowed is not None and rel.offset == 0:
            from strom.table.runtime.window.window_rank import sort_key, window_top_n

            return window_top_n(
                self.translate(rel.input),
                window_end_index=windowed[1],
                partition_indices=windowed[0],
                sort_keys=[sort_key(column, ascending) for column, ascending in rel.order_keys],
                rank_end=rel.limit,
                output_rank_number=rel.output_rank,
            )
        keyed = self.translate(rel.input).key_by(KeyByIndices(rel.partition_keys))
        if rel.rank_type != "ROW_NUMBER":
            from strom.table.runtime.batch_rank import BatchRankFunction

            batch = BatchRankFunction(rel.rank_type, rel.order_keys, rel.limit, rel.output_rank, rel.offset)
            return keyed.process(batch).name(f"Rank(rankType=[{rel.rank_type}], rankEnd={rel.limit})")
        by_time = len(rel.order_keys) == 1 and "ROWTIME" in str(rel.input.row_type.types[rel.order_keys[0][0]])
        function = RankFunction(
            rel.order_keys, rel.limit, rel.output_rank, rel.offset, update_before=by_time, nulls_first=rel.nulls_first
        )
        return keyed.process(function).name(f"Rank(rankEnd={rel.limit})")

    def _sort(self, rel: Sort) -> DataStream[Any]:
        from strom.table.runtime.sort import RowTimeSortFunction, SortFunction

        keyed = self.translate(rel.input).key_by(KeyByIndices(()))
        if rel.rowtime:
            temporal = RowTimeSortFunction(rel.order_keys, rel.nulls_first)
            return keyed.process(temporal).name("TemporalSort").set_parallelism(1)
        function = SortFunction(rel.order_keys, rel.offset, rel.fetch, rel.nulls_first)
        return keyed.process(function).name("SortLimit" if rel.fetch is not None else "Sort").set_parallelism(1)

    def _window_deduplicate(self, rel: Rank, windowed: tuple[tuple[int, ...], int]) -> DataStream[Any]:
        from strom.table.runtime.window.window_rank import window_deduplicate

        ((order_index, ascending),) = rel.order_keys
        stream = window_deduplicate(
            self.translate(rel.input),
            window_end_index=windowed[1],
            partition_indices=windowed[0],
            order_index=order_index,
            keep_last_row=not ascending,
        )
        return stream.map(_WithRankOne()).name("Calc(rn=[1])")  # the Rank's row type always ends with $rn
