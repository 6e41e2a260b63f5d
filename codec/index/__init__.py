"""The offset index: the pass that walks record headers, the compact index it fills, and the per-user cache."""
