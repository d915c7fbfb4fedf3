"""An INSERT's query conformed to its sink (Flink's ``DynamicSinkUtils.validateSchemaAndApplyImplicitCast``):
the same number of columns, each castable to the sink column's type."""

from __future__ import annotations

from strom.table.errors import ValidationException
from strom.table.functions import cast_function
from strom.table.planner.logical import Calc, RelNode, RowType
from strom.table.planner.rex import RexCall, RexInputRef, RexNode

__all__ = ["conform_to_sink"]


def conform_to_sink(plan: RelNode, sink_type: RowType, sink_name: str) -> RelNode:
    query = plan.row_type
    if len(query) != len(sink_type):
        raise ValidationException(
            f"Column types of query result and sink for '{sink_name}' do not match. "
            f"Cause: Different number of columns.\n\nQuery schema: [{query.describe()}]\n"
            f"Sink schema:  [{sink_type.describe()}]"
        )
    projection: list[RexNode] = []
    changed = False
    for i, (have, want) in enumerate(zip(query.types, sink_type.types, strict=True)):
        ref = RexInputRef(i, have, query.names[i])
        if have.copy(nullable=True) == want.copy(nullable=True) or have.type_root == want.type_root:
            projection.append(ref)
            continue
        try:
            fn = cast_function(have, want)
        except ValidationException as err:
            raise ValidationException(
                f"Column types of query result and sink for '{sink_name}' do not match. Cause: Incompatible types "
                f"for sink column '{sink_type.names[i]}' at position {i}: {err}\n\nQuery schema: [{query.describe()}]\n"
                f"Sink schema:  [{sink_type.describe()}]"
            ) from None
        projection.append(RexCall("CAST", fn, (ref,), want))
        changed = True
    if not changed:
        return plan
    return Calc(RowType(query.names, sink_type.types), plan, tuple(projection), None)
