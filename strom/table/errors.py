"""The Table API's errors (PyFlink's ``pyflink.util.exceptions`` names).

All derive from :class:`strom.exceptions.StromError`::

    StromError
    ├── TableException              a Table API / SQL program cannot be planned or run as asked
    ├── ValidationException         a query or expression is invalid: unknown name, wrong argument types, …
    ├── SqlParserException          the SQL text cannot be parsed
    └── TableRuntimeException       an expression failed at run time (CAST('abc' AS INT), division by zero, …)

As in Flink they are siblings (none catches the others); each is also a ``ValueError``.

Messages follow *expected → got → hint*; the planner adds the position in the query (line:column).
"""

from __future__ import annotations

from strom.exceptions import StromError

__all__ = ["SqlParserException", "TableException", "TableRuntimeException", "ValidationException"]


class TableException(StromError, ValueError):
    """A Table API / SQL program cannot be planned or executed as written (Flink's ``TableException``)."""


class ValidationException(StromError, ValueError):
    """A query or expression failed validation (Flink's ``ValidationException``)."""


class SqlParserException(StromError, ValueError):
    """The SQL text could not be parsed (Flink's ``SqlParserException``)."""


class TableRuntimeException(StromError, ValueError):
    """An expression failed while the job ran: a CAST that cannot convert, an integer division by zero, …
    (Flink's ``TableRuntimeException``; ``TRY_CAST`` returns NULL instead)."""
