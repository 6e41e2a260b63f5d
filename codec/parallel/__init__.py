"""Passes on more than one core: the process pool, and a plain file walked in two halves (a forked child)."""
