"""PyFlink's ``pyflink.datastream.state_backend`` module path (re-exports; see :mod:`strom.api.state_backend`)."""

from strom.api.state_backend import EmbeddedRocksDBStateBackend, HashMapStateBackend, StateBackend

__all__ = ["EmbeddedRocksDBStateBackend", "HashMapStateBackend", "StateBackend"]
