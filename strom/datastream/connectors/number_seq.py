"""PyFlink's ``pyflink.datastream.connectors.number_seq`` module path (re-exports; see
:mod:`strom.connectors.number_sequence`)."""

from strom.connectors.number_sequence import NumberSequenceSource

__all__ = ["NumberSequenceSource"]
