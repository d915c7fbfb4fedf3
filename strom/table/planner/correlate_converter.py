"""``UNNEST(collection)`` and ``LATERAL TABLE(udtf(args))`` joined to the rows before them (Calcite's
``LogicalCorrelate``, Flink's ``StreamPhysicalCorrelate``): ``FROM t, LATERAL TABLE(f(x)) AS s(a, b)``,
``CROSS JOIN UNNEST(c) AS s(x)``, ``JOIN … ON TRUE`` and ``LEFT JOIN … ON TRUE`` (a row without results kept once,
the new columns NULL). Insert-only over an insert-only input; each output row keeps its input row's kind.
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from strom.table.errors import TableException
from strom.table.logical_constructed_types import ArrayType, MapType
from strom.table.planner.expression_converter import ExpressionConverter
from strom.table.planner.logical import Correlate, RelNode, RowType
from strom.table.planner.rex import RexInputRef
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
    function = lookup(str(call.this)) if isinstance(call, exp.Anonymous) else None
    if function is None or not function.table_function:
        raise TableException(
            f"Unsupported SQL construct{at(lateral)}: LATERAL {lateral.this.sql()[:60]}; "
            "expected LATERAL TABLE(f(columns)) of a registered @udtf"
        )
    side = _check_join(join)
    converter = ExpressionConverter(scope)
    columns = []
    for arg in call.expressions:
        ref = converter.convert(arg)
        if not isinstance(ref, RexInputRef):
            raise TableException(f"Unsupported SQL construct{at(arg)}: a table function argument; expected a column")
        columns.append(ref.index)
    alias = lateral.args.get("alias")
    names = [c.name for c in alias.columns] if isinstance(alias, exp.TableAlias) and alias.columns else []
    types = tuple(function.result_types)
    names = names or [f"f{i}" for i in range(len(types))]
    if len(names) != len(types):
        raise TableException(
            f"SQL validation failed{at(lateral)}: expected {len(types)} column aliases; got {len(names)}"
        )
    rows: Any = LateralRows(function.func, rel.row_type.names, tuple(columns))
    if side == "LEFT":
        types = tuple(t.nullable() for t in types)
        rows = LeftLateralRows(rows, len(types))
    function_type = RowType(tuple(names), types)
    row_type = RowType((*rel.row_type.names, *names), (*rel.row_type.types, *types))
    qualifier = alias.name if isinstance(alias, exp.TableAlias) and alias.name else None
    return Correlate(row_type, rel, rows), scope.join(Scope.of(function_type, qualifier))


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
