"""PyFlink's ``pyflink.common.watermark_strategy`` module path (re-exports; see :mod:`strom.api.eventtime`)."""

from strom.api.eventtime import TimestampAssigner, WatermarkStrategy
from strom.api.time import Duration

__all__ = ["Duration", "TimestampAssigner", "WatermarkStrategy"]
