"""PyFlink's ``pyflink.datastream.externalized_checkpoint_retention`` module path
(re-exports; see :mod:`strom.api.checkpoint_config`)."""

from strom.api.checkpoint_config import ExternalizedCheckpointRetention

__all__ = ["ExternalizedCheckpointRetention"]
