"""Flink's code generation for ``Calc`` (``CalcCodeGenerator``): a projection and a filter compiled into one closure.

The planner's row expressions become the source of one Python function over the input row, compiled once per
operator: ``calc(row)`` reads ``row._values`` once, evaluates the condition and the projections inline (bound
functions are called directly, literals are constants), and returns the output row with the input's ``RowKind`` —
one Python call per record, not one per expression node. ``AND``/``OR`` short-circuit with SQL's three-valued logic
and ``CASE`` evaluates only the branch it takes, as Flink's generated Java does.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Sequence
from typing import Any

from strom.api.row import Row, _create_row
from strom.table.planner.rex import RexCall, RexInputRef, RexLiteral, RexNode, RexSpecial

__all__ = ["compile_calc", "compile_condition", "compile_projection", "rowtime_offset_millis"]

_SAFE_LITERALS = (int, float, str, bool, type(None))
_COMPARISONS = {"=": "==", "<>": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}
_INLINE = {**_COMPARISONS, "+": "+", "-": "-", "*": "*", "/": "/", "%": "%"}
_DIVISION = {"/", "%"}
_INTEGER_BITS = {"TINYINT": 8, "SMALLINT": 16, "INTEGER": 32, "BIGINT": 64}
_NUMBERS = {*_INTEGER_BITS, "FLOAT", "DOUBLE", "DECIMAL"}
_TEXT = {"CHAR", "VARCHAR"}
_ORDERED = {
    "BOOLEAN",
    "DATE",
    "TIME_WITHOUT_TIME_ZONE",
    "TIMESTAMP_WITHOUT_TIME_ZONE",
    "TIMESTAMP_WITH_LOCAL_TIME_ZONE",
}


class _Source:
    def __init__(self) -> None:
        self.namespace: dict[str, Any] = {"_create_row": _create_row, "_new": object.__new__, "_Row": Row}
        self.temps = 0

    def constant(self, value: Any) -> str:
        name = f"_c{len(self.namespace)}"
        self.namespace[name] = value
        return name

    def temp(self) -> str:
        self.temps += 1
        return f"_t{self.temps}"

    def expr(self, node: RexNode) -> str:
        if isinstance(node, RexInputRef):
            return f"v[{node.index}]"
        if isinstance(node, RexLiteral):
            if isinstance(node.value, _SAFE_LITERALS) and not isinstance(node.value, float):
                return repr(node.value)
            return self.constant(node.value)
        if isinstance(node, RexCall):
            inline = self.inline(node) if node.name != "TO_TIMESTAMP_LTZ" else self.to_timestamp_ltz(node)
            if inline is not None:
                return inline
            fn = self.constant(node.function)
            return f"{fn}({', '.join(self.expr(o) for o in node.operands)})"
        return self.special(node)

    def inline(self, node: RexCall) -> str | None:
        """Comparisons of one type family, integer ``+ - *`` (with Java's wrap-around) and integer ``/ %`` by a
        positive literal (Java's truncation toward zero) as Python operators: the same results as the bound
        functions without three or four Python calls per operator."""
        if len(node.operands) != 2 or node.name not in _INLINE:
            return None
        a, b = node.operands
        roots = {a.type.type_root.name, b.type.type_root.name}
        if node.name in _COMPARISONS:
            if not (roots <= _NUMBERS or roots <= _TEXT or (len(roots) == 1 and roots <= _ORDERED)):
                return None
            template = f"{{}} {_INLINE[node.name]} {{}}"
        elif node.name in _DIVISION:
            divisor = b.value if isinstance(b, RexLiteral) else None
            if type(divisor) is not int or divisor <= 0 or not roots <= set(_INTEGER_BITS):
                return None  # a zero divisor raises in the bound function; MIN / -1 wraps there
            if node.type.type_root.name not in _INTEGER_BITS:
                return None
            return self.divide(node.name, a, divisor)
        else:
            bits = _INTEGER_BITS.get(node.type.type_root.name)
            if bits is None or not roots <= set(_INTEGER_BITS):
                return None
            half, w = 1 << (bits - 1), self.temp()  # a range check (two comparisons) before the wrap-around
            wrap = f"(({w} + {half}) & {(1 << bits) - 1}) - {half}"
            template = f"({w} if -{half} <= ({w} := {{}} {node.name} {{}}) < {half} else {wrap})"
        left, right = self.expr(a), self.expr(b)
        checks, args = [], []
        for operand, text in ((a, left), (b, right)):
            if operand.type.is_nullable and not (isinstance(operand, RexLiteral) and operand.value is not None):
                t = self.temp()
                checks.append(f"({t} := {text}) is None")
                args.append(t)
            else:
                args.append(text)
        if not checks:
            return f"({template.format(*args)})"
        return f"(None if {' or '.join(checks)} else {template.format(*args)})"

    def to_timestamp_ltz(self, node: RexCall) -> str | None:
        """``TO_TIMESTAMP_LTZ(n[, 0 | 3])`` of an integer: the epoch plus ``n`` seconds or milliseconds (the bound
        function's arithmetic, without its two Python calls)."""
        value, *precision = node.operands
        if value.type.type_root.name not in _INTEGER_BITS or len(precision) > 1:
            return None
        digits = (
            precision[0].value if precision and isinstance(precision[0], RexLiteral) else 3 if not precision else None
        )
        if digits not in (0, 3):
            return None
        epoch = self.constant(datetime.datetime(1970, 1, 1))
        unit = self.constant(datetime.timedelta(seconds=1) if digits == 0 else datetime.timedelta(milliseconds=1))
        t = self.temp()
        return f"(None if ({t} := {self.expr(value)}) is None else {epoch} + {unit} * {t})"

    def divide(self, name: str, a: RexNode, divisor: int) -> str:
        """``a / d`` or ``a % d`` for an integer ``a`` and a positive literal ``d``: Java's truncating division (the
        remainder takes the dividend's sign); no overflow is possible, so no wrap-around."""
        op = "//" if name == "/" else "%"
        t = self.temp()
        value = f"({t} {op} {divisor} if {t} >= 0 else -(-{t} {op} {divisor}))"
        if not a.type.is_nullable:
            return f"(({t} := {self.expr(a)}), {value})[1]"
        return f"(None if ({t} := {self.expr(a)}) is None else {value})"

    def special(self, node: RexSpecial) -> str:
        ops = node.operands
        kind = node.kind
        if kind in ("AND", "OR"):
            return self.logic(kind, ops)
        if kind == "NOT":
            t = self.temp()
            return f"(None if ({t} := {self.expr(ops[0])}) is None else not {t})"
        if kind == "IS NULL":
            return f"({self.expr(ops[0])} is None)"
        if kind == "IS NOT NULL":
            return f"({self.expr(ops[0])} is not None)"
        if kind == "IS TRUE":
            return f"({self.expr(ops[0])} is True)"
        if kind == "IS FALSE":
            return f"({self.expr(ops[0])} is False)"
        if kind == "CASE":
            text = self.expr(ops[-1])
            for i in range(len(ops) - 3, -1, -2):
                text = f"({self.expr(ops[i + 1])} if {self.expr(ops[i])} is True else {text})"
            return text
        if kind == "COALESCE":
            text = "None"
            for op in reversed(ops):
                t = self.temp()
                text = f"({t} if ({t} := {self.expr(op)}) is not None else {text})"
            return text
        raise ValueError(f"expected a special form (AND, OR, NOT, CASE, COALESCE, IS NULL); got {kind}")

    def logic(self, kind: str, ops: Sequence[RexNode]) -> str:
        # AND: any FALSE → FALSE; else any NULL → NULL; else TRUE (OR dually), left to right, short-circuit
        stop, other = ("False", "True") if kind == "AND" else ("True", "False")
        temps = [self.temp() for _ in ops]
        text = f"(None if ({' or '.join(f'{t} is None' for t in temps)}) else {other})"
        for t, op in reversed(list(zip(temps, ops, strict=True))):
            text = f"({stop} if ({t} := {self.expr(op)}) is {stop} else {text})"
        return text


def _build(name: str, body: str, source: _Source) -> Callable[..., Any]:
    code = f"def {name}(row):\n    v = row._values\n{body}"
    exec(compile(code, f"<calc {name}>", "exec"), source.namespace)
    fn: Callable[..., Any] = source.namespace[name]
    fn.__doc__ = code  # the generated source, for explain() and debugging
    return fn


def compile_calc(projection: Sequence[RexNode] | None, condition: RexNode | None) -> Callable[[Row], Any]:
    """``calc(row)`` → ``(out_row,)`` or ``()`` when ``condition`` is given (for ``flat_map``), else ``out_row``."""
    source = _Source()
    lines = []
    if condition is not None:
        lines.append(f"    if {source.expr(condition)} is not True:\n        return ()")
    if projection is None:
        result = "row"
    else:  # a Row without Row.__init__'s argument handling (half the cost of _create_row)
        values = ", ".join(source.expr(p) for p in projection)
        lines.append(f"    out = _new(_Row)\n    out._values = [{values}]\n    out._row_kind = row._row_kind")
        result = "out"
    lines.append(f"    return ({result},)" if condition is not None else f"    return {result}")
    return _build("calc", "\n".join(lines) + "\n", source)


def compile_condition(condition: RexNode) -> Callable[[Row], bool]:
    """``pred(row)`` → whether ``condition`` is TRUE for the row."""
    source = _Source()
    return _build("pred", f"    return {source.expr(condition)} is True\n", source)


def compile_projection(projection: Sequence[RexNode]) -> Callable[[Row], list[Any]]:
    """``values(row)`` → the list of the projected values."""
    source = _Source()
    return _build("values", f"    return [{', '.join(source.expr(p) for p in projection)}]\n", source)


def rowtime_offset_millis(expression: RexNode, rowtime_index: int) -> int | None:
    """``d`` when a watermark expression is ``rowtime - INTERVAL d`` (whole milliseconds) or ``rowtime`` (0), else
    ``None``: the watermark assigner then takes a batch's largest record timestamp minus ``d`` instead of
    evaluating the expression per row."""
    if isinstance(expression, RexInputRef):
        return 0 if expression.index == rowtime_index else None
    if not isinstance(expression, RexCall) or expression.name != "-" or len(expression.operands) != 2:
        return None
    ref, interval = expression.operands
    if not isinstance(ref, RexInputRef) or ref.index != rowtime_index or not isinstance(interval, RexLiteral):
        return None
    if not isinstance(interval.value, datetime.timedelta) or interval.value % datetime.timedelta(milliseconds=1):
        return None
    return interval.value // datetime.timedelta(milliseconds=1)
