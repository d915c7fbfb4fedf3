"""A small evaluator of constant Flink SQL expressions over strom's bound functions (test support only).

It parses the expressions of ``tests/data/flink_types/cases_*.sql`` and evaluates them bottom-up through
``resolve_function`` / ``resolve_operator`` / ``cast_function`` with the argument conventions sqlcore's planner
uses (``TRIM(BOTH 'x' FROM s)`` → ``TRIM('BOTH', 'x', s)``, ``EXTRACT(DAY FROM t)`` → ``EXTRACT('DAY', t)``, …),
so strom's answers can be compared with Flink's stored ones. It is not the SQL parser (sqlcore's is).
"""

from __future__ import annotations

import datetime
import decimal
import re
from dataclasses import dataclass
from typing import Any

from strom.api.row import Row
from strom.table.functions import FunctionContext, cast_function, resolve_function, resolve_operator
from strom.table.functions.sql_literals import (
    binary_literal,
    numeric_literal,
    parse_interval_literal,
    string_literal,
    temporal_literal,
)
from strom.table.functions.type_inference import find_common_type
from strom.table.types import (
    BooleanType,
    CharType,
    DataType,
    NullType,
    parse_type,
)

_TOKEN = re.compile(
    r"\s*(?:(?P<num>\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)|[xX]'(?P<hex>[0-9a-fA-F]*)'"
    r"|'(?P<str>(?:[^']|'')*)'|(?P<ident>[A-Za-z_][A-Za-z0-9_$]*)|`(?P<bq>[^`]*)`"
    r"|(?P<op>\|\||<=|>=|<>|!=|[=<>+\-*/%(),\[\].]))"
)


@dataclass
class Value:
    type: DataType
    value: Any
    literal: bool = False


@dataclass
class Tok:
    kind: str
    text: str


def tokenize(text: str) -> list[Tok]:
    out, pos = [], 0
    while pos < len(text):
        if not text[pos:].strip():
            break
        m = _TOKEN.match(text, pos)
        if m is None or m.lastgroup is None:
            raise SyntaxError(f"cannot tokenize {text[pos:]!r}")
        out.append(Tok(m.lastgroup, m.group(m.lastgroup)))
        pos = m.end()
    out.append(Tok("end", ""))
    return out


def _number(text: str) -> Value:
    t, v = numeric_literal(text)
    return Value(t, v, True)


def _string(text: str) -> Value:
    t, v = string_literal(text.replace("''", "'"))
    return Value(t, v, True)


class Evaluator:
    """Parses and evaluates one constant expression."""

    def __init__(self, text: str, context: FunctionContext | None = None) -> None:
        self.tokens = tokenize(text)
        self.i = 0
        self.ctx = context or FunctionContext()

    # -- helpers --------------------------------------------------------------------------------------------
    def peek(self, k: int = 0) -> Tok:
        return self.tokens[min(self.i + k, len(self.tokens) - 1)]

    def word(self, k: int = 0) -> str:
        t = self.peek(k)
        return t.text.upper() if t.kind == "ident" else t.text if t.kind == "op" else ""

    def accept(self, *words: str) -> bool:
        if all(self.word(k) == w for k, w in enumerate(words)):
            self.i += len(words)
            return True
        return False

    def expect(self, word: str) -> None:
        if not self.accept(word):
            raise SyntaxError(f"expected {word!r}; got {self.peek().text!r}")

    def op(self, name: str, *args: Value) -> Value:
        types = [a.type for a in args]
        lits = [a.value if a.literal else None for a in args]
        bound = resolve_operator(name, types, literals=lits, context=self.ctx)
        return Value(bound.result_type, bound.call(*(a.value for a in args)))

    def fn(self, name: str, *args: Value, return_type: DataType | None = None) -> Value:
        types = [a.type for a in args]
        lits = [a.value if a.literal else None for a in args]
        bound = resolve_function(name, types, literals=lits, context=self.ctx, return_type=return_type)
        return Value(bound.result_type, bound.call(*(a.value for a in args)))

    def sym(self, text: str) -> Value:
        return Value(CharType(max(len(text), 1), False), text, True)

    # -- grammar --------------------------------------------------------------------------------------------
    def parse(self) -> Value:
        v = self.expr()
        if self.peek().kind != "end":
            raise SyntaxError(f"unexpected {self.peek().text!r}")
        return v

    def expr(self) -> Value:
        v = self.conj()
        while self.accept("OR"):
            v = self.op("OR", v, self.conj())
        return v

    def conj(self) -> Value:
        v = self.neg()
        while self.accept("AND"):
            v = self.op("AND", v, self.neg())
        return v

    def neg(self) -> Value:
        if self.accept("NOT"):
            return self.op("NOT", self.neg())
        return self.predicate()

    def predicate(self) -> Value:
        v = self.additive()
        while True:
            w = self.word()
            if w in ("=", "<>", "!=", "<", "<=", ">", ">="):
                self.i += 1
                v = self.op(w, v, self.additive())
            elif w == "IS":
                v = self.is_predicate(v)
            elif w in ("LIKE", "SIMILAR", "BETWEEN", "IN") or (
                w == "NOT" and self.word(1) in ("LIKE", "SIMILAR", "BETWEEN", "IN")
            ):
                v = self.special_predicate(v)
            else:
                return v

    def is_predicate(self, v: Value) -> Value:
        self.expect("IS")
        negated = self.accept("NOT")
        if self.accept("DISTINCT", "FROM"):
            return self.op("IS NOT DISTINCT FROM" if negated else "IS DISTINCT FROM", v, self.additive())
        if self.accept("JSON"):
            kind = next((k for k in ("VALUE", "SCALAR", "ARRAY", "OBJECT") if self.accept(k)), "VALUE")
            r = self.fn("IS JSON", v, self.sym(kind))
            return self.op("NOT", r) if negated else r
        what = self.word()
        self.i += 1
        return self.op(f"IS {'NOT ' if negated else ''}{what}", v)

    def special_predicate(self, v: Value) -> Value:
        negated = self.accept("NOT")
        if self.accept("LIKE") or (self.accept("SIMILAR") and not self.expect("TO")):
            name = "LIKE" if self.tokens[self.i - 1].text.upper() == "LIKE" else "SIMILAR TO"
            args = [v, self.additive()]
            if self.accept("ESCAPE"):
                args.append(self.additive())
            return self.op(("NOT " if negated else "") + name, *args)
        if self.accept("BETWEEN"):
            symmetric = self.accept("SYMMETRIC")
            low = self.additive()
            self.expect("AND")
            high = self.additive()
            name = "BETWEEN SYMMETRIC" if symmetric else "NOT BETWEEN" if negated else "BETWEEN"
            return self.op(name, v, low, high)
        self.expect("IN")
        self.expect("(")
        items = self.arg_list(")")
        return self.op("NOT IN" if negated else "IN", v, *items)

    def additive(self) -> Value:
        v = self.term()
        while self.word() in ("+", "-", "||"):
            o = self.word()
            self.i += 1
            v = self.op(o, v, self.term())
        return v

    def term(self) -> Value:
        v = self.unary()
        while self.word() in ("*", "/", "%"):
            o = self.word()
            self.i += 1
            v = self.op(o, v, self.unary())
        return v

    def unary(self) -> Value:
        if self.accept("-"):
            if self.peek().kind == "num":  # Calcite reads "-2147483648" as one literal (an INT)
                self.i += 1
                return _number("-" + self.tokens[self.i - 1].text)
            inner = self.unary()
            r = self.op("-", inner)
            r.literal = inner.literal
            return r
        if self.accept("+"):
            return self.op("+", self.unary())
        return self.postfix()

    def postfix(self) -> Value:
        v = self.primary()
        while True:
            if self.accept("["):
                idx = self.expr()
                self.expect("]")
                v = self.fn("ITEM", v, idx)
            elif self.word() == "." and self.peek(1).kind == "ident":
                self.i += 1
                v = self.fn("FIELD", v, self.sym(self.peek().text))
                self.i += 1
            else:
                return v

    def arg_list(self, close: str) -> list[Value]:
        args: list[Value] = []
        while not self.accept(close):
            if args:
                self.expect(",")
            args.append(self.expr())
        return args

    def primary(self) -> Value:
        tok = self.peek()
        if tok.kind == "num":
            self.i += 1
            return _number(tok.text)
        if tok.kind == "str":
            self.i += 1
            return _string(tok.text)
        if tok.kind == "hex":
            self.i += 1
            t, data = binary_literal(tok.text)
            return Value(t, data, True)
        if self.accept("("):
            items = self.arg_list(")")
            return items[0] if len(items) == 1 else self.fn("ROW", *items)
        w = self.word()
        self.i += 1
        if w in ("TRUE", "FALSE"):
            return Value(BooleanType(False), w == "TRUE", True)
        if w == "NULL":
            return Value(NullType(), None, True)
        if w in ("DATE", "TIME", "TIMESTAMP") and self.peek().kind == "str":
            return self.typed_literal(w)
        if w == "INTERVAL":
            return self.interval()
        if w in ("CAST", "TRY_CAST"):
            return self.cast(w == "TRY_CAST")
        if w == "CASE":
            return self.case()
        if w in ("ARRAY", "MAP") and self.accept("["):
            return self.fn(w, *self.arg_list("]"))
        if w in ("CURRENT_DATE", "CURRENT_TIME", "CURRENT_TIMESTAMP", "LOCALTIMESTAMP", "LOCALTIME") and (
            self.word() != "("
        ):
            return self.fn(w)
        self.expect("(")
        return self.call(w)

    def typed_literal(self, kind: str) -> Value:
        text = self.peek().text
        self.i += 1
        t, v = temporal_literal(kind, text)
        return Value(t, v, True)

    def interval(self) -> Value:
        sign = -1 if self.accept("-") else 1
        text = self.peek().text
        self.i += 1
        start = self.word()
        self.i += 1
        end = None
        if self.accept("TO"):
            end = self.word()
            self.i += 1
        t, v = parse_interval_literal(text, start, end)
        return Value(t.not_null(), v if sign > 0 else -v, True)

    def type_text(self) -> str:
        depth, parts = 0, []
        while True:
            w = self.peek()
            if w.kind == "end" or (depth == 0 and w.text in (")", ",")):
                break
            depth += (w.text in ("(", "<") and 1) or 0
            depth -= (w.text in (")", ">") and 1) or 0
            parts.append(w.text if w.kind != "str" else f"'{w.text}'")
            self.i += 1
        return " ".join(parts).replace("( ", "(").replace(" )", ")")

    def cast(self, try_cast: bool) -> Value:
        self.expect("(")
        v = self.expr()
        self.expect("AS")
        target = parse_type(self.type_text())
        self.expect(")")
        result = target.copy(nullable=v.type.is_nullable or try_cast)
        return Value(result, cast_function(v.type, result, try_cast=try_cast, context=self.ctx)(v.value))

    def case(self) -> Value:
        subject = None if self.word() == "WHEN" else self.expr()
        branches: list[tuple[Value, Value]] = []
        while self.accept("WHEN"):
            cond = self.expr()
            if subject is not None:
                cond = self.op("=", subject, cond)
            self.expect("THEN")
            branches.append((cond, self.expr()))
        otherwise = self.expr() if self.accept("ELSE") else Value(NullType(), None, True)
        self.expect("END")
        values = [b[1] for b in branches] + [otherwise]
        common = find_common_type([v.type for v in values])
        assert common is not None
        chosen = next((b[1] for b in branches if b[0].value is True), otherwise)
        nullable = any(v.type.is_nullable for v in values)
        result = common.copy(nullable=nullable)
        return Value(result, cast_function(chosen.type, result, context=self.ctx)(chosen.value))

    def call(self, name: str) -> Value:
        if name in ("SUBSTRING", "OVERLAY"):
            first = self.expr()
            if self.accept("PLACING"):
                args = [first, self.expr()]
                self.expect("FROM")
                args.append(self.expr())
                if self.accept("FOR"):
                    args.append(self.expr())
                self.expect(")")
                return self.fn(name, *args)
            if self.accept("FROM"):
                args = [first, self.expr()]
                if self.accept("FOR"):
                    args.append(self.expr())
                self.expect(")")
                return self.fn(name, *args)
            return self.fn(name, first, *self.rest_args())
        if name == "TRIM":
            mode = next((m for m in ("BOTH", "LEADING", "TRAILING") if self.accept(m)), None)
            if mode is None and self.peek(1).text.upper() != "FROM":
                first = self.expr()
                if not self.accept("FROM"):
                    return self.fn(name, first, *self.rest_args())
                chars, target = first, self.expr()
            else:
                chars = self.sym(" ") if self.accept("FROM") else self.expr()
                if self.tokens[self.i - 1].text.upper() != "FROM":
                    self.expect("FROM")
                target = self.expr()
            self.expect(")")
            return self.fn(name, self.sym(mode or "BOTH"), chars, target)
        if name == "POSITION":
            sub = self.additive()
            self.expect("IN")
            s = self.expr()
            self.expect(")")
            return self.fn(name, sub, s)
        if name == "EXTRACT":
            unit = self.word()
            self.i += 1
            self.expect("FROM")
            v = self.expr()
            self.expect(")")
            return self.fn(name, self.sym(unit), v)
        if name in ("FLOOR", "CEIL", "CEILING"):
            v = self.expr()
            if self.accept("TO"):
                unit = self.word()
                self.i += 1
                self.expect(")")
                return self.fn(name, v, self.sym(unit))
            return self.fn(name, v, *self.rest_args())
        if name in ("TIMESTAMPADD", "TIMESTAMPDIFF"):
            unit = self.word()
            self.i += 1
            return self.fn(name, self.sym(unit), *self.rest_args())
        if name.startswith("JSON_"):
            return self.json_call(name)
        return self.fn(name, *self.arg_list(")"))

    def rest_args(self) -> list[Value]:
        args: list[Value] = []
        while self.accept(","):
            args.append(self.expr())
        self.expect(")")
        return args

    def on_clause(self, modes: tuple[str, ...]) -> tuple[str, Value | None, str] | None:
        """``<mode> ON EMPTY|ERROR|NULL`` (DEFAULT x as mode 'DEFAULT' with its value)."""
        start = self.i
        if self.accept("DEFAULT"):
            value: Value | None = self.additive()
            mode = "DEFAULT"
        else:
            value = None
            mode = ""
            for m in modes:
                if self.accept(*m.split()):
                    mode = m
                    break
            if not mode:
                return None
        if not self.accept("ON"):
            self.i = start
            return None
        what = self.word()
        self.i += 1
        return mode, value, what

    def json_call(self, name: str) -> Value:
        if name in ("JSON_OBJECT", "JSON_ARRAY"):
            return self.json_constructor(name)
        args = [self.expr()]
        returning = None
        empty: tuple[str, Value] = ("NULL", Value(NullType(), None, True))
        error: tuple[str, Value] = ("NULL", Value(NullType(), None, True))
        wrapper = "WITHOUT"
        exists_mode = "FALSE"
        if self.accept(","):
            args.append(self.expr())
        while not self.accept(")"):
            if self.accept("RETURNING"):
                returning = parse_type(self.type_text_until(("DEFAULT", "NULL", "ERROR", "EMPTY", "ON", ")")))
                continue
            w = next((m for m in ("WITHOUT", "WITH") if self.accept(m)), None)
            if w is not None:
                kind = next((k for k in ("CONDITIONAL", "UNCONDITIONAL") if self.accept(k)), "UNCONDITIONAL")
                self.accept("ARRAY")
                self.expect("WRAPPER")
                wrapper = "WITHOUT" if w == "WITHOUT" else kind
                continue
            clause = self.on_clause(("NULL", "ERROR", "EMPTY ARRAY", "EMPTY OBJECT", "TRUE", "FALSE", "UNKNOWN"))
            if clause is None:
                raise SyntaxError(f"unexpected {self.peek().text!r} in {name}")
            mode, value, what = clause
            if name == "JSON_EXISTS":
                exists_mode = mode
            elif what == "EMPTY":
                empty = (mode, value or Value(NullType(), None, True))
            else:
                error = (mode, value or Value(NullType(), None, True))
        if name == "JSON_VALUE":
            return self.fn(
                name, *args, self.sym(empty[0]), empty[1], self.sym(error[0]), error[1], return_type=returning
            )
        if name == "JSON_QUERY":
            return self.fn(
                name, *args, self.sym(wrapper), self.sym(empty[0]), self.sym(error[0]), return_type=returning
            )
        if name == "JSON_EXISTS":
            return self.fn(name, *args, self.sym(exists_mode))
        return self.fn(name, *args)

    def type_text_until(self, stops: tuple[str, ...]) -> str:
        parts = []
        while self.word() not in stops:
            parts.append(self.peek().text)
            self.i += 1
        return " ".join(parts).replace("( ", "(").replace(" )", ")")

    def json_constructor(self, name: str) -> Value:
        args: list[Value] = []
        null_mode = "NULL" if name == "JSON_OBJECT" else "ABSENT"
        while not self.accept(")"):
            if args:
                self.accept(",")
            if self.word() in ("NULL", "ABSENT") and self.word(1) == "ON":
                null_mode = self.word()
                self.i += 3
                continue
            args.append(self.expr())
            if name == "JSON_OBJECT":
                self.expect("VALUE")
                args.append(self.expr())
        return self.fn(name, self.sym(null_mode), *args)


def encode(value: Any) -> Any:
    """A value tagged as ``tests/data/flink_types/probe_flink.py`` stores PyFlink's (``{"decimal": "1.50"}``)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return {"bool": value}
    if isinstance(value, int):
        return {"int": value}
    if isinstance(value, float):
        return {"float": repr(value)}
    if isinstance(value, decimal.Decimal):
        return {"decimal": str(value)}
    if isinstance(value, str):
        return {"str": str(value)}
    if isinstance(value, bytes | bytearray):
        return {"bytes": bytes(value).hex()}
    if isinstance(value, datetime.datetime):
        return {"datetime": value.isoformat()}
    if isinstance(value, datetime.date):
        return {"date": value.isoformat()}
    if isinstance(value, datetime.time):
        return {"time": value.isoformat()}
    if isinstance(value, datetime.timedelta):
        return {"timedelta_us": value // datetime.timedelta(microseconds=1)}
    if isinstance(value, Row):
        names = value.get_field_names()
        return {"row": [encode(v) for v in value], "names": list(names) if names else None}
    if isinstance(value, list | tuple):
        return {"list": [encode(v) for v in value]}
    if isinstance(value, dict):
        return {"map": [[encode(k), encode(v)] for k, v in value.items()]}
    return {"other": type(value).__name__, "repr": repr(value)}


def evaluate(text: str, context: FunctionContext | None = None) -> Value:
    """Evaluate one constant expression; raises what strom raises."""
    return Evaluator(text, context).parse()
