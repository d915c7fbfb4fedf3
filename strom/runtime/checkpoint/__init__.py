"""Checkpoints and savepoints: storage layout and metadata (``storage``, ``metadata``), coordination and
barrier handling (Flink's ``org.apache.flink.runtime.checkpoint``)."""
