"""The TaskManager: TaskExecutor, TaskSlotTable, Task (internal)."""
