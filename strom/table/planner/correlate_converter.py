"""``LATERAL TABLE(udtf(args))`` joined to the rows before it (Calcite's ``LogicalCorrelate`` over a table function
scan, Flink's ``StreamPhysicalCorrelate``): ``FROM t, LATERAL TABLE(f(x)) AS s(a, b)``, ``JOIN … ON TRUE`` and
``LEFT JOIN … ON TRUE`` (a row without results kept once, the function's columns NULL). Insert-only over an
insert-only input; each output row keeps its input row's kind.
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from strom.table.errors import TableException
from strom.table.planner.expression_converter import ExpressionConverter
from strom.table.planner.logical import Correlate, RelNode, RowType
from strom.table.planner.rex import RexInputRef
from strom.table.planner.scope import Scope
from strom.table.sql.parser import at

__all__ = ["LeftLateralRows", "convert_lateral"]


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
    on = join.args.get("on")
    if on is not None and not (isinstance(on, exp.Boolean) and on.this is True):
        raise TableException(f"Unsupported SQL construct{at(on)}: a LATERAL TABLE join condition; expected ON TRUE")
    side = str(join.args.get("side") or "").upper()
    if side not in ("", "LEFT"):
        raise TableException(f"Unsupported SQL construct{at(join)}: {side} JOIN LATERAL; expected JOIN or LEFT JOIN")
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
