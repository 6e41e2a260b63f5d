"""TensorFlow's Example and SequenceExample messages, defined by this project.

The descriptors mirror tensorflow/core/example/feature.proto and example.proto
(package ``tensorflow``, same message names, field names and numbers), so the
wire format and ``json_format.MessageToDict`` output are TensorFlow's own.
They live in a private descriptor pool: an installed TensorFlow in the same
process registers its own copies in the default pool, and the two never meet.
"""

from __future__ import annotations

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.message import Message

__all__ = [
    "BytesList",
    "Example",
    "Feature",
    "FeatureList",
    "FeatureLists",
    "Features",
    "FloatList",
    "Int64List",
    "SequenceExample",
    "POOL",
]

PACKAGE = "tensorflow"
FEATURE_PROTO = "tensorflow/core/example/feature.proto"
EXAMPLE_PROTO = "tensorflow/core/example/example.proto"

FIELD = descriptor_pb2.FieldDescriptorProto
OPTIONAL = FIELD.LABEL_OPTIONAL
REPEATED = FIELD.LABEL_REPEATED


def add_field(
    message: descriptor_pb2.DescriptorProto,
    name: str,
    number: int,
    type_: int,
    label: int = OPTIONAL,
    type_name: str | None = None,
    packed: bool = False,
    oneof_index: int | None = None,
) -> None:
    """Append one field to ``message``; ``type_name`` is fully qualified."""
    field = message.field.add(name=name, number=number, type=type_, label=label)
    if type_name is not None:
        field.type_name = type_name
    if packed:
        field.options.packed = True
    if oneof_index is not None:
        field.oneof_index = oneof_index


def _map_field(
    message: descriptor_pb2.DescriptorProto,
    name: str,
    entry_name: str,
    value_type_name: str,
) -> None:
    """Append ``map<string, Value> name = 1`` as protoc spells it: a nested entry."""
    entry = message.nested_type.add(name=entry_name)
    entry.options.map_entry = True
    add_field(entry, "key", 1, FIELD.TYPE_STRING)
    add_field(entry, "value", 2, FIELD.TYPE_MESSAGE, type_name=value_type_name)
    qualified_entry = f".{PACKAGE}.{message.name}.{entry_name}"
    add_field(message, name, 1, FIELD.TYPE_MESSAGE, REPEATED, qualified_entry)


def _feature_file() -> descriptor_pb2.FileDescriptorProto:
    """feature.proto: the value lists, Feature, Features, FeatureList(s)."""
    file = descriptor_pb2.FileDescriptorProto(
        name=FEATURE_PROTO, package=PACKAGE, syntax="proto3"
    )
    bytes_list = file.message_type.add(name="BytesList")
    add_field(bytes_list, "value", 1, FIELD.TYPE_BYTES, REPEATED)
    float_list = file.message_type.add(name="FloatList")
    add_field(float_list, "value", 1, FIELD.TYPE_FLOAT, REPEATED, packed=True)
    int64_list = file.message_type.add(name="Int64List")
    add_field(int64_list, "value", 1, FIELD.TYPE_INT64, REPEATED, packed=True)

    feature = file.message_type.add(name="Feature")
    feature.oneof_decl.add(name="kind")
    for number, (name, type_name) in enumerate(
        [("bytes_list", "BytesList"), ("float_list", "FloatList"), ("int64_list", "Int64List")],
        start=1,
    ):
        add_field(feature, name, number, FIELD.TYPE_MESSAGE,
               type_name=f".{PACKAGE}.{type_name}", oneof_index=0)

    features = file.message_type.add(name="Features")
    _map_field(features, "feature", "FeatureEntry", f".{PACKAGE}.Feature")
    feature_list = file.message_type.add(name="FeatureList")
    add_field(feature_list, "feature", 1, FIELD.TYPE_MESSAGE, REPEATED, f".{PACKAGE}.Feature")
    feature_lists = file.message_type.add(name="FeatureLists")
    _map_field(feature_lists, "feature_list", "FeatureListEntry", f".{PACKAGE}.FeatureList")
    return file


def _example_file() -> descriptor_pb2.FileDescriptorProto:
    """example.proto: Example and SequenceExample."""
    file = descriptor_pb2.FileDescriptorProto(
        name=EXAMPLE_PROTO, package=PACKAGE, syntax="proto3", dependency=[FEATURE_PROTO]
    )
    example = file.message_type.add(name="Example")
    add_field(example, "features", 1, FIELD.TYPE_MESSAGE, type_name=f".{PACKAGE}.Features")
    sequence = file.message_type.add(name="SequenceExample")
    add_field(sequence, "context", 1, FIELD.TYPE_MESSAGE, type_name=f".{PACKAGE}.Features")
    add_field(sequence, "feature_lists", 2, FIELD.TYPE_MESSAGE, type_name=f".{PACKAGE}.FeatureLists")
    return file


POOL = descriptor_pool.DescriptorPool()
POOL.Add(_feature_file())
POOL.Add(_example_file())


def message_class(pool: descriptor_pool.DescriptorPool, name: str) -> type[Message]:
    """The generated message class for ``tensorflow.<name>`` in a private pool (this one, or codec.decode.tensors')."""
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{PACKAGE}.{name}"))


def _message_class(name: str) -> type[Message]:
    return message_class(POOL, name)


BytesList = _message_class("BytesList")
FloatList = _message_class("FloatList")
Int64List = _message_class("Int64List")
Feature = _message_class("Feature")
Features = _message_class("Features")
FeatureList = _message_class("FeatureList")
FeatureLists = _message_class("FeatureLists")
Example = _message_class("Example")
SequenceExample = _message_class("SequenceExample")
