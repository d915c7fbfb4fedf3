"""The TaskManager: TaskExecutor, TaskSlotTable, Task (internal)."""

#: the flag of a TaskManager process started before its cluster knew where its JobManager is
#: (:mod:`strom.deploy.prestarted_task_managers`): the rest of its command line follows on standard input
COMMAND_LINE_ON_STDIN = "--command-line-on-stdin"
