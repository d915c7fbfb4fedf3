"""The ResourceManager and its SlotManager: TaskManager registration, heartbeats, slots
(Flink's ``org.apache.flink.runtime.resourcemanager``; internal)."""
