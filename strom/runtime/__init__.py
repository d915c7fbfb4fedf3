"""strom's runtime: JobManager, TaskManager, tasks, network and state.

Internal: no compatibility promise. User programs use :mod:`strom` and :mod:`strom.connectors`.
"""
