"""A tensor record as a tree node, for the detail view (the array itself rides along to be drawn)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from codec.decode.decoded import TreeNode

if TYPE_CHECKING:
    import numpy as np

__all__ = ["image_shaped", "tensor_label", "tensor_tree"]


def tensor_label(array: np.ndarray) -> str:
    """``float32 [2, 3]``: the dtype (numpy's name, "string" for bytes) and shape, as the tree's root shows it."""
    dtype = "string" if array.dtype.kind == "O" else array.dtype.name
    return f"{dtype} [{', '.join(str(n) for n in array.shape)}]"


def tensor_tree(array: np.ndarray) -> TreeNode:
    """Root role "tensor": its values flattened in C order; ``detail`` is the array."""
    flat = array.reshape(-1)
    values = [bytes(v) for v in flat] if array.dtype.kind == "O" else flat.tolist()
    dtype = "string" if array.dtype.kind == "O" else array.dtype.name
    return TreeNode(name=f"Tensor {tensor_label(array)}", role="tensor", dtype=dtype, values=values, detail=array)


def image_shaped(array: np.ndarray) -> bool:
    """Can the array be drawn as an image: uint8/uint16 shaped H×W, or H×W×1/3/4?"""
    if array.dtype.kind != "u" or array.dtype.itemsize > 2 or array.size == 0:
        return False
    return array.ndim == 2 or (array.ndim == 3 and array.shape[2] in (1, 3, 4))
