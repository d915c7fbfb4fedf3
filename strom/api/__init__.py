"""The DataStream API: environment, streams, functions, sources and sinks."""
