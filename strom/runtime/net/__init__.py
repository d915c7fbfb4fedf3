"""Network security shared by servers and clients (Flink's ``org.apache.flink.runtime.net``): TLS contexts."""
