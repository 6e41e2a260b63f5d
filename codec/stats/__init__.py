"""Per-feature statistics and the inferred feature spec, in bounded memory, one by one or on the pool."""
