"""Flink SQL's syntax: the sqlglot dialect and the parser front (statements → sqlglot trees)."""
