"""PyFlink's ``pyflink.datastream.output_tag`` module path (re-exports; see :mod:`strom.api.output_tag`)."""

from strom.api.output_tag import OutputTag

__all__ = ["OutputTag"]
