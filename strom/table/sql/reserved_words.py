"""Flink's reserved words (its SQL parser's ``Encountered "…"``) that sqlglot takes as an alias.

Flink 2.3's parser refuses a reserved word as an unquoted column or table alias (``SELECT m * m AS cube``):
``SQL parse failed. Encountered "cube" at line 1, column 73.`` sqlglot parses most of them as identifiers, so
:func:`refuse_reserved_aliases` checks the aliases of a parsed statement. The words are those PyFlink 2.3 refused
as ``SELECT v AS <word> FROM g`` (``tests/data/flink_sql/overagg_queries.py``, ``overagg_reserved_aliases.txt``);
the non-reserved words it took (``FIRST``, ``LAST``, ``KEY``, ``NAME``, ``TYPE``, ``DATA``, ``SESSION``, …) stay
aliases. A backtick-quoted word is an identifier, as in Flink.
"""

from __future__ import annotations

from sqlglot import exp

from strom.table.errors import SqlParserException

__all__ = ["RESERVED_WORDS", "refuse_reserved_aliases"]

_WORDS = """
    ABS ALL AND ANY ARRAY AS AT AVG BIGINT BINARY BIT BOOLEAN BOTH BY BYTES CALL CASE CAST CEIL CEILING CHAR
    CHARACTER CLASSIFIER CLOSE COALESCE COLLECT COMMENT CONTAINS COUNT CROSS CUBE CURRENT CURRENT_DATE
    CURRENT_TIME CURRENT_TIMESTAMP CURRENT_USER CURSOR DATE DAY DEC DECIMAL DEFAULT DEFINE DEREF DOUBLE ELEMENT
    ELSE END EQUALS ESCAPE EVERY EXISTS EXTERNAL FALSE FETCH FILTER FLOAT FLOOR FREE FROM FULL FUNCTION GLOBAL
    GROUP GROUPING HAVING HOLD HOUR IDENTITY IMPORT IN INNER INT INTEGER INTERVAL IS JOIN JSON_OBJECT JSON_VALUE
    LAG LANGUAGE LATERAL LEAD LEFT LIKE LIMIT LN LOCAL LOCALTIME LOCALTIMESTAMP LOWER MATCH MAX MEASURES MEMBER
    METHOD MIN MINUTE MOD MODULE MONTH MULTISET NATURAL NCHAR NEW NEXT NONE NOT NTILE NULL NULLIF NUMERIC
    OCCURRENCES_REGEX OFFSET OLD ON ONLY OPEN OR ORDER OUTER OVER OVERLAPS PARAMETER PARTITION PATTERN PERCENT
    PERIOD POSITION POWER PRECEDES PRECISION PREV PRIMARY RANGE RANK RAW REAL REFERENCES RESULT RETURNS REVOKE
    RIGHT ROLLUP ROW ROWS RUNNING SAVEPOINT SCOPE SCROLL SEARCH SECOND SEEK SELECT SENSITIVE SESSION_USER
    SIMILAR SKIP SMALLINT SOME SPECIFIC SQL START STATEMENT STRING SUBMULTISET SUBSTRING SUCCEEDS SUM SYMMETRIC
    SYSTEM SYSTEM_USER TABLE THEN TIME TIMESTAMP TINYINT TRANSLATE TREAT TRIGGER TRIM TRUE TRUNCATE UESCAPE
    UNION UNIQUE UNKNOWN UPPER UPSERT USER USING VALUE VALUES VARBINARY VARCHAR VAR_POP VERSIONING WHEN WHERE
    WIDTH_BUCKET WINDOW WITHIN WITHOUT YEAR
"""
RESERVED_WORDS = frozenset(_WORDS.split())


def refuse_reserved_aliases(sql: str, statement: exp.Expr) -> None:
    """Raise Flink's parse error for the first unquoted alias of ``statement`` that is a reserved word."""
    found: list[tuple[int, int, str]] = []
    for node in statement.find_all(exp.Alias, exp.TableAlias):
        identifier = node.args.get("alias") if isinstance(node, exp.Alias) else node.this
        if not isinstance(identifier, exp.Identifier) or identifier.quoted:
            continue
        if identifier.name.upper() not in RESERVED_WORDS or "start" not in identifier.meta:
            continue
        start, end = int(identifier.meta["start"]), int(identifier.meta["end"])
        found.append((start, end, sql[start : end + 1]))
    if not found:
        return
    start, _end, word = min(found)
    line = sql.count("\n", 0, start) + 1
    column = start - (sql.rfind("\n", 0, start) + 1) + 1
    raise SqlParserException(
        f'SQL parse failed. Encountered "{word}" at line {line}, column {column}.\n'
        f"Expected an identifier; got the reserved word {word.upper()}; "
        f"hint: quote it as `{word}` or choose another alias"
    )
