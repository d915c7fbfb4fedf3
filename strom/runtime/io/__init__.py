"""A task's input side (Flink's ``org.apache.flink.streaming.runtime.io``): what a task with inputs reads, and how.

- :mod:`~strom.runtime.io.checkpointing` — ``CheckpointedInputGate`` (an input gate with its barrier handler: block
  and unblock, alignment timing, unaligned input channel state, abort) and the pure barrier handlers
  (``BarrierAligner``, Flink's ``SingleCheckpointBarrierHandler``; ``BarrierTracker``, Flink's
  ``CheckpointBarrierTracker``).
- ``stream_input_processor`` — ``StreamInputProcessor``, the task's default action; its implementations
  ``stream_one_input_processor.StreamOneInputProcessor`` and
  ``stream_multiple_input_processor.StreamMultipleInputProcessor`` (N inputs; a two-input task is N = 2).
- ``stream_task_network_input`` — ``StreamTaskNetworkInput``: one input's watermark valve and output.
- ``data_output`` — ``DataOutput`` (Flink's ``PushingAsyncDataInput.DataOutput``): the head operator's methods an
  input pushes into.

The ``StatusWatermarkValve`` stays where Flink keeps it, outside ``io``: :mod:`strom.runtime.watermark` (Flink's
``streaming.runtime.watermarkstatus``).
"""
