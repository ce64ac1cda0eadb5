"""The leaves: typed values, JSON helpers, settings from the environment, limits, faults, progress."""
