"""What surrounds records: TFDS folders and their feature specs, label maps, and how a path's
surroundings choose the payload its records decode as."""
