"""Flink's ``PushWatermarkIntoTableSourceScanAcrossCalcRule`` with ``FlinkCalcMergeRule`` and
``PushProjectIntoTableSourceScanRule`` for the ``datagen`` scan: ``Calc → WatermarkAssigner → [Calc of computed
columns] → TableScan(datagen)`` becomes one source whose reader runs one generated function per batch
(:mod:`strom.table.runtime.calc_scan`).

The function evaluates, per index, the physical fields, only the computed columns the query or the rowtime needs
(each once, into a local, in the table's order: what the Calcs evaluated, as Flink's merged ``RexProgram`` does),
the rowtime in epoch milliseconds (``TO_TIMESTAMP_LTZ(n, 3)`` of an integer is ``n`` itself, no ``datetime`` in
between, when the query does not read the column), then the query's condition and projection. Applies when the
watermark is ``rowtime - INTERVAL …`` (or the rowtime) and no pandas function is in either Calc; otherwise the
translator builds the operators one by one.
"""

from __future__ import annotations

import datetime
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from strom.api._time import LONG_MIN
from strom.api.row import RowKind
from strom.table.connectors.abilities import SupportsWatermarkPushDown
from strom.table.connectors.datagen import DataGenTableSource, _RowGenerator
from strom.table.planner.codegen import _Source, rowtime_offset_millis
from strom.table.planner.logical import Calc, TableScan, WatermarkAssigner
from strom.table.planner.rex import RexCall, RexInputRef, RexLiteral, RexNode, input_refs
from strom.table.runtime.calc_scan import CalcScanBatch, CalcScanSource, CalcWatermarkOperator, ScanWatermarkStrategy
from strom.table.runtime.watermark_assigner import to_epoch_millis

if TYPE_CHECKING:
    from strom.api.datastream import DataStream
    from strom.table.planner.translator import Translator

__all__ = ["fuse_calc_into_scan"]

_INTEGERS = {"TINYINT", "SMALLINT", "INTEGER", "BIGINT"}
#: epoch milliseconds of 0001-01-01 and 10000-01-01: the range of Python's ``datetime``
_MIN_MILLIS, _END_MILLIS = -62_135_596_800_000, 253_402_300_800_000


class _Locals(_Source):
    """The generated expressions over named locals (``refs[i]`` is input field ``i``) instead of ``v[i]``."""

    def __init__(self) -> None:
        super().__init__()
        self.refs: list[str] = []

    def expr(self, node: RexNode) -> str:
        if isinstance(node, RexInputRef):
            return self.refs[node.index]
        return super().expr(node)


def _millis_operand(node: RexNode) -> RexNode | None:
    """``n`` when ``node`` is ``TO_TIMESTAMP_LTZ(n, 3)`` (or without precision) of an integer ``n``."""
    if not isinstance(node, RexCall) or node.name != "TO_TIMESTAMP_LTZ" or not 1 <= len(node.operands) <= 2:
        return None
    value, *precision = node.operands
    if value.type.type_root.name not in _INTEGERS:
        return None
    if precision and not (isinstance(precision[0], RexLiteral) and precision[0].value == 3):
        return None
    return value


def _match(rel: Calc) -> tuple[WatermarkAssigner, Calc | None, TableScan, int] | None:
    wa = rel.input
    if not isinstance(wa, WatermarkAssigner):
        return None
    offset = rowtime_offset_millis(wa.expression, wa.rowtime_index)
    below = wa.input
    computed = below if isinstance(below, Calc) else None
    scan = computed.input if computed is not None else below
    if offset is None or not isinstance(scan, TableScan) or isinstance(scan.source, SupportsWatermarkPushDown):
        return None  # a source that makes the watermark itself: push_watermark_into_scan
    if computed is not None and (computed.condition is not None or computed.projection is None):
        return None
    if type(scan.source) is DataGenTableSource and len(scan.source.generators) != len(scan.row_type):
        return None
    if _per_batch_calls(rel.projection, rel.condition, len(wa.row_type)):
        return None  # pandas / async calls: their own per-batch operator (translator._calc)
    if computed is not None and _per_batch_calls(computed.projection, None, len(scan.row_type)):
        return None
    return wa, computed, scan, offset


def _per_batch_calls(projection: Any, condition: Any, arity: int) -> bool:
    from strom.table.runtime.async_calc import split_async_calc
    from strom.table.runtime.pandas_calc import split_pandas_calc

    split = split_pandas_calc(projection, condition, arity) or split_async_calc(projection, condition, arity)
    return split is not None


def _row_lines(src: _Locals, generator: _RowGenerator, arity: int) -> list[str]:
    """The physical fields of index ``i`` as locals ``p0``…: inline for numeric sequences, else the generator's."""
    src.refs = [f"p{k}" for k in range(arity)]
    if generator.numeric is not None:
        return [f"        p{k} = i + {start}" for k, start in enumerate(generator.numeric)]
    gen = src.constant(generator)
    return [f"        v = {gen}(i)._values"] + [f"        p{k} = v[{k}]" for k in range(arity)]


def _computed_lines(
    src: _Locals, columns: Sequence[RexNode], needed: set[int], rowtime: int, fast: bool, null: str
) -> tuple[list[str], list[str]]:
    """The needed computed columns as locals ``c0``…, and the lines that set ``t`` (the rowtime, epoch ms)."""
    lines, names = [], [f"c{k}" for k in range(len(columns))]
    for k, column in enumerate(columns):
        if k in needed and not (fast and k == rowtime):
            lines.append(f"        c{k} = {src.expr(column)}")
    if fast:
        value = _millis_operand(columns[rowtime])
        assert value is not None
        epoch = src.constant(datetime.datetime(1970, 1, 1))
        unit = src.constant(datetime.timedelta(milliseconds=1))
        lines.append(f"        x = {src.expr(value)}")
        millis = f"x if {_MIN_MILLIS} <= x < {_END_MILLIS} else _millis({epoch} + {unit} * x)"
        rowtime_lines = _stamp_lines("x", millis, null)
    else:
        rowtime_lines = _rowtime_lines(names[rowtime], null)
    src.refs = names
    return lines, rowtime_lines


def _rowtime_lines(name: str, null: str) -> list[str]:
    millis = f"({name} - _EPOCH) // _MS if type({name}) is _DT and {name}.tzinfo is None else _millis({name})"
    return _stamp_lines(name, millis, null)


def _stamp_lines(name: str, millis: str, null: str) -> list[str]:
    """``t``: the rowtime ``name`` in epoch ms (``millis``), ``null`` when NULL; ``largest``: the largest non-NULL
    rowtime (a NULL rowtime's row has no watermark expression value, as in the watermark assigner)."""
    return [
        f"        if {name} is None:\n            t = {null}",
        f"        else:\n            t = {millis}\n            if t > largest:\n                largest = t",
    ]


def generate_produce(
    generator: _RowGenerator | None,
    arity: int,
    computed: Sequence[RexNode] | None,
    rowtime: int,
    projection: Sequence[RexNode] | None,
    condition: RexNode | None,
) -> Any:
    """The source of ``produce(lo, end)`` compiled: the Calc's rows of indices ``[lo, end)`` (a CalcScanBatch);
    without ``generator``, of ``calc_batch(batch, stamps)``: the Calc's rows of the scan's rows ``batch`` (a NULL
    rowtime takes the row's own timestamp from ``stamps``, as the watermark assigner's rowtime assigner)."""
    src = _Locals()
    src.namespace.update(
        _LONG_MIN=LONG_MIN,
        _DT=datetime.datetime,
        _EPOCH=datetime.datetime(1970, 1, 1),
        _MS=datetime.timedelta(milliseconds=1),
        _millis=to_epoch_millis,
        _Batch=CalcScanBatch,
        _INSERT=RowKind.INSERT,
    )
    if generator is not None:
        lines, null = _row_lines(src, generator, arity), "_LONG_MIN"
        head = "def produce(lo, end):"
        loop = "for i in range(lo, end):"
    else:
        src.refs = [f"v[{k}]" for k in range(arity)]
        lines, null = ["        v = row._values"], "(_LONG_MIN if r is None else r)"
        head = "def calc_batch(batch, stamps):"
        loop = "for row, r in zip(batch, stamps):"
    width = len(computed) if computed is not None else arity
    top = [*(projection or ()), *(() if condition is None else (condition,))]
    used = input_refs(top) | (set(range(width)) if projection is None else set())
    if computed is not None:
        fast = rowtime not in used and _millis_operand(computed[rowtime]) is not None
        column_lines, rowtime_lines = _computed_lines(src, computed, used | {rowtime}, rowtime, fast, null)
        lines += column_lines
    else:
        rowtime_lines = _rowtime_lines(src.refs[rowtime], null)
    lines += rowtime_lines
    if condition is not None:
        lines.append(f"        if {src.expr(condition)} is not True:\n            continue")
    values = ", ".join(src.expr(p) for p in projection) if projection is not None else ", ".join(src.refs)
    lines.append(f"        o = _new(_Row)\n        o._values = [{values}]\n        o._row_kind = _INSERT")
    lines.append("        append(o)\n        stamp(t)")
    body = "\n".join(lines)
    code = (
        f"{head}\n    out = []\n    ts = []\n    append, stamp = out.append, ts.append\n"
        f"    largest = _LONG_MIN\n    {loop}\n{body}\n    return _Batch(out, ts, largest)\n"
    )
    exec(compile(code, "<calc scan>", "exec"), src.namespace)
    produce = src.namespace[head[4 : head.index("(")]]
    produce.__doc__ = code  # the generated source, for debugging
    return produce


def fuse_calc_into_scan(translator: Translator, rel: Calc) -> DataStream[Any] | None:
    """The stream of ``rel`` with everything below it down to the scan in one step: a ``datagen`` source running
    it, or one operator after any other scan; None when the plan is not ``Calc → WatermarkAssigner → [Calc] →
    TableScan`` with an offset watermark (or the source makes watermarks itself)."""
    matched = _match(rel)
    if matched is None:
        return None
    wa, computed, scan, offset = matched
    columns = computed.projection if computed is not None else None
    names = ", ".join(rel.row_type.names)
    source = scan.source
    if type(source) is not DataGenTableSource:
        arity, rowtime = len(scan.row_type), wa.rowtime_index
        calc_batch = generate_produce(None, arity, columns, rowtime, rel.projection, rel.condition)
        operator = CalcWatermarkOperator(ScanWatermarkStrategy(offset), calc_batch)
        return translator.translate(scan)._one_input(f"Calc(select=[{names}]), WatermarkAssigner", operator)
    generator = _RowGenerator(source.generators, 0)
    produce = generate_produce(generator, len(scan.row_type), columns, wa.rowtime_index, rel.projection, rel.condition)
    count = source.rows if source.rows is not None else sys.maxsize
    stream: DataStream[Any] = translator.env.from_source(
        CalcScanSource(generator, produce, count, source.rows_per_second),
        ScanWatermarkStrategy(offset),
        f"datagen: {source.name} -> Calc(select=[{names}])",
    )
    return stream
