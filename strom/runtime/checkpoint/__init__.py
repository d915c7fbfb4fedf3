"""Checkpoints and savepoints: storage layout and metadata (``storage``, ``metadata``) and coordination
(Flink's ``org.apache.flink.runtime.checkpoint``). A task's barrier handling is in
:mod:`strom.runtime.io.checkpointing`."""
