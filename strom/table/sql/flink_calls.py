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

from sqlglot import exp

__all__ = ["PLAIN_CALLS", "flink_call"]

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
    special = _SPECIAL.get(type(node))
    if special is not None:
        return special(node)
    if isinstance(node, exp.Anonymous) and str(node.this).upper() in _UNIT_FIRST and node.expressions:
        return str(node.this).upper(), [_unit(node.expressions[0]), *node.expressions[1:]]
    if isinstance(node, exp.Anonymous) and str(node.this).upper() == "JSON_ARRAY":  # ABSENT ON NULL: Flink's default
        return "JSON_ARRAY", [exp.Literal.string("ABSENT"), *node.expressions]
    return None
