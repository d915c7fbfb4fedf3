"""The Dispatcher: accepts jobs, starts a JobMaster per job, answers their results, keeps forwarded log records
(Flink's ``org.apache.flink.runtime.dispatcher``; internal)."""
