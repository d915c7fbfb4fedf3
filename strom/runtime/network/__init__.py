"""The data plane: result partitions, input gates, channels, credit-based transport (internal)."""
