"""The JDBC connector's options, with Flink's and PyFlink's names: ``JdbcConnectionOptions`` (a JDBC URL and
credentials), ``JdbcExecutionOptions`` (batch size, batch interval, retries) and ``JdbcExactlyOnceOptions``.

strom speaks to PostgreSQL through psycopg 3, so the URL is PostgreSQL's JDBC URL,
``jdbc:postgresql://host[:port]/database[?key=value&...]``, turned into a libpq connection string:

    >>> JdbcConnectionOptions.JdbcConnectionOptionsBuilder().with_url(
    ...     "jdbc:postgresql://127.0.0.1:5433/shop?sslmode=disable").with_user_name("app").build().conninfo()
    "host='127.0.0.1' port='5433' dbname='shop' sslmode='disable' user='app' connect_timeout='60'"
"""

from __future__ import annotations

import urllib.parse
from dataclasses import dataclass, field, replace
from typing import Any

from strom.exceptions import InvalidProgramError

__all__ = ["JdbcConnectionOptions", "JdbcExactlyOnceOptions", "JdbcExecutionOptions"]

_PREFIX = "jdbc:postgresql:"


def _quote(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


@dataclass(frozen=True)
class JdbcConnectionOptions:
    """Where the database is (Flink's ``JdbcConnectionOptions``). ``driver_name`` is accepted for PyFlink's
    programs (``org.postgresql.Driver``) and otherwise unused: psycopg is the driver."""

    url: str
    driver_name: str = "org.postgresql.Driver"
    user_name: str | None = None
    password: str | None = None
    connection_check_timeout_seconds: int = 60

    def __post_init__(self) -> None:
        parse_url(self.url)

    def conninfo(self) -> str:
        """The libpq connection string psycopg opens."""
        params = parse_url(self.url)
        if self.user_name is not None:
            params["user"] = self.user_name
        if self.password is not None:
            params["password"] = self.password
        params.setdefault("connect_timeout", str(self.connection_check_timeout_seconds))
        return " ".join(f"{k}={_quote(v)}" for k, v in params.items())

    def describe(self) -> str:
        """The URL without credentials, for messages."""
        return self.url.split("?", 1)[0]

    def get_db_url(self) -> str:
        return self.url

    def get_driver_name(self) -> str:
        return self.driver_name

    def get_user_name(self) -> str | None:
        return self.user_name

    def get_password(self) -> str | None:
        return self.password

    def get_connection_check_timeout_seconds(self) -> int:
        return self.connection_check_timeout_seconds

    class JdbcConnectionOptionsBuilder:
        """PyFlink's ``JdbcConnectionOptions.JdbcConnectionOptionsBuilder``."""

        def __init__(self) -> None:
            self._fields: dict[str, Any] = {}

        def with_url(self, url: str) -> JdbcConnectionOptions.JdbcConnectionOptionsBuilder:
            self._fields["url"] = url
            return self

        def with_driver_name(self, driver_name: str) -> JdbcConnectionOptions.JdbcConnectionOptionsBuilder:
            self._fields["driver_name"] = driver_name
            return self

        def with_user_name(self, user_name: str) -> JdbcConnectionOptions.JdbcConnectionOptionsBuilder:
            self._fields["user_name"] = user_name
            return self

        def with_password(self, password: str) -> JdbcConnectionOptions.JdbcConnectionOptionsBuilder:
            self._fields["password"] = password
            return self

        def with_connection_check_timeout_seconds(
            self, seconds: int
        ) -> JdbcConnectionOptions.JdbcConnectionOptionsBuilder:
            self._fields["connection_check_timeout_seconds"] = seconds
            return self

        def build(self) -> JdbcConnectionOptions:
            if "url" not in self._fields:
                raise InvalidProgramError(
                    "expected a JDBC URL for JdbcConnectionOptions; got none; "
                    "hint: .with_url('jdbc:postgresql://127.0.0.1:5432/mydb')"
                )
            return JdbcConnectionOptions(**self._fields)


def parse_url(url: object) -> dict[str, str]:
    """``jdbc:postgresql://host:port/db?k=v`` → libpq parameters; anything else is refused with a hint."""
    if not isinstance(url, str) or not url.startswith(_PREFIX):
        raise InvalidProgramError(
            f"expected a PostgreSQL JDBC URL 'jdbc:postgresql://host[:port]/database'; got {url!r:.80}; "
            "hint: strom's JDBC connector speaks to PostgreSQL (psycopg); other databases are not supported yet"
        )
    parsed = urllib.parse.urlsplit(url[len("jdbc:") :])
    database = parsed.path.lstrip("/")
    if not parsed.hostname or not database:
        raise InvalidProgramError(
            f"expected a host and a database in the JDBC URL; got {url!r:.80}; "
            "hint: jdbc:postgresql://127.0.0.1:5432/mydb"
        )
    params = {"host": parsed.hostname}
    if parsed.port is not None:
        params["port"] = str(parsed.port)
    params["dbname"] = urllib.parse.unquote(database)
    for key, value in urllib.parse.parse_qsl(parsed.query):
        params[{"ssl": "sslmode"}.get(key, key)] = value
    return params


@dataclass(frozen=True)
class JdbcExecutionOptions:
    """How the sink writes (Flink's ``JdbcExecutionOptions``): records are sent in batches of ``batch_size``,
    at least every ``batch_interval_ms`` (0: only by size and at checkpoints), a batch that fails on a lost
    connection is sent again up to ``max_retries`` times (at-least-once sink)."""

    batch_interval_ms: int = 0
    batch_size: int = 5000
    max_retries: int = 3

    def __post_init__(self) -> None:
        for name, low in (("batch_interval_ms", 0), ("batch_size", 1), ("max_retries", 0)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise InvalidProgramError(
                    f"expected {name} of JdbcExecutionOptions to be an int of at least {low}; got {value!r}; "
                    "hint: JdbcExecutionOptions.builder().with_batch_size(1000).with_batch_interval_ms(200)"
                )

    @staticmethod
    def defaults() -> JdbcExecutionOptions:
        return JdbcExecutionOptions()

    @staticmethod
    def builder() -> JdbcExecutionOptions.Builder:
        return JdbcExecutionOptions.Builder()

    def get_batch_interval_ms(self) -> int:
        return self.batch_interval_ms

    def get_batch_size(self) -> int:
        return self.batch_size

    def get_max_retries(self) -> int:
        return self.max_retries

    @dataclass
    class Builder:
        options: JdbcExecutionOptions = field(default_factory=lambda: JdbcExecutionOptions())

        def with_batch_size(self, size: int) -> JdbcExecutionOptions.Builder:
            self.options = replace(self.options, batch_size=size)
            return self

        def with_batch_interval_ms(self, interval_ms: int) -> JdbcExecutionOptions.Builder:
            self.options = replace(self.options, batch_interval_ms=interval_ms)
            return self

        def with_max_retries(self, max_retries: int) -> JdbcExecutionOptions.Builder:
            self.options = replace(self.options, max_retries=max_retries)
            return self

        def build(self) -> JdbcExecutionOptions:
            return self.options


@dataclass(frozen=True)
class JdbcExactlyOnceOptions:
    """The exactly-once sink's options (Flink's ``JdbcExactlyOnceOptions``, strom's subset).

    ``transaction_id_prefix`` starts the id of every prepared transaction (``PREPARE TRANSACTION``): it must be
    unique among the jobs that write to one database, as a restarted job commits or rolls back the prepared
    transactions under its prefix. ``max_commit_attempts`` bounds ``COMMIT PREPARED`` attempts on a lost
    connection before the job fails (and retries from its checkpoint). ``discover_and_rollback_on_recovery``
    rolls back, when a subtask starts, the prepared transactions a failed attempt left behind that no completed
    checkpoint covers."""

    transaction_id_prefix: str = "strom"
    max_commit_attempts: int = 3
    discover_and_rollback_on_recovery: bool = True

    def __post_init__(self) -> None:
        prefix = self.transaction_id_prefix
        if not isinstance(prefix, str) or not prefix or len(prefix) > 64 or ":" in prefix:
            raise InvalidProgramError(
                f"expected a transaction_id_prefix of 1 to 64 characters without ':'; got {prefix!r}; "
                "hint: JdbcExactlyOnceOptions(transaction_id_prefix='orders-job')"
            )
        if (
            isinstance(self.max_commit_attempts, bool)
            or not isinstance(self.max_commit_attempts, int)
            or (self.max_commit_attempts < 1)
        ):
            raise InvalidProgramError(
                f"expected max_commit_attempts of at least 1; got {self.max_commit_attempts!r}; hint: 3"
            )

    @staticmethod
    def defaults() -> JdbcExactlyOnceOptions:
        return JdbcExactlyOnceOptions()

    @staticmethod
    def builder() -> JdbcExactlyOnceOptions.Builder:
        return JdbcExactlyOnceOptions.Builder()

    @dataclass
    class Builder:
        options: JdbcExactlyOnceOptions = field(default_factory=lambda: JdbcExactlyOnceOptions())

        def with_transaction_id_prefix(self, prefix: str) -> JdbcExactlyOnceOptions.Builder:
            self.options = replace(self.options, transaction_id_prefix=prefix)
            return self

        def with_max_commit_attempts(self, attempts: int) -> JdbcExactlyOnceOptions.Builder:
            self.options = replace(self.options, max_commit_attempts=attempts)
            return self

        def with_recovered_and_rollback(self, recover: bool) -> JdbcExactlyOnceOptions.Builder:
            self.options = replace(self.options, discover_and_rollback_on_recovery=recover)
            return self

        def build(self) -> JdbcExactlyOnceOptions:
            return self.options
