"""PyFlink's ``pyflink.datastream.checkpointing_mode`` module path
(re-exports; see :mod:`strom.api.checkpoint_config`)."""

from strom.api.checkpoint_config import CheckpointingMode

__all__ = ["CheckpointingMode"]
