"""The job of the JobManager soak (``tests/e2e/test_jobmanager_soak.py`` and ``benchmarks/jobmanager_soak.py``):
``soak.py CHECKPOINT_DIR`` — a keyed reduce over an endless generator at 500 records/s, checkpointing every 10 ms
without pause. Importable from every test directory and, by path, from the benchmarks."""

from __future__ import annotations

import textwrap

__all__ = ["JOB"]

JOB = textwrap.dedent(
    """
    import sys
    from strom import CheckpointingMode, DataGeneratorSource, StreamExecutionEnvironment

    env = StreamExecutionEnvironment.get_execution_environment()
    env.enable_checkpointing(10, CheckpointingMode.EXACTLY_ONCE)
    env.get_checkpoint_config().set_min_pause_between_checkpoints(0)
    env.get_checkpoint_config().set_checkpoint_storage("file://" + sys.argv[1])
    (
        env.from_source(DataGeneratorSource(lambda i: (i % 100, i), 10**12, records_per_second=500), None, "gen")
        .key_by(lambda e: e[0])
        .reduce(lambda a, b: (a[0], a[1] + b[1]))
        .add_sink(lambda _: None)
    )
    env.execute("soak")
    """
)
