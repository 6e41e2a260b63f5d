"""Record bytes to values: the kind rule, Example and SequenceExample, tensors, the user's messages,
schema-less protobuf, images, columns of many records, text and JSON."""
