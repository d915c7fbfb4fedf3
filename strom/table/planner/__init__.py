"""The planner (Flink's ``flink-table-planner``): validation, logical plans, changelog inference, translation."""
