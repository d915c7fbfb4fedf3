"""Checkpoint barriers on a task's input (Flink's ``org.apache.flink.streaming.runtime.io.checkpointing``): the pure
barrier handlers (``barrier_handler``) and the ``CheckpointedInputGate`` that carries out their actions."""
