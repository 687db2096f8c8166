"""The command path every front shares: decide and append, tokens, fan-out, timers, rosters."""
