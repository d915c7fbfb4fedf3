"""PyFlink's ``pyflink.common.types`` module path (re-exports; see :mod:`strom.api.row`)."""

from strom.api.row import Row, RowKind

__all__ = ["Row", "RowKind"]
