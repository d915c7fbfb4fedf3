"""The DefaultScheduler and the restart strategies of its failover (Flink's ``org.apache.flink.runtime.scheduler``
and ``executiongraph.failover``; internal)."""
