"""The client side: how a program's job reaches a cluster, and the handle the program gets on it.

Flink's ``flink-clients`` and ``core.execution``:

- :mod:`~strom.client.pipeline_executor`: ``PipelineExecutor`` / ``PipelineExecutorFactory``;
- :mod:`~strom.client.executor_service_loader`: ``PipelineExecutorServiceLoader``, the factory ``execution.target``
  names (``local``, ``spark``, ``remote``);
- :mod:`~strom.client.local_executor` (an embedded MiniCluster), :mod:`~strom.client.spark_executor` (TaskManagers
  hosted by Spark) — both :mod:`~strom.client.job_cluster_executor` (a cluster per job) —, and
  :mod:`~strom.client.remote_executor` (REST to a running cluster);
- :mod:`~strom.client.job_client`: ``JobClient``, ``JobExecutionResult``, the ``execute_and_collect`` iterator (public
  as ``strom.JobClient``, ...), and :mod:`~strom.client.remote_job_client`: ``RemoteJobClient``.

``StreamExecutionEnvironment.execute_async`` and ``strom run`` (whose programs call it) go through the same executors.
"""
