"""Process primitives, standard library only: the spawn process pool and a forked child's call."""
