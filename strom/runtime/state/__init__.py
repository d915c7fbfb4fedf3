"""Keys and state: key groups, keyed state backends (internal)."""
