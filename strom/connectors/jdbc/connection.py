"""The psycopg connections of the JDBC connector: the module itself (an optional dependency, with a hint when
missing) and a connection in autocommit mode with a clear error when the server cannot be reached."""

from __future__ import annotations

from typing import Any

from strom.connectors.jdbc.options import JdbcConnectionOptions
from strom.exceptions import ConnectorError

__all__ = ["connect", "psycopg_module"]


def psycopg_module() -> Any:
    try:
        import psycopg
    except ImportError:
        raise ConnectorError(
            "expected the package psycopg for the JDBC connector; it is not installed; hint: pip install 'strom[jdbc]'"
        ) from None
    return psycopg


def connect(options: JdbcConnectionOptions, *, what: str) -> Any:
    """A psycopg connection in autocommit mode (transactions are begun explicitly), or a clear error."""
    psycopg = psycopg_module()
    try:
        return psycopg.connect(options.conninfo(), autocommit=True)
    except psycopg.OperationalError as exc:
        raise ConnectorError(
            f"expected to reach PostgreSQL at {options.describe()} ({what}); got {str(exc).strip()}; "
            "hint: check that the server runs and accepts this user; the job's restart strategy retries"
        ) from exc
