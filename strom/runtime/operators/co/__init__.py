"""Two-input operators (Flink's ``org.apache.flink.streaming.api.operators.co``): ``connect`` with co-map,
co-flat-map and co-process functions, the broadcast state pattern, and the interval join."""
