"""Record sources: the :class:`~codec.sources.protocol.RecordSource` protocol and what implements it
(one file, a shard set), one way to open what a user names (:mod:`codec.sources.open`), and one
pass over a source's records."""
