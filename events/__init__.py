"""The domain of conteur: pure deciders for each ruleset, no I/O, no clock, no randomness."""
