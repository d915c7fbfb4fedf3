"""Flink's ``SqlParser`` front: SQL text → sqlglot statements in the Flink dialect, with Flink's errors.

A statement that does not parse raises :class:`~strom.table.errors.SqlParserException` naming the line and
column (1-based, as Flink's ``SQL parse failed. Encountered "," at line 1, column 10``) and what was expected.
:func:`position` gives the ``line:column`` of any node of a parsed statement, so validation errors name it too.
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from strom.table.errors import SqlParserException
from strom.table.sql.flink_dialect import FlinkDialect
from strom.table.sql.reserved_words import refuse_reserved_aliases

__all__ = ["at", "parse_expression", "parse_statement", "parse_statements", "position"]


def parse_statements(sql: str) -> list[exp.Expr]:
    """Every ``;``-separated statement of ``sql`` (empty ones skipped)."""
    try:
        statements = sqlglot.parse(sql, read=FlinkDialect)
    except ParseError as err:
        raise _parser_exception(sql, err) from None
    except TokenError as err:
        raise SqlParserException(f"SQL parse failed. {err}; hint: check the quotes and backticks") from None
    parsed = [s for s in statements if s is not None]
    for statement in parsed:
        refuse_reserved_aliases(sql, statement)
    return parsed


def parse_statement(sql: str) -> exp.Expr:
    """Exactly one statement (Flink's ``execute_sql`` / ``sql_query`` take one)."""
    statements = parse_statements(sql)
    if len(statements) != 1:
        raise SqlParserException(
            f"SQL parse failed. Expected exactly one statement; got {len(statements)}; "
            "hint: run several statements with a StatementSet or one execute_sql call each"
        )
    return statements[0]


def parse_expression(text: str) -> exp.Expr:
    """A scalar SQL expression (the Table API's string expressions, computed columns)."""
    try:
        return sqlglot.parse_one(text, read=FlinkDialect, into=exp.Condition)
    except ParseError as err:
        raise _parser_exception(text, err) from None


def _parser_exception(sql: str, err: ParseError) -> SqlParserException:
    info = err.errors[0] if err.errors else {}
    line, col = info.get("line"), info.get("col")
    description = str(info.get("description") or err).split("\n")[0]
    highlight = info.get("highlight")
    where = f" at line {line}, column {_start_column(sql, line, col, highlight)}" if line is not None else ""
    encountered = f'Encountered "{highlight}"' if highlight else "Unexpected input"
    return SqlParserException(f"SQL parse failed. {encountered}{where}: {description}")


def _start_column(sql: str, line: int, col: int | None, highlight: str | None) -> int:
    """sqlglot reports the column of a token's last character; Flink the first."""
    if col is None:
        return 1
    if highlight:
        return max(1, col - len(highlight) + 1)
    return col


def position(node: exp.Expr | None) -> str:
    """``line L, column C`` of a parsed node (of its first identifier), or ``''`` when unknown."""
    if node is None:
        return ""
    for candidate in (node, *node.find_all(exp.Identifier, exp.Literal)):
        meta = candidate.meta if hasattr(candidate, "meta") else None
        if meta and "line" in meta and "col" in meta:
            start = int(meta["col"]) - len(str(getattr(candidate, "this", ""))) + 1
            if isinstance(candidate, exp.Identifier) and candidate.quoted:
                start -= 1
            if isinstance(candidate, exp.Literal) and candidate.is_string:
                start -= 1
            return f"line {meta['line']}, column {max(1, start)}"
    return ""


def at(node: exp.Expr | None) -> str:
    """`` at line L, column C`` for an error message (empty when unknown)."""
    where = position(node)
    return f" at {where}" if where else ""
