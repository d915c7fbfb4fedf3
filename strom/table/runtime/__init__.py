"""The runtime of SQL: the operators a planned query runs as (Flink's ``flink-table-runtime``)."""
