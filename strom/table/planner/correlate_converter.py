"""``UNNEST(collection)`` and ``LATERAL TABLE(udtf(args))`` joined to the rows before them (Calcite's
``LogicalCorrelate``, Flink's ``StreamPhysicalCorrelate``): ``FROM t, LATERAL TABLE(f(x, 'lit')) AS s(a, b)``
(arguments computed before the call), ``CROSS JOIN UNNEST(c) AS s(x)``, ``JOIN … ON TRUE`` and ``LEFT JOIN … ON
TRUE`` (a row without results kept once, the new columns NULL). Insert-only over an insert-only input; each output
row keeps its input row's kind.
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from strom.table.errors import TableException
from strom.table.logical_constructed_types import ArrayType, MapType
from strom.table.planner.expression_converter import ExpressionConverter
from strom.table.planner.logical import Calc, Correlate, RelNode, RowType
from strom.table.planner.rex import RexInputRef, RexNode
from strom.table.planner.scope import Scope
from strom.table.sql.parser import at
from strom.table.types import DataType

__all__ = ["LeftLateralRows", "UnnestRows", "convert_lateral", "convert_unnest"]


class LeftLateralRows:
    """``LEFT JOIN LATERAL``: the joined rows, or the input row padded with ``width`` NULLs when there are none."""

    def __init__(self, rows: Any, width: int) -> None:
        self.rows = rows
        self.width = width

    def __call__(self, row: Any) -> list[tuple[Any, ...]]:
        out: list[tuple[Any, ...]] = self.rows(row)
        return out or [(*row._values, *([None] * self.width))]


def convert_lateral(rel: RelNode, scope: Scope, join: exp.Join) -> tuple[RelNode, Scope]:
    from strom.table.udf import LateralRows, lookup

    lateral = join.this
    call = lateral.this
    if isinstance(call, exp.Anonymous) and str(call.this).upper() == "TABLE" and call.expressions:
        call = call.expressions[0]
    if isinstance(call, exp.Anonymous):
        name, operands = str(call.this), list(call.expressions)
    elif isinstance(call, exp.Func):  # a udtf named like a built-in sqlglot knows (split, …)
        name = call.sql_name()
        operands = [v for key in call.arg_types for v in _as_list(call.args.get(key))]
    else:
        name, operands = "", []
    function = lookup(name) if name else None
    if function is None or not function.table_function:
        raise TableException(
            f"Unsupported SQL construct{at(lateral)}: LATERAL {lateral.this.sql()[:60]}; "
            "expected LATERAL TABLE(f(columns)) of a registered @udtf"
        )
    side = _check_join(join)
    source, columns = _with_arguments(rel, [ExpressionConverter(scope).convert(a) for a in operands])
    alias = lateral.args.get("alias")
    names = [c.name for c in alias.columns] if isinstance(alias, exp.TableAlias) and alias.columns else []
    types = tuple(function.result_types)
    names = names or [f"f{i}" for i in range(len(types))]
    if len(names) != len(types):
        raise TableException(
            f"SQL validation failed{at(lateral)}: expected {len(types)} column aliases; got {len(names)}"
        )
    rows: Any = LateralRows(function.func, source.row_type.names, columns)
    if side == "LEFT":
        types = tuple(t.nullable() for t in types)
        rows = LeftLateralRows(rows, len(types))
    function_type = RowType(tuple(names), types)
    row_type = RowType((*source.row_type.names, *names), (*source.row_type.types, *types))
    correlated: RelNode = Correlate(row_type, source, rows)
    if source is not rel:  # the computed arguments projected away again
        kept = [*range(len(rel.row_type)), *range(len(source.row_type), len(row_type))]
        projection = tuple(RexInputRef(i, row_type.types[i]) for i in kept)
        out_type = RowType(tuple(row_type.names[i] for i in kept), tuple(row_type.types[i] for i in kept))
        correlated = Calc(out_type, correlated, projection, None)
    qualifier = alias.name if isinstance(alias, exp.TableAlias) and alias.name else None
    return correlated, scope.join(Scope.of(function_type, qualifier))


def _as_list(value: Any) -> list[exp.Expr]:
    if value is None:
        return []
    values = value if isinstance(value, list) else [value]
    return [v for v in values if isinstance(v, exp.Expr)]


def _with_arguments(rel: RelNode, args: list[RexNode]) -> tuple[RelNode, tuple[int, ...]]:
    """The input with the arguments that are not columns computed as extra columns (``$arg<i>``), and the column
    of each argument."""
    width = len(rel.row_type)
    computed = [a for a in args if not isinstance(a, RexInputRef)]
    columns: list[int] = []
    extra = width
    for a in args:
        if isinstance(a, RexInputRef):
            columns.append(a.index)
        else:
            columns.append(extra)
            extra += 1
    if not computed:
        return rel, tuple(columns)
    projection = (*(RexInputRef(i, t) for i, t in enumerate(rel.row_type.types)), *computed)
    names = (*rel.row_type.names, *(f"$arg{i}" for i in range(len(computed))))
    return Calc(RowType(names, tuple(p.type for p in projection)), rel, projection, None), tuple(columns)


class UnnestRows:
    """``UNNEST(collection)``: the input row followed by each element of the array / multiset at ``index`` (or each
    key and value of the map); none for an empty or NULL collection."""

    def __init__(self, index: int, kind: str) -> None:
        self.index = index
        self.kind = kind  # ARRAY, MULTISET (a dict: element → count) or MAP

    def __call__(self, row: Any) -> list[tuple[Any, ...]]:
        own = tuple(row._values)
        collection = own[self.index]
        if not collection:
            return []
        if self.kind == "MAP":
            return [(*own, key, value) for key, value in collection.items()]
        if self.kind == "MULTISET":
            return [(*own, element) for element, count in collection.items() for _ in range(count)]
        return [(*own, element) for element in collection]


def convert_unnest(rel: RelNode, scope: Scope, join: exp.Join) -> tuple[RelNode, Scope]:
    """``CROSS JOIN UNNEST(c) AS t(x)`` / ``, UNNEST(c)`` / ``LEFT JOIN UNNEST(c) AS t(x) ON TRUE`` (Flink's
    ``LogicalUnnestRule``: a Correlate over the collection column)."""
    unnest = join.this
    side = _check_join(join)
    if len(unnest.expressions) != 1 or unnest.args.get("offset"):
        raise TableException(f"Unsupported SQL construct{at(unnest)}: UNNEST expects one collection, no ORDINALITY")
    ref = ExpressionConverter(scope).convert(unnest.expressions[0])
    collection = ref.type
    if not isinstance(ref, RexInputRef) or not isinstance(collection, ArrayType | MapType):
        raise TableException(
            f"Unsupported SQL construct{at(unnest)}: UNNEST({unnest.expressions[0].sql()}); "
            f"expected a column of an ARRAY, MULTISET or MAP type; got {collection}"
        )
    is_map = isinstance(collection, MapType)
    types: tuple[DataType, ...] = (
        (collection.key_type, collection.value_type) if isinstance(collection, MapType) else (collection.element_type,)
    )
    alias = unnest.args.get("alias")
    names = [c.name for c in alias.columns] if isinstance(alias, exp.TableAlias) and alias.columns else []
    names = names or (["f0", "f1"] if is_map else ["f0"])
    if len(names) != len(types):
        raise TableException(
            f"SQL validation failed{at(unnest)}: expected {len(types)} column aliases; got {len(names)}"
        )
    rows: Any = UnnestRows(ref.index, collection.type_root.name)
    if side == "LEFT":
        types = tuple(t.nullable() for t in types)
        rows = LeftLateralRows(rows, len(types))
    row_type = RowType((*rel.row_type.names, *names), (*rel.row_type.types, *types))
    qualifier = alias.name if isinstance(alias, exp.TableAlias) and alias.name else None
    return Correlate(row_type, rel, rows), scope.join(Scope.of(RowType(tuple(names), types), qualifier))


def _check_join(join: exp.Join) -> str:
    """The join's side ("" or "LEFT"); its condition must be absent or ``ON TRUE``."""
    on = join.args.get("on")
    if on is not None and not (isinstance(on, exp.Boolean) and on.this is True):
        raise TableException(f"Unsupported SQL construct{at(on)}: a correlated join condition; expected ON TRUE")
    side = str(join.args.get("side") or "").upper()
    if side not in ("", "LEFT"):
        raise TableException(f"Unsupported SQL construct{at(join)}: {side} JOIN of a correlate; expected JOIN or LEFT")
    return side
