"""PyFlink's ``pyflink.common.time`` module path (re-exports; see :mod:`strom.api.time`)."""

from strom.api.time import Duration, Instant, Time

__all__ = ["Duration", "Instant", "Time"]
