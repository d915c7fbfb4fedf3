"""JDBC statements on psycopg: ``?`` placeholders become ``%s``, records become parameter tuples, and a batch
that the database refuses is searched for the record it refuses (under a savepoint, so the transaction lives on
long enough to name it).

    >>> psycopg_sql("INSERT INTO t (a, b) VALUES (?, ?) -- 'why?'")
    "INSERT INTO t (a, b) VALUES (%s, %s) -- 'why?'"
    >>> psycopg_sql("SELECT '50%', ? WHERE x = 'a?b'")
    "SELECT '50%%', %s WHERE x = 'a?b'"
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from strom.api.row import Row
from strom.exceptions import ConnectorError
from strom.runtime.streamrecord import short_repr

__all__ = ["execute_batch", "parameters_of", "psycopg_sql"]


def psycopg_sql(sql: str) -> str:
    """``sql`` with JDBC's ``?`` placeholders as psycopg's ``%s`` (``%`` escaped), outside quotes and comments."""
    out: list[str] = []
    quote: str | None = None
    i, n = 0, len(sql)
    while i < n:
        c = sql[i]
        if quote is not None:
            out.append("%%" if c == "%" else c)
            if c == quote:
                quote = None
        elif c in ("'", '"'):
            quote = c
            out.append(c)
        elif c == "-" and sql.startswith("--", i):
            end = sql.find("\n", i)
            end = n if end < 0 else end
            out.append(sql[i:end].replace("%", "%%"))
            i = end
            continue
        elif c == "?":
            out.append("%s")
        elif c == "%":
            out.append("%%")
        else:
            out.append(c)
        i += 1
    return "".join(out)


def parameters_of(record: Any, arity: int) -> Sequence[Any]:
    """A record's statement parameters: a ``Row``, tuple or list with one value per ``?``."""
    if isinstance(record, Row):
        values: Sequence[Any] = tuple(record)
    elif isinstance(record, tuple | list):
        values = record
    else:
        raise TypeError(f"expected a Row, tuple or list of {arity} values for the statement; got {short_repr(record)}")
    if len(values) != arity:
        raise TypeError(f"expected {arity} values for the statement's {arity} placeholders; got {short_repr(record)}")
    return values


def execute_batch(cursor: Any, sql: str, records: list[Any], arity: int, what: str) -> None:
    """Run ``sql`` once per record in the cursor's transaction. A refused batch (a value that does not fit a
    column, a constraint) is narrowed down to its first refused record, which the :class:`ConnectorError`
    names; the transaction is rolled back to before the batch."""
    import psycopg

    try:
        params = [parameters_of(r, arity) for r in records]
    except TypeError as exc:
        raise ConnectorError(f"{what}: {exc}; hint: map the stream to tuples in the order of the statement") from None
    cursor.execute("SAVEPOINT strom_batch")
    try:
        cursor.executemany(sql, params)
    except (psycopg.DataError, psycopg.IntegrityError, psycopg.ProgrammingError) as exc:
        cursor.execute("ROLLBACK TO SAVEPOINT strom_batch")
        bad, error = _first_refused(cursor, sql, records, params, exc)
        cursor.execute("ROLLBACK TO SAVEPOINT strom_batch")
        reason = " ".join(str(error).split())
        raise ConnectorError(
            f"expected the database to accept the record {short_repr(bad)} ({what}); got "
            f"{type(error).__name__}: {reason}; hint: fix the record upstream (a value that does not fit its "
            "column, a violated constraint) or the statement"
        ) from error
    cursor.execute("RELEASE SAVEPOINT strom_batch")


def _first_refused(
    cursor: Any, sql: str, records: list[Any], params: list[Sequence[Any]], first: Exception
) -> tuple[Any, Exception]:
    import psycopg

    for record, p in zip(records, params, strict=True):
        cursor.execute("SAVEPOINT strom_one")
        try:
            cursor.execute(sql, p)
        except psycopg.Error as exc:
            cursor.execute("ROLLBACK TO SAVEPOINT strom_one")
            return record, exc
        cursor.execute("RELEASE SAVEPOINT strom_one")
    return records[0] if records else None, first
