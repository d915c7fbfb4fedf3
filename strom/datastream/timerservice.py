"""PyFlink's ``pyflink.datastream.timerservice`` module path (re-exports; see :mod:`strom.api.functions`)."""

from strom.api.functions import TimerService

__all__ = ["TimerService"]
