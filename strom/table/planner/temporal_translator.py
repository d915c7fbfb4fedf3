"""``translateToPlan`` of the temporal nodes (Flink's ``StreamExecTemporalJoin``, ``StreamExecLookupJoin``,
``StreamExecMatch``): a temporal join keys both inputs by the join key into a
:class:`~strom.table.runtime.temporal_row_time_join.TemporalRowTimeJoinFunction`; a lookup join maps each left row
through :class:`~strom.table.runtime.lookup_join.LookupJoinRunner`; MATCH_RECOGNIZE keys the input by its
partition columns into :class:`~strom.table.runtime.match.match_operator.MatchFunction`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from strom.table.planner.temporal_logical import LookupJoin, MatchRecognize, TemporalJoin
from strom.table.runtime.group_agg import KeyByIndices
from strom.table.runtime.rowtime_timers import RowtimeKeyedCoProcessOperator, RowtimeKeyedProcessOperator

if TYPE_CHECKING:
    from strom.api.datastream import DataStream
    from strom.table.planner.translator import Translator

__all__ = ["translate_lookup_join", "translate_match", "translate_temporal_join"]


def translate_temporal_join(translator: Translator, rel: TemporalJoin) -> DataStream[Any]:
    from strom.table.planner.codegen import compile_condition
    from strom.table.runtime.temporal_row_time_join import TemporalRowTimeJoinFunction

    left = translator.translate(rel.left).key_by(KeyByIndices(rel.left_keys))
    right = translator.translate(rel.right).key_by(KeyByIndices(rel.right_keys))
    condition = compile_condition(rel.condition) if rel.condition is not None else None
    function = TemporalRowTimeJoinFunction(
        rel.left_rowtime, rel.right_rowtime, len(rel.right.row_type), rel.kind == "LEFT", condition
    )
    operator = RowtimeKeyedCoProcessOperator(function, left.key_selector, right.key_selector)
    connected = left.connect(right)
    joined: DataStream[Any] = connected._two_input(f"TemporalJoin(joinType=[{rel.kind}Join])", operator, None)
    return joined


def translate_lookup_join(translator: Translator, rel: LookupJoin) -> DataStream[Any]:
    from strom.table.connectors.lookup import LookupContext
    from strom.table.planner.codegen import compile_condition
    from strom.table.runtime.lookup_join import LookupJoinRunner

    provider = rel.source.get_lookup_runtime_provider(LookupContext(rel.lookup_keys))
    condition = compile_condition(rel.condition) if rel.condition is not None else None
    width = len(rel.table_row_type) if rel.table_row_type is not None else 0
    runner = LookupJoinRunner(provider, rel.left_keys, width, rel.kind == "LEFT", condition)
    keys = ", ".join(rel.table_row_type.names[k] for k in rel.lookup_keys) if rel.table_row_type else ""
    stream: DataStream[Any] = translator.translate(rel.left).flat_map(runner)
    return stream.name(f"LookupJoin(table=[{rel.table_name}], joinType=[{rel.kind}Join], lookup=[{keys}])")


def translate_match(translator: Translator, rel: MatchRecognize) -> DataStream[Any]:
    from strom.table.runtime.match.match_operator import MatchFunction

    upstream = translator.translate(rel.input)
    keyed = upstream.key_by(KeyByIndices(rel.partition_keys)) if rel.partition_keys else upstream.key_by(_NoKey())
    pattern = " ".join(str(e) for e in rel.spec.elements)
    operator = RowtimeKeyedProcessOperator(MatchFunction(rel.spec), keyed.key_selector)
    matched: DataStream[Any] = keyed._one_input(f"Match(pattern=[{pattern}])", operator, None)
    return matched


class _NoKey:
    """Without PARTITION BY every row goes to one partition (Flink runs the operator at parallelism 1)."""

    def __call__(self, row: Any) -> int:
        return 0
