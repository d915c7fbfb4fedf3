"""Where the Redis server is (``RedisConnectionOptions``: a ``redis://`` URL or host and port) and the client of
the Redis Streams connector (redis-py, an optional dependency: ``pip install 'strom[redis]'``).

    >>> RedisConnectionOptions.from_url("redis://127.0.0.1:6380/2").describe()
    'redis://127.0.0.1:6380/2'
"""

from __future__ import annotations

import urllib.parse
from dataclasses import dataclass
from typing import Any

from strom.exceptions import ConnectorError, InvalidProgramError

__all__ = ["RedisConnectionOptions", "connect", "redis_module"]


@dataclass(frozen=True)
class RedisConnectionOptions:
    host: str = "127.0.0.1"
    port: int = 6379
    db: int = 0
    username: str | None = None
    password: str | None = None
    socket_timeout_s: float = 30.0

    def __post_init__(self) -> None:
        if not isinstance(self.host, str) or not self.host:
            raise InvalidProgramError(f"expected a Redis host name; got {self.host!r}; hint: '127.0.0.1'")
        if isinstance(self.port, bool) or not isinstance(self.port, int) or not 0 < self.port < 65536:
            raise InvalidProgramError(f"expected a Redis port (1 to 65535); got {self.port!r}; hint: 6379")

    @staticmethod
    def from_url(url: str) -> RedisConnectionOptions:
        """``redis://[user:password@]host[:port][/db]``."""
        parsed = urllib.parse.urlsplit(url) if isinstance(url, str) else None
        if parsed is None or parsed.scheme != "redis" or not parsed.hostname:
            raise InvalidProgramError(
                f"expected a Redis URL 'redis://host[:port][/db]'; got {url!r:.80}; hint: redis://127.0.0.1:6379/0"
            )
        db = parsed.path.lstrip("/")
        return RedisConnectionOptions(
            host=parsed.hostname,
            port=parsed.port or 6379,
            db=int(db) if db.isdigit() else 0,
            username=urllib.parse.unquote(parsed.username) if parsed.username else None,
            password=urllib.parse.unquote(parsed.password) if parsed.password else None,
        )

    def describe(self) -> str:
        """The server's URL without credentials, for messages."""
        return f"redis://{self.host}:{self.port}/{self.db}"


def redis_module() -> Any:
    try:
        import redis
    except ImportError:
        raise ConnectorError(
            "expected the package redis for the Redis Streams connector; it is not installed; "
            "hint: pip install 'strom[redis]'"
        ) from None
    return redis


def connect(options: RedisConnectionOptions, *, what: str) -> Any:
    """A client that answered a PING, or a clear error naming the server."""
    redis = redis_module()
    client = redis.Redis(
        host=options.host,
        port=options.port,
        db=options.db,
        username=options.username,
        password=options.password,
        socket_timeout=options.socket_timeout_s,
        socket_connect_timeout=options.socket_timeout_s,
        decode_responses=True,
    )
    try:
        client.ping()
    except redis.RedisError as exc:
        client.close()
        raise ConnectorError(
            f"expected to reach Redis at {options.describe()} ({what}); got {type(exc).__name__}: {exc}; "
            "hint: check that redis-server runs there; the job's restart strategy retries"
        ) from exc
    return client
