"""The JobMaster of one job, its gateways to the tasks, its operator coordinator holders, the job's result
(Flink's ``org.apache.flink.runtime.jobmaster``; internal)."""
