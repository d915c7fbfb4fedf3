"""``MATCH_RECOGNIZE (…)`` in Flink's grammar (``FlinkSqlParserImpl``'s ``MatchRecognize``): sqlglot's clause order
— PARTITION BY, ORDER BY, MEASURES, ONE ROW PER MATCH, AFTER MATCH SKIP, PATTERN — plus Flink's
``WITHIN INTERVAL '…' unit`` after the pattern, then DEFINE. The PATTERN is kept as its text (read by
:func:`strom.table.runtime.match.pattern.parse_pattern`)."""

from __future__ import annotations

from typing import Any, ClassVar

from sqlglot import exp
from sqlglot.tokenizer_core import TokenType

__all__ = ["FlinkMatchRecognize", "match_recognize_sql", "parse_match_recognize"]


class FlinkMatchRecognize(exp.MatchRecognize):
    """sqlglot's node with Flink's ``within`` (an ``INTERVAL`` expression or None)."""

    arg_types: ClassVar[dict[str, bool]] = {**exp.MatchRecognize.arg_types, "within": False}


def _rows_per_match(parser: Any) -> exp.Expr | None:
    if parser._match_text_seq("ONE", "ROW", "PER", "MATCH"):
        return exp.var("ONE ROW PER MATCH")
    if parser._match_text_seq("ALL", "ROWS", "PER", "MATCH"):
        return exp.var("ALL ROWS PER MATCH")
    return None


def _after_match(parser: Any) -> exp.Expr | None:
    if not parser._match_text_seq("AFTER", "MATCH", "SKIP"):
        return None
    if parser._match_text_seq("PAST", "LAST", "ROW"):
        return exp.var("PAST LAST ROW")
    if parser._match_text_seq("TO", "NEXT", "ROW"):
        return exp.var("TO NEXT ROW")
    if parser._match_text_seq("TO", "FIRST") or parser._match_text_seq("TO", "LAST"):
        direction = parser._prev.text.upper()
        variable = parser._advance_any()
        if not variable:
            parser.raise_error(f"Expecting pattern variable after AFTER MATCH SKIP TO {direction}")
        return exp.var(f"TO {direction} {variable.text if variable else ''}")
    if parser._match_text_seq("TO"):
        variable = parser._advance_any()
        return exp.var(f"TO LAST {variable.text if variable else ''}")
    parser.raise_error("Expecting PAST LAST ROW, TO NEXT ROW, TO FIRST var or TO LAST var after AFTER MATCH SKIP")
    return None


def _pattern(parser: Any) -> exp.Expr | None:
    if not parser._match_text_seq("PATTERN"):
        return None
    parser._match_l_paren()
    if not parser._curr:
        parser.raise_error("Expecting )", parser._curr)
    depth, start, end = 1, parser._curr, parser._curr
    while parser._curr and depth > 0:
        if parser._curr.token_type == TokenType.L_PAREN:
            depth += 1
        if parser._curr.token_type == TokenType.R_PAREN:
            depth -= 1
        end = parser._prev
        parser._advance()
    if depth > 0:
        parser.raise_error("Expecting )", parser._curr)
    return exp.var(parser._find_sql(start, end))


def parse_match_recognize(parser: Any) -> exp.MatchRecognize | None:
    """The clause after ``FROM t`` (the parser stands on ``MATCH_RECOGNIZE``)."""
    if not parser._match(TokenType.MATCH_RECOGNIZE):
        return None
    parser._match_l_paren()
    partition = parser._parse_partition_by()
    order = parser._parse_order()
    measures = parser._parse_csv(parser._parse_match_recognize_measure) if parser._match_text_seq("MEASURES") else None
    rows = _rows_per_match(parser)
    after = _after_match(parser)
    pattern = _pattern(parser)
    within = parser._parse_interval() if parser._match_text_seq("WITHIN") else None
    define = parser._parse_csv(parser._parse_name_as_expression) if parser._match_text_seq("DEFINE") else None
    parser._match_r_paren()
    node: exp.MatchRecognize = parser.expression(
        FlinkMatchRecognize(
            partition_by=partition,
            order=order,
            measures=measures,
            rows=rows,
            after=after,
            pattern=pattern,
            within=within,
            define=define,
            alias=parser._parse_table_alias(),
        )
    )
    return node


def match_recognize_sql(generator: Any, expression: exp.Expr) -> str:
    """The clause as SQL text (sqlglot's, with ``WITHIN …`` before ``DEFINE``)."""
    text: str = generator.matchrecognize_sql(expression)
    within = expression.args.get("within")
    if within is None:
        return text
    clause = f"WITHIN {generator.sql(within)}"
    at = text.rfind("DEFINE")
    if at < 0:
        at = text.rfind(")")
    return f"{text[:at]}{clause} {text[at:]}"
