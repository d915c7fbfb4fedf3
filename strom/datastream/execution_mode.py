"""PyFlink's ``pyflink.datastream.execution_mode`` module path (re-exports; see :mod:`strom.api.execution_mode`)."""

from strom.api.execution_mode import RuntimeExecutionMode

__all__ = ["RuntimeExecutionMode"]
