"""Stream tasks: the mailbox loop, the operator chain, source and one-input tasks (internal)."""
