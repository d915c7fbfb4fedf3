"""Stream operators: the runtime side of every DataStream transformation, a batch at a time."""
