"""BATCH physical operators on Arrow record batches (Flink's ``BatchExecHashAggregate`` local/global,
``BatchExecHashJoin``, a columnar ``Calc`` and a Parquet scan of Arrow batches); planned by
:mod:`strom.table.planner.batch_physical`."""
