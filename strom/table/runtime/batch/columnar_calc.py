"""A columnar ``Calc`` (Flink's ``BatchExecCalc`` over ``ColumnarRowData``): the projection and the filter of a
Calc evaluated column-wise over an Arrow batch with ``pyarrow.compute`` — input columns, literals, ``+ - *``
(wrapping as Java's), comparisons, ``AND``/``OR``/``NOT`` (three-valued), ``IS [NOT] NULL`` and integer/DOUBLE
``CAST`` s. ``columnar(node)`` says whether a node is one of these; the planner keeps the row path otherwise.

>>> import pyarrow as pa
>>> from strom.table.planner.rex import RexInputRef, RexSpecial
>>> from strom.table.types import DataTypes
>>> not_null = RexSpecial("IS NOT NULL", (RexInputRef(0, DataTypes.INT()),), DataTypes.BOOLEAN())
>>> calc = ColumnarCalc((RexInputRef(1, DataTypes.STRING()),), not_null)
>>> calc(pa.record_batch({"f0": pa.array([1, None], pa.int32()), "f1": ["a", "b"]})).to_pylist()
[{'f0': 'a'}]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from strom.table.connectors.parquet_format import arrow_type
from strom.table.planner.rex import RexInputRef, RexLiteral, RexNode, RexSpecial

__all__ = ["ColumnarCalc", "columnar", "columnar_type"]

_INTEGERS = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT")
_NUMBERS = (*_INTEGERS, "DOUBLE")
#: the SQL types whose values the columnar path carries exactly as the row path does (not TIMESTAMP: a file's unit
#: may be finer than the column's precision, which the row path keeps and a cast would refuse)
_TYPES = (*_NUMBERS, "BOOLEAN", "DECIMAL", "CHAR", "VARCHAR", "DATE")
_ARITHMETIC: dict[str, Callable[..., Any]] = {"+": pc.add, "-": pc.subtract, "*": pc.multiply}
_COMPARISON: dict[str, Callable[..., Any]] = {
    "=": pc.equal,
    "<>": pc.not_equal,
    "<": pc.less,
    "<=": pc.less_equal,
    ">": pc.greater,
    ">=": pc.greater_equal,
}
_SPECIAL: dict[str, Callable[..., Any]] = {
    "AND": pc.and_kleene,
    "OR": pc.or_kleene,
    "NOT": pc.invert,
    "IS NULL": pc.is_null,
    "IS NOT NULL": pc.is_valid,
}


def _root(node: RexNode) -> str:
    return str(node.type.type_root.name)


def columnar_type(data_type: Any) -> bool:
    """Whether a column of this SQL type goes through the Arrow operators."""
    return str(data_type.type_root.name) in _TYPES


def columnar(node: RexNode) -> bool:
    """Whether ``node`` evaluates column-wise here with the row path's result."""
    if isinstance(node, RexInputRef):
        return columnar_type(node.type)
    if isinstance(node, RexLiteral):
        return _root(node) in (*_NUMBERS, "BOOLEAN", "CHAR", "VARCHAR")
    operands = node.operands
    if isinstance(node, RexSpecial):
        return node.kind in _SPECIAL and all(columnar(o) for o in operands)
    if node.name in _ARITHMETIC:
        return _root(node) in _NUMBERS and all(_root(o) in _NUMBERS and columnar(o) for o in operands)
    if node.name in _COMPARISON:
        roots = {_root(o) for o in operands}
        same = len(roots) == 1 and "DECIMAL" not in roots
        return (same or roots <= set(_NUMBERS)) and all(columnar(o) for o in operands)
    if node.name == "CAST":
        return _root(node) in _NUMBERS and _root(operands[0]) in _INTEGERS and columnar(operands[0])
    return False


def _evaluate(node: RexNode, batch: pa.RecordBatch) -> Any:
    if isinstance(node, RexInputRef):
        return batch.column(node.index)
    if isinstance(node, RexLiteral):
        return pa.scalar(node.value, arrow_type(node.type))
    args = [_evaluate(o, batch) for o in node.operands]
    if isinstance(node, RexSpecial):
        return _SPECIAL[node.kind](*args)
    if node.name == "CAST":
        return pc.cast(args[0], arrow_type(node.type), safe=False)
    function = _ARITHMETIC.get(node.name) or _COMPARISON[node.name]
    result = function(*args)
    target = arrow_type(node.type)
    return result if node.name in _COMPARISON or result.type == target else pc.cast(result, target, safe=False)


def _column(value: Any, rows: int) -> pa.Array:
    if isinstance(value, pa.Scalar):
        return pa.array([value.as_py()] * rows, value.type)
    return value


class ColumnarCalc:
    """A Calc over one Arrow batch: rows where ``condition`` is TRUE, columns ``f0 … fN`` of ``projection``
    (``None``: the input's columns)."""

    def __init__(self, projection: tuple[RexNode, ...] | None, condition: RexNode | None) -> None:
        self.projection = projection
        self.condition = condition

    def __call__(self, record: Any) -> pa.RecordBatch:
        batch: pa.RecordBatch = record[1] if isinstance(record, tuple) else record
        if self.condition is not None:
            mask = _column(_evaluate(self.condition, batch), batch.num_rows)
            batch = batch.filter(mask, null_selection_behavior="drop")
        if self.projection is None:
            return batch
        columns = [_column(_evaluate(p, batch), batch.num_rows) for p in self.projection]
        return pa.RecordBatch.from_arrays(columns, names=[f"f{i}" for i in range(len(columns))])
