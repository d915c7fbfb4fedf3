"""SQL's window operators (Flink's ``org.apache.flink.table.runtime.operators.window``) on DataStreams of rows.

Each module has one Flink operator and the factory the planner calls (see ``docs/sql/windowing.md``):
:mod:`.window_table_function` (TUMBLE/HOP/CUMULATE TVFs), :mod:`.session_window` (SESSION TVF and aggregate),
:mod:`.window_aggregate` (slicing window aggregation), :mod:`.window_rank` (window Top-N and deduplication),
:mod:`.window_join`; the pure parts: :mod:`.slice_assigners` and :mod:`.time_window_util`. The OVER aggregate and the
interval join are :mod:`strom.table.runtime.over_aggregate` and :mod:`strom.table.runtime.interval_join`.
"""
