"""``FROM t MATCH_RECOGNIZE (…)`` (Flink's ``FlinkLogicalMatch`` → ``StreamExecMatch``): validates the clause and
plans a :class:`~strom.table.planner.temporal_logical.MatchRecognize` whose spec the CEP operator runs.

Supported as Flink 2.3 runs it: PARTITION BY columns, ORDER BY the rowtime (ascending, first), MEASURES with
pattern navigation (``A.col``, ``FIRST``/``LAST(A.col[, n])``), aggregates over a variable (COUNT, SUM, AVG, MIN,
MAX) and ``MATCH_ROWTIME()``, ONE ROW PER MATCH, every AFTER MATCH SKIP, a PATTERN of quantified variables,
WITHIN, DEFINE over the current and earlier rows. ``PREV``/``NEXT`` are refused with Flink's own message (it has
no physical offsets); ALL ROWS PER MATCH, alternation, groups, CLASSIFIER and MATCH_NUMBER are refused with their
position.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from typing import TYPE_CHECKING

from sqlglot import exp

from strom.table.errors import TableException, ValidationException
from strom.table.logical_types import TimestampKind
from strom.table.planner.changelog import describe_updating_node, is_insert_only
from strom.table.planner.codegen import compile_projection
from strom.table.planner.expression_converter import ExpressionConverter
from strom.table.planner.logical import RelNode, RowType
from strom.table.planner.rex import RexLiteral
from strom.table.planner.scope import Scope
from strom.table.planner.temporal_logical import MatchRecognize
from strom.table.runtime.match.match_expression import MatchExpression, Slot
from strom.table.runtime.match.match_operator import MatchSpec
from strom.table.runtime.match.nfa import AfterMatchSkip
from strom.table.runtime.match.pattern import PatternError, parse_pattern
from strom.table.sql.parser import at

if TYPE_CHECKING:
    from strom.table.types import DataType

__all__ = ["convert_match_recognize"]

_SlotOf = Callable[[Slot, "DataType"], exp.Expr]

_AGGREGATES: dict[type[exp.Expr], str] = {
    exp.Count: "COUNT",
    exp.Sum: "SUM",
    exp.Avg: "AVG",
    exp.Min: "MIN",
    exp.Max: "MAX",
}
_UNSUPPORTED_CALLS = {"CLASSIFIER", "MATCH_NUMBER", "MATCH_PROCTIME", "RUNNING", "FINAL"}


def _refuse(node: exp.Expr | None, what: str, hint: str) -> TableException:
    return TableException(f"Unsupported SQL construct{at(node)}: {what} in MATCH_RECOGNIZE; {hint}")


def convert_match_recognize(rel: RelNode, scope: Scope, match: exp.MatchRecognize) -> tuple[RelNode, Scope]:
    if not is_insert_only(rel):
        raise TableException(
            f"Match Recognize doesn't support consuming update changes which is produced by node "
            f"{describe_updating_node(rel)}{at(match)}; expected an insert-only input"
        )
    partition = [scope.resolve(c).index for c in _columns(match.args.get("partition_by") or [], match)]
    rowtime = _rowtime(rel, scope, match)
    rows = match.args.get("rows")
    if rows is not None and str(rows.name).upper().startswith("ALL"):
        raise _refuse(match, "ALL ROWS PER MATCH", "expected ONE ROW PER MATCH (the default)")
    pattern_node = match.args.get("pattern")
    if pattern_node is None:
        raise ValidationException(f"SQL validation failed{at(match)}: expected PATTERN (...) in MATCH_RECOGNIZE")
    try:
        elements = parse_pattern(str(pattern_node.name))
    except PatternError as err:
        raise TableException(f"{err}{at(match)}") from None
    variables = {e.name: i for i, e in enumerate(elements)}
    compiler = _Compiler(rel.row_type, scope, variables, rowtime)
    conditions: list[MatchExpression | None] = [None] * len(elements)
    for definition in match.args.get("define") or []:
        name = definition.alias
        if name not in variables:
            raise ValidationException(
                f"SQL validation failed{at(definition)}: DEFINE {name} names no pattern variable; expected one of "
                f"{', '.join(variables)}"
            )
        conditions[variables[name]] = compiler.compile(definition.this, variables[name], condition=True)
    names = [rel.row_type.names[k] for k in partition]
    types = [rel.row_type.types[k] for k in partition]
    measures = []
    for measure in match.args.get("measures") or []:
        node = measure.this
        if not isinstance(node, exp.Alias):
            raise ValidationException(f"SQL validation failed{at(node)}: expected MEASURES expression AS name")
        expression, data_type = compiler.compile_typed(node.this, None)
        measures.append(expression)
        names.append(node.alias)
        types.append(data_type)
    spec = MatchSpec(
        tuple(elements),
        tuple(conditions),
        tuple(measures),
        _skip(match, variables),
        _within(match),
        tuple(partition),
        rowtime,
    )
    row_type = RowType(tuple(names), tuple(types))
    node_out = MatchRecognize(row_type, rel, tuple(partition), rowtime, spec)
    alias = match.args.get("alias")
    return node_out, Scope.of(row_type, alias.name if alias is not None else None)


def _columns(nodes: list[exp.Expr], match: exp.Expr) -> list[exp.Column]:
    for node in nodes:
        if not isinstance(node, exp.Column):
            raise _refuse(node, "PARTITION BY an expression", "expected PARTITION BY columns")
    return [n for n in nodes if isinstance(n, exp.Column)]


def _rowtime(rel: RelNode, scope: Scope, match: exp.MatchRecognize) -> int:
    order = match.args.get("order")
    keys = order.expressions if order is not None else []
    first = keys[0] if keys else None
    column = first.this if isinstance(first, exp.Ordered) else None
    index = scope.resolve(column).index if isinstance(column, exp.Column) else None
    time_kind = getattr(rel.row_type.types[index], "kind", None) if index is not None else None
    if (
        index is None
        or time_kind is not TimestampKind.ROWTIME
        or (isinstance(first, exp.Ordered) and first.args.get("desc"))
    ):
        raise TableException(
            f"You must specify either rowtime or proctime for order by as the first one{at(first or match)}; "
            "expected ORDER BY a rowtime column ascending (processing time is not supported here)"
        )
    if len(keys) > 1:
        raise _refuse(keys[1], "ORDER BY more than the rowtime", "expected ORDER BY rowtime")
    return index


def _skip(match: exp.MatchRecognize, variables: dict[str, int]) -> AfterMatchSkip:
    after = match.args.get("after")
    text = str(after.name).upper() if after is not None else "TO NEXT ROW"
    if text.endswith("PAST LAST ROW"):
        return AfterMatchSkip("PAST_LAST_ROW")
    if text.endswith("TO NEXT ROW"):
        return AfterMatchSkip("TO_NEXT_ROW")
    words = str(after.name).split() if after is not None else []
    name = words[-1]
    if name not in variables:
        raise ValidationException(
            f"SQL validation failed{at(match)}: AFTER MATCH SKIP {' '.join(words)} names no pattern variable; "
            f"expected one of {', '.join(variables)}"
        )
    return AfterMatchSkip("TO_FIRST" if words[-2].upper() == "FIRST" else "TO_LAST", variables[name])


def _within(match: exp.MatchRecognize) -> int | None:
    node = match.args.get("within")
    if node is None:
        return None
    value = ExpressionConverter(Scope([])).convert(node)
    if not isinstance(value, RexLiteral) or not isinstance(value.value, datetime.timedelta):
        raise _refuse(node, "WITHIN that is not an INTERVAL literal", "expected WITHIN INTERVAL '10' SECOND")
    return int(value.value / datetime.timedelta(milliseconds=1))


class _Compiler:
    """Rewrites an expression over pattern variables into one over slots and compiles it."""

    def __init__(self, row_type: RowType, scope: Scope, variables: dict[str, int], rowtime: int) -> None:
        self.row_type = row_type
        self.scope = scope
        self.variables = variables
        self.rowtime = rowtime

    def compile(self, node: exp.Expr, current: int | None, *, condition: bool = False) -> MatchExpression:
        return self.compile_typed(node, current, condition=condition)[0]

    def compile_typed(
        self, node: exp.Expr, current: int | None, *, condition: bool = False
    ) -> tuple[MatchExpression, DataType]:
        slots: list[Slot] = []
        types: list[DataType] = []

        def slot_of(found: Slot, data_type: DataType) -> exp.Expr:
            if found not in slots:
                slots.append(found)
                types.append(data_type)
            return exp.column(f"$slot{slots.index(found)}", quoted=True)

        rewritten = node.copy().transform(lambda n: self._rewrite(n, current, slot_of))
        slot_scope = Scope.of(RowType(tuple(f"$slot{i}" for i in range(len(slots))), tuple(types)))
        rex = ExpressionConverter(slot_scope).convert(rewritten)
        if condition and rex.type.type_root.name not in ("BOOLEAN", "NULL"):
            raise ValidationException(
                f"SQL validation failed{at(node)}: DEFINE expects a BOOLEAN condition; got {rex.type}"
            )
        return MatchExpression(slots, compile_projection([rex]), condition), rex.type

    def _rewrite(self, node: exp.Expr, current: int | None, slot_of: _SlotOf) -> exp.Expr:
        if isinstance(node, exp.Anonymous):
            return self._call(node, slot_of)
        if isinstance(node, exp.First | exp.Last):
            offset = node.args.get("expression")
            if offset is not None and not (isinstance(offset, exp.Literal) and str(offset.this).isdigit()):
                raise _refuse(offset, "a navigation offset that is not an integer literal", "expected LAST(A.col, 1)")
            variable, column = self._reference(node.this, current)
            found = Slot("NAV", variable, column, isinstance(node, exp.First), int(offset.this) if offset else 0)
            return slot_of(found, self.row_type.types[column].nullable())
        aggregate = _AGGREGATES.get(type(node))
        if aggregate is not None and isinstance(node, exp.AggFunc):
            return self._aggregate(node, aggregate, current, slot_of)
        if isinstance(node, exp.Column) and not isinstance(node.this, exp.Star):
            variable, column = self._reference(node, current)
            return slot_of(Slot("NAV", variable, column), self.row_type.types[column].nullable())
        return node

    def _call(self, node: exp.Anonymous, slot_of: _SlotOf) -> exp.Expr:
        name = str(node.this).upper()
        if name in ("PREV", "NEXT"):
            raise TableException(f"Flink does not support physical offsets within partition{at(node)}.")
        if name == "MATCH_ROWTIME" and not node.expressions:
            rowtime_type = self.row_type.types[self.rowtime]
            return slot_of(Slot("ROWTIME", None, self.rowtime), rowtime_type)
        if name in _UNSUPPORTED_CALLS or name == "MATCH_ROWTIME":
            raise _refuse(node, f"{name}()", "expected FIRST, LAST, aggregates over a variable or MATCH_ROWTIME()")
        return node

    def _aggregate(self, node: exp.AggFunc, name: str, current: int | None, slot_of: _SlotOf) -> exp.Expr:
        from strom.table.functions.aggregate_functions import resolve_aggregate

        argument = node.this
        if isinstance(argument, exp.Distinct):
            raise _refuse(node, f"{name}(DISTINCT …)", "expected an aggregate over a variable's column")
        if isinstance(argument, exp.Star):
            return slot_of(
                Slot("AGG", None, 0, name="COUNT"), resolve_aggregate("COUNT", [], retracting=False).result_type
            )
        variable, column = self._reference(argument, current)
        arg_type = self.row_type.types[column]
        result = resolve_aggregate(name, [arg_type], retracting=False).result_type
        return slot_of(Slot("AGG", variable, column, name=name, arg_type=arg_type), result)

    def _reference(self, node: exp.Expr, current: int | None) -> tuple[int | None, int]:
        """``A.col`` → (A, col); ``col`` → (the variable being defined, col), in MEASURES (all rows, col)."""
        if not isinstance(node, exp.Column):
            raise _refuse(node, "a navigation over an expression", "expected FIRST/LAST(A.column) or A.column")
        qualifier = node.table
        if qualifier and qualifier not in self.variables:
            raise ValidationException(
                f"SQL validation failed{at(node)}: '{qualifier}' is no pattern variable; expected one of "
                f"{', '.join(self.variables)}"
            )
        column = self.row_type.index_of(node.name)
        if column is None:
            raise ValidationException(
                f"SQL validation failed{at(node)}: Column '{node.name}' not found in the input of MATCH_RECOGNIZE; "
                f"expected one of {', '.join(self.row_type.names)}"
            )
        return (self.variables[qualifier] if qualifier else current), column
