"""Flink's ``SqlToRexConverter``/``ExpressionConverter``: sqlglot expressions → typed, bound row expressions.

Literals get Flink's types (``1`` is ``INT NOT NULL``, ``'abc'`` is ``CHAR(3) NOT NULL``, ``1.5`` is
``DECIMAL(2, 1) NOT NULL``); operators and functions are bound through sqltypes' ``resolve_operator`` /
``resolve_function`` / ``cast_function``; errors name the position in the query (``line:column``).
"""

from __future__ import annotations

import datetime
import decimal
from collections.abc import Callable, Mapping
from typing import Any

from sqlglot import exp

from strom.table.errors import TableException, ValidationException
from strom.table.functions import cast_function, resolve_function, resolve_operator
from strom.table.functions.sql_literals import numeric_literal, string_literal, temporal_literal
from strom.table.planner.rex import RexCall, RexLiteral, RexNode, RexSpecial
from strom.table.planner.scope import Scope
from strom.table.planner.type_rules import common_type
from strom.table.planner.value_constructor import array_value
from strom.table.sql.flink_calls import JsonCall, flink_call
from strom.table.sql.flink_dialect import FlinkDialect, FlinkType
from strom.table.sql.parser import at
from strom.table.types import DataType, parse_type

__all__ = ["ExpressionConverter", "literal_type"]

_BINARY = {
    exp.Add: "+",
    exp.Sub: "-",
    exp.Mul: "*",
    exp.Div: "/",
    exp.Mod: "%",
    exp.EQ: "=",
    exp.NEQ: "<>",
    exp.GT: ">",
    exp.GTE: ">=",
    exp.LT: "<",
    exp.LTE: "<=",
    exp.DPipe: "||",
    exp.Like: "LIKE",
    exp.SimilarTo: "SIMILAR TO",
    exp.NullSafeNEQ: "IS DISTINCT FROM",
    exp.NullSafeEQ: "IS NOT DISTINCT FROM",
}
_BOOLEAN = parse_type("BOOLEAN NOT NULL")
_CHAR = parse_type("CHAR(6) NOT NULL")
_UNITS_MS = {"SECOND": 1000, "MINUTE": 60_000, "HOUR": 3_600_000, "DAY": 86_400_000}


def literal_type(value: Any) -> DataType:
    """Flink's type of a Python value used as a literal."""
    if value is None:
        return parse_type("NULL")
    if isinstance(value, bool):
        return parse_type("BOOLEAN NOT NULL")
    if isinstance(value, int):
        return parse_type("INT NOT NULL" if -(2**31) <= value < 2**31 else "BIGINT NOT NULL")
    if isinstance(value, float):
        return parse_type("DOUBLE NOT NULL")
    if isinstance(value, decimal.Decimal):
        _sign, digits, exponent = value.as_tuple()
        scale = max(0, -int(exponent))
        precision = max(len(digits), scale, 1)
        return parse_type(f"DECIMAL({precision}, {scale}) NOT NULL")
    if isinstance(value, str):
        return parse_type(f"CHAR({max(len(value), 1)}) NOT NULL")
    if isinstance(value, bytes):
        return parse_type(f"BINARY({max(len(value), 1)}) NOT NULL")
    if isinstance(value, datetime.datetime):
        return parse_type("TIMESTAMP(6) NOT NULL")
    if isinstance(value, datetime.date):
        return parse_type("DATE NOT NULL")
    if isinstance(value, datetime.time):
        return parse_type("TIME(0) NOT NULL")
    if isinstance(value, datetime.timedelta):
        return parse_type("INTERVAL DAY(2) TO SECOND(3) NOT NULL")
    raise ValidationException(f"expected a literal of a SQL type; got a {type(value).__name__}: {value!r}")


class ExpressionConverter:
    """Converts the expressions of one scope; ``substitutions`` maps an expression's SQL text to a node already
    computed below (group keys and aggregate calls after an aggregation)."""

    def __init__(self, scope: Scope, substitutions: Mapping[str, RexNode] | None = None) -> None:
        self.scope = scope
        self.substitutions = dict(substitutions or {})
        self.grouped = substitutions is not None

    def convert(self, node: exp.Expr) -> RexNode:
        if self.substitutions:
            hit = self.substitutions.get(node.sql(dialect=FlinkDialect))
            if hit is not None:
                return hit
        handler = self._HANDLERS.get(type(node))
        if handler is not None:
            return handler(self, node)
        if isinstance(node, exp.Column):
            if self.grouped and any(f.name == node.name for f in self.scope.fields):  # a SELECT alias, as Calcite
                raise ValidationException(
                    f"SQL validation failed{at(node)}: Column '{node.name}' not found in any table; "
                    "hint: repeat the aggregate, not its alias"
                )
            if self.grouped:
                raise ValidationException(
                    f"SQL validation failed{at(node)}: "
                    f"Expression '{node.sql(dialect=FlinkDialect)}' is not being grouped; "
                    "hint: add it to GROUP BY or aggregate it (MIN, MAX, …)"
                )
            return self.scope.resolve(node)
        if isinstance(node, exp.Binary) and type(node) in _BINARY:
            call = self.operator(_BINARY[type(node)], [node.this, node.expression], node)
            return RexSpecial("NOT", (call,), call.type) if node.args.get("negate") else call  # x NOT LIKE p
        if isinstance(node, exp.AggFunc):
            raise ValidationException(
                f"SQL validation failed{at(node)}: aggregate {node.sql(dialect=FlinkDialect)} is not allowed here; "
                "hint: aggregates belong in SELECT or HAVING of a grouped query"
            )
        if isinstance(node, exp.Func):
            return self.function(node)
        raise TableException(
            f"Unsupported SQL construct{at(node)}: {type(node).__name__} ({node.sql(dialect=FlinkDialect)[:60]}); "
            "expected a column, literal, operator, CASE, CAST or function call; see docs/sql.md"
        )

    # -- leaves -------------------------------------------------------------------------------------
    def literal(self, node: exp.Literal) -> RexNode:
        literal_type_, value = string_literal(node.this) if node.is_string else numeric_literal(node.this)
        return RexLiteral(value, literal_type_)

    def interval(self, node: exp.Interval) -> RexNode:
        unit = node.args.get("unit")
        text = str(
            node.this.name if isinstance(node.this, exp.Literal) else node.this.sql(dialect=FlinkDialect)
        ).strip()
        if isinstance(unit, exp.IntervalSpan):
            start, end = unit.this.name.upper(), unit.expression.name.upper()
            return RexLiteral(
                _day_time(text, start, end),
                parse_type(f"INTERVAL {start} TO {end}".replace("DAY TO SECOND", "DAY(2) TO SECOND(3)")).not_null(),
            )
        name = (unit.name if unit is not None else "SECOND").upper().rstrip("S")
        if name in ("YEAR", "MONTH"):
            months = int(text) * (12 if name == "YEAR" else 1)
            return RexLiteral(
                months,
                parse_type("INTERVAL YEAR(2) TO MONTH NOT NULL" if name == "YEAR" else "INTERVAL MONTH NOT NULL"),
            )
        if name not in _UNITS_MS:
            raise ValidationException(f"SQL validation failed{at(node)}: expected an interval unit; got {name}")
        value = datetime.timedelta(milliseconds=float(decimal.Decimal(text) * _UNITS_MS[name]))
        return RexLiteral(
            value, parse_type("INTERVAL SECOND(3) NOT NULL" if name == "SECOND" else f"INTERVAL {name} NOT NULL")
        )

    # -- operators and functions ---------------------------------------------------------------------
    def operator(self, op: str, operands: list[exp.Expr], node: exp.Expr) -> RexNode:
        args = [self.convert(o) for o in operands]
        try:
            bound = resolve_operator(op, [a.type for a in args], literals=_literals(args))
        except ValidationException as err:
            raise ValidationException(f"SQL validation failed{at(node)}: {err}") from None
        return RexCall(op, bound.call, tuple(args), bound.result_type)

    def function(self, node: exp.Func) -> RexNode:
        flink = flink_call(node)
        if flink is not None:
            name, operands = flink
        elif isinstance(node, exp.Anonymous):
            name, operands = str(node.this), list(node.expressions)
        else:
            name = node.sql_name()
            operands = [v for key in node.arg_types for v in _as_list(node.args.get(key))]
        args = [self.convert(o) for o in operands]
        from strom.table.udf import lookup

        python_function = lookup(name)
        if python_function is not None and not python_function.table_function:
            return RexCall(name, python_function.func, tuple(args), python_function.result_type)
        try:
            returning = node.args.get("returning") if isinstance(node, JsonCall) else None  # JSON_VALUE RETURNING
            returning = returning.name if returning is not None else None
            bound = resolve_function(
                name.upper(),
                [a.type for a in args],
                literals=_literals(args),
                return_type=parse_type(returning) if returning else None,
            )
        except ValidationException as err:
            raise ValidationException(f"SQL validation failed{at(node)}: {err}") from None
        return RexCall(name.upper(), bound.call, tuple(args), bound.result_type)

    def logic(self, node: exp.Expr) -> RexNode:
        kind = "AND" if isinstance(node, exp.And) else "OR"
        operands = (self.convert(node.this), self.convert(node.expression))
        for operand, source in zip(operands, (node.this, node.expression), strict=True):
            self._expect_boolean(operand, source, kind)
        nullable = any(o.type.is_nullable for o in operands)
        return RexSpecial(kind, operands, _BOOLEAN.nullable() if nullable else _BOOLEAN)

    def _expect_boolean(self, operand: RexNode, source: exp.Expr, what: str) -> None:
        if operand.type.type_root.name not in ("BOOLEAN", "NULL"):
            raise ValidationException(
                f"SQL validation failed{at(source)}: {what} expects BOOLEAN operands; got {operand.type} "
                f"({source.sql(dialect=FlinkDialect)})"
            )

    def negation(self, node: exp.Not) -> RexNode:
        inner = node.this
        if isinstance(inner, exp.Is):
            return self.is_null(inner, negate=True)
        operand = self.convert(inner)
        self._expect_boolean(operand, inner, "NOT")
        return RexSpecial("NOT", (operand,), operand.type)

    def is_null(self, node: exp.Is, negate: bool = False) -> RexNode:
        target = node.expression
        operand = self.convert(node.this)
        if isinstance(target, exp.Null):
            kind = "IS NOT NULL" if negate else "IS NULL"
        elif isinstance(target, exp.JSON):  # x IS [NOT] JSON [VALUE|SCALAR|ARRAY|OBJECT]
            kind_ = str(target.this.name if isinstance(target.this, exp.Expr) else target.this or "VALUE").upper()
            kind_ = kind_ if kind_ in ("VALUE", "SCALAR", "ARRAY", "OBJECT") else "VALUE"
            bound = resolve_function("IS JSON", [operand.type, _CHAR], literals=[None, kind_])
            call = RexCall("IS JSON", bound.call, (operand, RexLiteral(kind_, _CHAR)), bound.result_type)
            return RexSpecial("NOT", (call,), call.type) if negate else call
        elif isinstance(target, exp.Boolean):
            kind = "IS TRUE" if target.this else "IS FALSE"
            if negate:
                return RexSpecial("NOT", (RexSpecial(kind, (operand,), _BOOLEAN),), _BOOLEAN)
        else:
            raise TableException(f"Unsupported SQL construct{at(node)}: IS {target.sql(dialect=FlinkDialect)}")
        return RexSpecial(kind, (operand,), _BOOLEAN)

    def case(self, node: exp.Case) -> RexNode:
        operands: list[RexNode] = []
        subject = node.this
        for branch in node.args.get("ifs") or []:
            condition = branch.this if subject is None else exp.EQ(this=subject.copy(), expression=branch.this)
            operands += [self.convert(condition), self.convert(branch.args["true"])]
        default = node.args.get("default")
        operands.append(self.convert(default) if default is not None else RexLiteral(None, parse_type("NULL")))
        results = [operands[i] for i in range(1, len(operands) - 1, 2)] + [operands[-1]]
        result_type = common_type([r.type for r in results], node)
        if default is None:
            result_type = result_type.nullable()
        return RexSpecial("CASE", tuple(operands), result_type)

    def coalesce(self, node: exp.Coalesce) -> RexNode:
        args = [self.convert(node.this), *(self.convert(e) for e in node.expressions)]
        result = common_type([a.type for a in args], node)
        nullable = all(a.type.is_nullable for a in args)
        return RexSpecial("COALESCE", tuple(args), result if nullable else result.not_null())

    def cast(self, node: exp.Cast) -> RexNode:
        to = node.args["to"]
        kind = to.sql(dialect=FlinkDialect).upper() if not isinstance(to, FlinkType) else ""
        if kind in ("DATE", "TIME", "TIMESTAMP") and isinstance(node.this, exp.Literal) and node.this.is_string:
            literal_type_, value = temporal_literal(kind, node.this.name)  # TIMESTAMP '…': precision as written
            return RexLiteral(value, literal_type_)
        operand = self.convert(node.this)
        text = to.this if isinstance(to, FlinkType) else to.sql(dialect=FlinkDialect)
        target = parse_type(str(text))
        safe = bool(node.args.get("safe"))
        try:
            fn = cast_function(operand.type, target, try_cast=safe)
        except ValidationException as err:
            raise ValidationException(f"SQL validation failed{at(node)}: {err}") from None
        if safe or operand.type.is_nullable:
            target = target.nullable()
        return RexCall("TRY_CAST" if safe else "CAST", fn, (operand,), target)

    def between(self, node: exp.Between) -> RexNode:
        return self.operator("BETWEEN", [node.this, node.args["low"], node.args["high"]], node)

    def in_list(self, node: exp.In) -> RexNode:
        if node.args.get("query") is not None:
            raise TableException(
                f"Unsupported SQL construct{at(node)}: IN (subquery) in this position; "
                "hint: use a JOIN (docs/sql.md lists what is supported)"
            )
        return self.operator("IN", [node.this, *node.expressions], node)

    def negative(self, node: exp.Neg) -> RexNode:
        inner = self.convert(node.this)
        if isinstance(inner, RexLiteral) and isinstance(inner.value, int | float | decimal.Decimal):
            value = -inner.value
            return RexLiteral(value, literal_type(value) if isinstance(value, int) else inner.type)
        zero = RexLiteral(0, parse_type("INT NOT NULL"))
        bound = resolve_operator("-", [zero.type, inner.type])
        return RexCall("-", bound.call, (zero, inner), bound.result_type)

    def escape(self, node: exp.Escape) -> RexNode:
        """``x [NOT] LIKE p ESCAPE e`` (and SIMILAR TO): the operator with the escape as its third operand."""
        like = node.this
        if not isinstance(like, exp.Like | exp.SimilarTo):
            raise TableException(f"Unsupported SQL construct{at(node)}: ESCAPE after {type(like).__name__}")
        call = self.operator(_BINARY[type(like)], [like.this, like.expression, node.expression], node)
        return RexSpecial("NOT", (call,), call.type) if like.args.get("negate") else call

    def item(self, node: exp.Bracket) -> RexNode:
        """``collection[key]`` (ARRAY index from 1, MAP key): Flink's ITEM."""
        args = [self.convert(node.this), *(self.convert(e) for e in node.expressions)]
        try:
            bound = resolve_function("ITEM", [a.type for a in args], literals=_literals(args))
        except ValidationException as err:
            raise ValidationException(f"SQL validation failed{at(node)}: {err}") from None
        return RexCall("ITEM", bound.call, tuple(args), bound.result_type)

    _HANDLERS: dict[type, Callable[[ExpressionConverter, Any], RexNode]] = {
        exp.Bracket: item,
        exp.Escape: escape,
        exp.Literal: literal,
        exp.Boolean: lambda self, n: RexLiteral(bool(n.this), _BOOLEAN),
        exp.Null: lambda self, n: RexLiteral(None, parse_type("NULL")),
        exp.Paren: lambda self, n: self.convert(n.this),
        exp.Alias: lambda self, n: self.convert(n.this),
        exp.Interval: interval,
        exp.And: logic,
        exp.Or: logic,
        exp.Not: negation,
        exp.Is: is_null,
        exp.Case: case,
        exp.Coalesce: coalesce,
        exp.Array: lambda self, n: array_value(self, n),
        exp.Cast: cast,
        exp.TryCast: cast,
        exp.Between: between,
        exp.In: in_list,
        exp.Neg: negative,
    }


def _literals(args: list[RexNode]) -> list[Any]:
    """The arguments known at plan time (LIKE patterns, IN lists, units), None for the others."""
    return [a.value if isinstance(a, RexLiteral) else None for a in args]


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, list):
        return value
    return [value]


def _day_time(text: str, start: str, end: str) -> datetime.timedelta:
    sign = -1 if text.startswith("-") else 1
    text = text.lstrip("+-")
    days = 0
    if start == "DAY":
        head, _, text = text.partition(" ")
        days = int(head)
    parts = [float(p) for p in text.split(":")] if text else []
    units = {"HOUR": 3600, "MINUTE": 60, "SECOND": 1}
    order = [u for u in ("HOUR", "MINUTE", "SECOND") if list(units).index(u) <= list(units).index(end)]
    if start in units:
        order = order[list(units).index(start) :]
    seconds = sum(p * units[u] for p, u in zip(parts, order, strict=False))
    return sign * datetime.timedelta(days=days, seconds=seconds)
