"""Record sources: the :class:`~codec.sources.protocol.RecordSource` protocol and what implements it
(one file, a shard set, a followed file), and one pass over a source's records."""
