"""``MATCH_RECOGNIZE``'s runtime (Flink's ``org.apache.flink.cep.nfa``): the pattern, the NFA over a shared buffer
of events, the after-match skip strategies and the keyed operator that sorts rows by event time and feeds them."""
