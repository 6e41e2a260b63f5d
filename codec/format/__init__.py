"""The bytes on disk: the record layout, CRC-32C, varints, header search and what shard names look like.

Imports nothing else of codec but ``codec.errors``: every other layer reads through it."""
