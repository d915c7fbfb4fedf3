"""Flink's call syntax of built-in functions: the name as written and the arguments in Flink's order.

sqlglot's base parser turns many calls into its own typed nodes, renaming them (``CHAR_LENGTH`` → ``Length``,
``TRUNCATE`` → ``Trunc``, ``DAYOFYEAR`` → ``DayOfYear``) or reordering their arguments (``TIMESTAMPDIFF(unit, a,
b)``, ``LOG10(x)`` as ``Log(10, x)``). Flink's parser keeps a call as written, so :data:`PLAIN_CALLS` makes the
Flink dialect parse these names as plain calls (``exp.Anonymous``), and :func:`flink_call` gives the special forms
of Calcite's grammar (``TRIM(LEADING 'x' FROM s)``, ``POSITION(a IN b)``, ``OVERLAY(s PLACING r FROM i FOR n)``,
``EXTRACT(unit FROM t)``, ``FLOOR(t TO unit)``) as the argument conventions of ``strom.table.functions``:
``TRIM('LEADING', 'x', s)``, ``POSITION(a, b)``, ``OVERLAY(s, r, i, n)``, ``EXTRACT('DAY', t)``, ``FLOOR(t, 'DAY')``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from sqlglot import exp
from sqlglot.tokenizer_core import TokenType

__all__ = ["JSON_CALL_PARSERS", "PLAIN_CALLS", "JsonCall", "flink_call"]

_PLAIN_NAMES = (
    "CHAR_LENGTH",
    "CHARACTER_LENGTH",
    "LOCATE",
    "LPAD",
    "RPAD",
    "CONCAT",
    "CONCAT_WS",
    "LEFT",
    "RIGHT",
    "CHR",
    "REPEAT",
    "REPLACE",
    "INITCAP",
    "REGEXP_EXTRACT",
    "REGEXP_REPLACE",
    "TIMESTAMPADD",
    "TIMESTAMPDIFF",
    "DAYOFYEAR",
    "DAYOFMONTH",
    "DAYOFWEEK",
    "ROUND",
    "TRUNCATE",
    "POWER",
    "LOG",
    "LOG10",
    "LOG2",
    "NULLIF",
    "IF",
    "GREATEST",
    "LEAST",
    "TO_BASE64",
    "FROM_BASE64",
    "MD5",
    "SHA1",
    "SHA2",
    "SHA256",
    "SPLIT",
    "INSTR",
    "UNHEX",
    "HEX",
    "DATE_FORMAT",
    "TO_DATE",
    "TO_TIMESTAMP",
    "UNIX_TIMESTAMP",
    "FROM_UNIXTIME",
    "ASCII",
    "REVERSE",
    "SIGN",
    "ABS",
)


def _plain(name: str) -> Callable[[list[exp.Expr]], exp.Expr]:
    return lambda args: exp.Anonymous(this=name, expressions=args)


PLAIN_CALLS: dict[str, Callable[[list[exp.Expr]], exp.Expr]] = {name: _plain(name) for name in _PLAIN_NAMES}

_UNIT_FIRST = ("TIMESTAMPADD", "TIMESTAMPDIFF")


def _unit(node: exp.Expr) -> exp.Expr:
    """A time unit written as a bare word (``DAY``, ``HOUR``): its name as a string literal."""
    if isinstance(node, exp.Var | exp.Column):
        return exp.Literal.string(node.name.upper())
    return node


def _trim(node: exp.Expr) -> tuple[str, list[exp.Expr]]:
    position = str(node.args.get("position") or "BOTH").upper()
    chars = node.args.get("expression") or exp.Literal.string(" ")
    return "TRIM", [exp.Literal.string(position), chars, node.this]


def _position(node: exp.Expr) -> tuple[str, list[exp.Expr]]:
    start = node.args.get("position")
    if start is not None:
        return "LOCATE", [node.args["substr"], node.this, start]
    return "POSITION", [node.args["substr"], node.this]


def _overlay(node: exp.Expr) -> tuple[str, list[exp.Expr]]:
    args = [node.this, node.expression, node.args["from_"]]
    length = node.args.get("for_")
    return "OVERLAY", [*args, length] if length is not None else args


def _floor_ceil(node: exp.Expr) -> tuple[str, list[exp.Expr]]:
    name = "FLOOR" if isinstance(node, exp.Floor) else "CEIL"
    to = node.args.get("to")
    if to is not None:
        return name, [node.this, _unit(to)]
    decimals = node.args.get("decimals")
    return name, [node.this] if decimals is None else [node.this, decimals]


def _json_object(node: exp.Expr) -> tuple[str, list[exp.Expr]]:
    """``JSON_OBJECT(KEY k VALUE v, … [NULL | ABSENT] ON NULL)`` → ``JSON_OBJECT(null_mode, k, v, …)``."""
    mode = str(node.args.get("null_handling") or "NULL ON NULL").split()[0].upper()
    pairs = [part for kv in node.expressions for part in (kv.this, kv.expression)]
    return "JSON_OBJECT", [exp.Literal.string(mode), *pairs]


_SPECIAL: dict[type, Callable[[exp.Expr], tuple[str, list[exp.Expr]]]] = {
    exp.Trim: _trim,
    exp.StrPosition: _position,
    exp.Overlay: _overlay,
    exp.Extract: lambda n: ("EXTRACT", [_unit(n.this), n.expression]),
    exp.Floor: _floor_ceil,
    exp.Ceil: _floor_ceil,
    exp.Length: lambda n: ("CHAR_LENGTH", [n.this]),
    exp.Initcap: lambda n: ("INITCAP", [n.this]),
    exp.Chr: lambda n: ("CHR", list(n.expressions)),
    exp.JSONObject: _json_object,
}


def flink_call(node: exp.Func) -> tuple[str, list[exp.Expr]] | None:
    """Flink's name and arguments of a call with special syntax or a unit argument; None for the others."""
    if isinstance(node, JsonCall):
        return str(node.this), list(node.expressions)
    special = _SPECIAL.get(type(node))
    if special is not None:
        return special(node)
    if isinstance(node, exp.Anonymous) and str(node.this).upper() in _UNIT_FIRST and node.expressions:
        return str(node.this).upper(), [_unit(node.expressions[0]), *node.expressions[1:]]
    return None


class JsonCall(exp.Anonymous):
    """``JSON_VALUE`` / ``JSON_QUERY`` / ``JSON_EXISTS`` with Flink's clauses, as the bound functions take them:
    ``expressions`` the arguments (modes as string literals), ``returning`` the RETURNING type's text or None."""

    arg_types: ClassVar[dict[str, bool]] = {"this": True, "expressions": True, "returning": False}


_CLAUSE_WORDS = ("DEFAULT", "NULL", "ERROR", "EMPTY", "ON", "WITH", "WITHOUT", "TRUE", "FALSE", "UNKNOWN")


def _word(parser: Any) -> str:
    return str(parser._curr.text).upper() if parser._curr is not None else ""


def _type_text(parser: Any) -> str:
    first, last, depth = parser._curr, parser._curr, 0
    while parser._curr is not None:
        word = _word(parser)
        if word == "(":
            depth += 1
        elif word == ")":
            if depth == 0:
                break
            depth -= 1
        elif depth == 0 and parser._curr is not first and word in _CLAUSE_WORDS:
            break
        last = parser._curr
        parser._advance()
    return str(parser.sql[first.start : last.end + 1])


def _on_clause(parser: Any, name: str) -> tuple[str, exp.Expr, str]:
    """``<mode> ON EMPTY|ERROR`` (``DEFAULT x`` as mode DEFAULT with its value)."""
    value: exp.Expr = exp.Null()
    if parser._match_text_seq("DEFAULT"):
        mode, value = "DEFAULT", parser._parse_bitwise()
    else:
        words = []
        while _word(parser) not in ("ON", ")", ""):
            words.append(_word(parser))
            parser._advance()
        mode = " ".join(words)
    if not parser._match_text_seq("ON"):
        parser.raise_error(f"Expected ON EMPTY or ON ERROR in {name}")
    what = _word(parser)
    parser._advance()
    return mode, value, what


def parse_json_call(parser: Any, name: str) -> exp.Expr:
    """The arguments and clauses of ``name(`` … up to its ``)``."""
    args = [parser._parse_bitwise()]
    if parser._match(TokenType.COMMA):
        args.append(parser._parse_bitwise())
    returning = None
    empty: tuple[str, exp.Expr] = ("NULL", exp.Null())
    error: tuple[str, exp.Expr] = ("NULL", exp.Null())
    wrapper, exists_mode = "WITHOUT", "FALSE"
    while parser._curr is not None and _word(parser) != ")":
        if parser._match_text_seq("RETURNING"):
            returning = _type_text(parser)
        elif _word(parser) in ("WITH", "WITHOUT"):
            kind = _word(parser)
            parser._advance()
            variant = "CONDITIONAL" if parser._match_text_seq("CONDITIONAL") else "UNCONDITIONAL"
            parser._match_text_seq("UNCONDITIONAL")
            parser._match_text_seq("ARRAY")
            if not parser._match_text_seq("WRAPPER"):
                parser.raise_error(f"Expected WRAPPER in {name}")
            wrapper = "WITHOUT" if kind == "WITHOUT" else variant
        else:
            mode, value, what = _on_clause(parser, name)
            if name == "JSON_EXISTS":
                exists_mode = mode
            elif what == "EMPTY":
                empty = (mode, value)
            else:
                error = (mode, value)
    text = exp.Literal.string
    if name == "JSON_VALUE":
        args += [text(empty[0]), empty[1], text(error[0]), error[1]]
    elif name == "JSON_QUERY":
        args += [text(wrapper), text(empty[0]), text(error[0])]
    else:
        args.append(text(exists_mode))
    return JsonCall(this=name, expressions=args, returning=exp.Literal.string(returning) if returning else None)


def parse_json_array(parser: Any) -> exp.Expr:
    """``JSON_ARRAY(v, … [NULL | ABSENT] ON NULL)`` → ``JSON_ARRAY(null_mode, v, …)`` (ABSENT by default)."""
    values: list[exp.Expr] = []
    mode = "ABSENT"
    while parser._curr is not None and _word(parser) != ")":
        if _word(parser) in ("NULL", "ABSENT") and parser._next is not None and parser._next.text.upper() == "ON":
            mode = _word(parser)
            parser._advance()
            parser._advance()
            if not parser._match_text_seq("NULL"):
                parser.raise_error("Expected NULL after ON in JSON_ARRAY")
            continue
        values.append(parser._parse_bitwise())
        parser._match(TokenType.COMMA)
    return exp.Anonymous(this="JSON_ARRAY", expressions=[exp.Literal.string(mode), *values])


def _json_parser(name: str) -> Callable[[Any], exp.Expr]:
    return lambda parser: parse_json_call(parser, name)


JSON_CALL_PARSERS: dict[str, Callable[[Any], exp.Expr]] = {
    **{name: _json_parser(name) for name in ("JSON_VALUE", "JSON_QUERY", "JSON_EXISTS")},
    "JSON_ARRAY": parse_json_array,
}
