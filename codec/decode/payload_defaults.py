"""What a payload that is not a TensorBoard log says of runs and ``cat --json`` lines: nothing.

The :class:`codec.decode.payloads.Payload` facts a message type and a TFDS dataset share, so a
caller asks every payload alike (its own module: the payloads import it, and it imports none of them).
"""
from __future__ import annotations

from types import MappingProxyType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Mapping

    from codec.decode.decoded import DecodedRecord

__all__ = ["PayloadDefaults"]


class PayloadDefaults:
    """The facts of a :class:`~codec.decode.payloads.Payload` that names no runs and adds nothing to a
    ``cat --json`` line."""

    runs: Mapping[str, str] = MappingProxyType({})

    def run_of(self, path: str | None) -> str | None:
        return None

    def line_extras(self, decoded: DecodedRecord, path: str | None) -> dict:
        return {}
