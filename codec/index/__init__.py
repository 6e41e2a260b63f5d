"""The offset index: the pass that walks record headers (in two halves on two cores for a big plain
file), the compact index it fills, and the per-user cache."""
