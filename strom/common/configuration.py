"""PyFlink's ``pyflink.common.configuration`` module path (re-exports; see :mod:`strom.config`)."""

from strom.config import Configuration

__all__ = ["Configuration"]
