"""The embedded RocksDB state backend (Flink's ``org.apache.flink.contrib.streaming.state``): keyed state in one
RocksDB instance per operator subtask, on rocksdict."""
