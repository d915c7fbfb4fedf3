"""The JobManager: Dispatcher, ResourceManager (SlotManager), JobMaster, DefaultScheduler (internal)."""
