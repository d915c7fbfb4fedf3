"""Task metrics (Flink's ``TaskIOMetricGroup``): counters, timer gauges, per-second rates."""
