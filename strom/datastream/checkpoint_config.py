"""PyFlink's ``pyflink.datastream.checkpoint_config`` module path
(re-exports; see :mod:`strom.api.checkpoint_config`)."""

from strom.api.checkpoint_config import CheckpointConfig

__all__ = ["CheckpointConfig"]
