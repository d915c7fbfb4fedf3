"""``logging.level``: the Python logging level of strom's own records, in the client as in the TaskManagers.

Flink's client and TaskManagers log through their own log4j configuration, never into the program's output. strom's
counterpart: the ``strom`` logger of every process follows ``logging.level`` (default WARNING), whatever the root
logger's level, so a program that starts with ``logging.basicConfig(stream=sys.stdout, level=logging.INFO)`` (as
PyFlink's examples do) prints nothing of strom's but what a print sink prints.
"""

from __future__ import annotations

import logging

from strom.config import ClusterOptions, Configuration
from strom.exceptions import ConfigurationError

__all__ = ["configure_client_logging", "logging_level"]


def logging_level(config: Configuration) -> int:
    """``logging.level`` as a :mod:`logging` level number."""
    raw = config.get(ClusterOptions.LOGGING_LEVEL)
    level = logging.getLevelName(raw.strip().upper())
    if not isinstance(level, int):
        raise ConfigurationError(
            f"expected DEBUG, INFO, WARNING, ERROR or CRITICAL for {ClusterOptions.LOGGING_LEVEL.key}; got {raw!r}; "
            f"hint: the default is {ClusterOptions.LOGGING_LEVEL.default}"
        )
    return level


def configure_client_logging(config: Configuration) -> None:
    """Give the client's ``strom`` logger the level of ``logging.level`` (an environment or a cluster is made).

    A level the program gave the ``strom`` logger itself (``logging.getLogger("strom").setLevel(...)``) stays unless
    ``logging.level`` is set explicitly. With no logging set up at all (no handler anywhere, so Python would print
    WARNING and above only), an explicit level gets a handler on stderr."""
    strom_log = logging.getLogger("strom")
    explicit = config.contains(ClusterOptions.LOGGING_LEVEL)
    if explicit or strom_log.level == logging.NOTSET:
        strom_log.setLevel(logging_level(config))
    if explicit and not logging.getLogger().handlers and not strom_log.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        strom_log.addHandler(handler)
