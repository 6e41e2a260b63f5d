"""Per-feature statistics and the inferred feature spec, in bounded memory, one by one or on the pool;
a filter's pass on the pool too."""
