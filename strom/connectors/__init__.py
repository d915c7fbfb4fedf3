"""Connectors: sources and sinks for external systems."""

from strom.connectors.collection import CollectionSource
from strom.connectors.number_sequence import NumberSequenceSource

__all__ = ["CollectionSource", "NumberSequenceSource"]
