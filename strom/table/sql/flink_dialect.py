"""Flink SQL as a sqlglot ``Dialect``: the syntax of Flink's Calcite-based parser (``FlinkSqlParserImpl``).

sqlglot's base dialect parses most of Flink's queries; this dialect adds what Flink has and sqlglot's base lacks:
backtick-quoted identifiers, ``WATERMARK FOR ts AS expr`` and computed columns ``c AS expr`` in ``CREATE TABLE``,
``PRIMARY KEY (...) NOT ENFORCED``, ``WITH ('k' = 'v')`` table options, ``TABLE t`` arguments of table-valued
functions (``TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' SECOND))``, ``TABLE t PARTITION BY k`` of SESSION,
which is a function name here, not sqlglot's keyword), ``FOR SYSTEM_TIME AS OF`` and
Flink's ``INTERVAL`` forms (``INTERVAL '10' MINUTE(3)``, ``INTERVAL '1 10:00:00' DAY TO SECOND``).
"""

from __future__ import annotations

from typing import Any, ClassVar

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect, NormalizationStrategy
from sqlglot.generator import Generator
from sqlglot.parser import Parser
from sqlglot.tokenizer_core import TokenType
from sqlglot.tokens import Tokenizer

from strom.table.sql.flink_calls import JSON_CALL_PARSERS, PLAIN_CALLS
from strom.table.sql.match_recognize_parser import FlinkMatchRecognize, match_recognize_sql, parse_match_recognize

__all__ = ["Descriptor", "FlinkDialect", "FlinkType", "MetadataColumn", "PartitionedTable"]


class MetadataColumn(exp.Expression):
    """``METADATA [FROM 'key'] [VIRTUAL]`` of a column definition (``this``: the key or None)."""

    arg_types: ClassVar[dict[str, bool]] = {"this": False, "virtual": False}


class FlinkType(exp.Expression):
    """A data type as written (``this``: the text, e.g. ``ROW<a INT, b STRING> NOT NULL``), for
    :func:`strom.table.types.parse_type`: Flink's type grammar is richer than sqlglot's."""

    arg_types: ClassVar[dict[str, bool]] = {"this": True}


class Descriptor(exp.Expression):
    """``DESCRIPTOR(col, ...)``: the time attribute argument of a window table-valued function."""

    arg_types: ClassVar[dict[str, bool]] = {"expressions": True}


class PartitionedTable(exp.Expression):
    """``TABLE t PARTITION BY k, ...``: a table argument with its partition keys (of SESSION windows)."""

    arg_types: ClassVar[dict[str, bool]] = {"this": True, "expressions": True}


def _parse_descriptor(parser: Any) -> Descriptor:
    columns = parser._parse_csv(parser._parse_column)
    descriptor: Descriptor = parser.expression(Descriptor(expressions=columns))
    return descriptor


def _parse_watermark(parser: Any) -> exp.WatermarkColumnConstraint:
    column = parser._match(TokenType.FOR) and parser._parse_column()
    expression = parser._match(TokenType.ALIAS) and parser._parse_disjunction()
    watermark: exp.WatermarkColumnConstraint = parser.expression(
        exp.WatermarkColumnConstraint(this=column, expression=expression)
    )
    return watermark


class FlinkParser(Parser):
    """sqlglot's parser with Flink's additions (see the module docstring)."""

    CONSTRAINT_PARSERS: ClassVar[dict[str, Any]] = {
        **Parser.CONSTRAINT_PARSERS,
        "WATERMARK": _parse_watermark,
    }
    SCHEMA_UNNAMED_CONSTRAINTS: ClassVar[set[str]] = {*Parser.SCHEMA_UNNAMED_CONSTRAINTS, "WATERMARK"}
    FUNCTIONS: ClassVar[dict[str, Any]] = {**Parser.FUNCTIONS, **PLAIN_CALLS}
    FUNCTION_PARSERS: ClassVar[dict[str, Any]] = {
        **Parser.FUNCTION_PARSERS,
        **JSON_CALL_PARSERS,
        "DESCRIPTOR": _parse_descriptor,
        "CAST": lambda self: self._parse_flink_cast(safe=False),
        "TRY_CAST": lambda self: self._parse_flink_cast(safe=True),
    }
    _TYPE_END: ClassVar[frozenset[str]] = frozenset({"COMMENT", "METADATA", "PRIMARY", "VIRTUAL"})

    def _parse_flink_type(self) -> FlinkType:
        """The raw text of a type: tokens up to a ``,`` or ``)`` at depth 0 (or COMMENT / METADATA / PRIMARY)."""
        if self._curr is None:
            self.raise_error("Expected a data type")
        first = self._curr
        last = first
        depth = 0
        while self._curr is not None:
            token = self._curr
            if token.token_type in (TokenType.L_PAREN, TokenType.LT):
                depth += 1
            elif token.token_type in (TokenType.R_PAREN, TokenType.GT):
                if depth == 0:
                    break
                depth -= 1
            elif depth == 0 and (token.token_type == TokenType.COMMA or self._ends_type(token, first)):
                break
            last = token
            self._advance()
        text = self.sql[first.start : last.end + 1]
        return self.expression(FlinkType(this=text), first)

    def _parse_projections(self) -> tuple[list[exp.Expr], list[exp.Expr] | None]:
        # Flink refuses a trailing comma in the SELECT list (sqlglot's base dialect accepts it)
        first = self._parse_expression()
        items = [first] if first is not None else []
        while self._match(TokenType.COMMA):
            item = self._parse_expression()
            if item is None:
                near = self._curr.text if self._curr is not None else "end of input"
                self.raise_error(f"Incorrect syntax near the keyword '{near}'")
            else:
                items.append(item)
        return items, None

    def _ends_type(self, token: Any, first: Any) -> bool:
        return token is not first and token.text.upper() in self._TYPE_END

    def _parse_flink_cast(self, *, safe: bool) -> exp.Expr:
        this = self._parse_assignment()
        if not self._match(TokenType.ALIAS):
            self.raise_error("Expected AS after CAST")
        to = self._parse_flink_type()
        return self.expression(exp.Cast(this=this, to=to, safe=safe or None))

    def _parse_column_def(self, this: exp.Expr | None, computed_column: bool = True) -> exp.Expr | None:
        if isinstance(this, exp.Column):
            this = this.this
        if self._curr is None or self._curr.token_type in (TokenType.ALIAS, TokenType.COMMA, TokenType.R_PAREN):
            return super()._parse_column_def(this, computed_column)
        kind = self._parse_flink_type()
        constraints: list[exp.Expr] = []
        while self._curr is not None and self._curr.token_type not in (TokenType.COMMA, TokenType.R_PAREN):
            if self._match_text_seq("METADATA"):
                key = self._parse_string() if self._match(TokenType.FROM) else None
                virtual = self._match_text_seq("VIRTUAL")
                constraints.append(self.expression(MetadataColumn(this=key, virtual=virtual)))
                continue
            constraint = self._parse_column_constraint()
            if constraint is None:
                break
            constraints.append(constraint)
        return self.expression(exp.ColumnDef(this=this, kind=kind, constraints=constraints))

    LAMBDAS: ClassVar[dict[TokenType, Any]] = {
        **Parser.LAMBDAS,
        TokenType.FARROW: lambda self, expressions: self.expression(
            exp.Kwarg(this=exp.var(expressions[0].name), expression=self._parse_table_argument())
        ),
    }

    def _parse_table_argument(self) -> exp.Expr | None:
        """``TABLE t`` (a table argument of a table-valued function) or an ordinary argument."""
        if self._curr and self._curr.token_type == TokenType.TABLE and self._next.token_type != TokenType.L_PAREN:
            self._advance()
            table = self._parse_table_parts()
            if self._match(TokenType.PARTITION_BY) or self._match_text_seq("PARTITION", "BY"):
                wrapped = self._match(TokenType.L_PAREN, advance=False)
                keys = self._parse_wrapped_csv(self._parse_column) if wrapped else [self._parse_column()]
                return self.expression(PartitionedTable(this=table, expressions=keys))
            return table
        return self._parse_disjunction() or self._parse_select()

    def _parse_match_recognize(self) -> exp.MatchRecognize | None:
        return parse_match_recognize(self)

    def _parse_lambda(self, alias: bool = False) -> exp.Expr | None:
        if self._curr and self._curr.token_type == TokenType.TABLE and self._next.token_type != TokenType.L_PAREN:
            return self._parse_table_argument()
        return super()._parse_lambda(alias=alias)


class FlinkTokenizer(Tokenizer):
    IDENTIFIERS: ClassVar[list[str | tuple[str, str]]] = ["`"]
    QUOTES: ClassVar[list[str | tuple[str, str]]] = ["'"]
    STRING_ESCAPES: ClassVar[list[str]] = ["'"]
    KEYWORDS: ClassVar[dict[str, TokenType]] = {
        **Tokenizer.KEYWORDS,
        "STRING": TokenType.TEXT,
        "BYTES": TokenType.VARBINARY,
        "SESSION": TokenType.VAR,
        "MATCH_RECOGNIZE": TokenType.MATCH_RECOGNIZE,
    }


def _descriptor_sql(generator: Generator, expression: exp.Expr) -> str:
    return f"DESCRIPTOR({generator.expressions(expression, flat=True)})"


def _partitioned_table_sql(generator: Generator, expression: exp.Expr) -> str:
    keys = generator.expressions(expression, flat=True)
    keys = f"({keys})" if len(expression.expressions) > 1 else keys
    return f"TABLE {generator.sql(expression, 'this')} PARTITION BY {keys}"


def _flink_type_sql(generator: Generator, expression: exp.Expr) -> str:
    return str(expression.this)


class FlinkGenerator(Generator):
    TRANSFORMS: ClassVar[dict[type[exp.Expr], Any]] = {
        **Generator.TRANSFORMS,
        Descriptor: _descriptor_sql,
        FlinkType: _flink_type_sql,
        PartitionedTable: _partitioned_table_sql,
        FlinkMatchRecognize: match_recognize_sql,
    }


class FlinkDialect(Dialect):
    """Flink SQL (``sqlglot.parse_one(sql, read=FlinkDialect)``)."""

    NORMALIZATION_STRATEGY = NormalizationStrategy.CASE_SENSITIVE
    Tokenizer = FlinkTokenizer
    Parser = FlinkParser
    Generator = FlinkGenerator
