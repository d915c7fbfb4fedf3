"""PyFlink's ``pyflink.common.execution_config`` module path (re-exports; see :mod:`strom.api.execution_config`)."""

from strom.api.execution_config import ExecutionConfig

__all__ = ["ExecutionConfig"]
