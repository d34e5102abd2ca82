# SPDX-License-Identifier: Apache-2.0
"""Triton implementation of ``copy_blocks``.

For every layer and every (src, dst) pair of ``block_mapping``:
    key_caches[layer][dst] = key_caches[layer][src]
    value_caches[layer][dst] = value_caches[layer][src]

Each cache is viewed as [num_blocks, <inner dims>]. The inner dims are merged
where the layout allows; the kernel handles up to four remaining inner dims
through explicit strides, and a flat fast path when the block is dense.
Grid: (num_pairs, chunks of one block). One launch per cache tensor (key and
value of every layer), since layers may have independent layouts.
"""

from typing import List

import torch
import triton
import triton.language as tl

_MAX_INNER_DIMS = 4
_MAX_GRID_Y = 65535


@triton.jit
def _copy_blocks_kernel(
    cache_ptr,
    block_mapping_ptr,  # [num_pairs, 2] int64
    mapping_stride_p,
    mapping_stride_c,
    block_stride,
    block_numel,
    size1,
    size2,
    size3,
    stride0,
    stride1,
    stride2,
    stride3,
    IS_DENSE: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
):
    pair_idx = tl.program_id(0).to(tl.int64)
    chunk_idx = tl.program_id(1).to(tl.int64)

    src_block = tl.load(block_mapping_ptr + pair_idx * mapping_stride_p).to(tl.int64)
    dst_block = tl.load(block_mapping_ptr + pair_idx * mapping_stride_p +
                        mapping_stride_c).to(tl.int64)

    offs = chunk_idx * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE).to(tl.int64)
    mask = offs < block_numel
    if IS_DENSE:
        elem_offs = offs
    else:
        i3 = offs % size3
        rem = offs // size3
        i2 = rem % size2
        rem = rem // size2
        i1 = rem % size1
        i0 = rem // size1
        elem_offs = i0 * stride0 + i1 * stride1 + i2 * stride2 + i3 * stride3

    src_ptrs = cache_ptr + src_block * block_stride + elem_offs
    dst_ptrs = cache_ptr + dst_block * block_stride + elem_offs
    vals = tl.load(src_ptrs, mask=mask)
    tl.store(dst_ptrs, vals, mask=mask)


def _inner_layout(cache: torch.Tensor):
    """Merge the per-block dims of `cache` (dims 1..) into as few as possible.
    Returns (sizes, strides) with size-1 dims removed."""
    dims = [(s, st) for s, st in zip(cache.shape[1:], cache.stride()[1:])
            if s != 1]
    if not dims:
        return [1], [1]
    merged = [list(dims[-1])]
    for s, st in reversed(dims[:-1]):
        if st == merged[0][0] * merged[0][1]:
            merged[0][0] *= s
        else:
            merged.insert(0, [s, st])
    return [d[0] for d in merged], [d[1] for d in merged]


def _copy_blocks_one(cache: torch.Tensor, block_mapping: torch.Tensor) -> None:
    num_pairs = block_mapping.shape[0]
    sizes, strides = _inner_layout(cache)
    if len(sizes) > _MAX_INNER_DIMS:
        # Exotic layout: split along the first per-block dim (views only).
        for i in range(cache.shape[1]):
            _copy_blocks_one(cache[:, i], block_mapping)
        return
    block_numel = 1
    for s in sizes:
        block_numel *= s
    is_dense = len(sizes) == 1 and strides[0] == 1
    pad = _MAX_INNER_DIMS - len(sizes)
    sizes = [1] * pad + sizes
    strides = [0] * pad + strides

    BLOCK_SIZE = 2048
    while triton.cdiv(block_numel, BLOCK_SIZE) > _MAX_GRID_Y:
        BLOCK_SIZE *= 2
    grid = (num_pairs, max(1, triton.cdiv(block_numel, BLOCK_SIZE)))
    _copy_blocks_kernel[grid](
        cache,
        block_mapping,
        block_mapping.stride(0),
        block_mapping.stride(1),
        cache.stride(0),
        block_numel,
        sizes[1],
        sizes[2],
        sizes[3],
        strides[0],
        strides[1],
        strides[2],
        strides[3],
        IS_DENSE=is_dense,
        BLOCK_SIZE=BLOCK_SIZE,
        num_warps=8,
    )


def copy_blocks(key_caches: List[torch.Tensor],
                value_caches: List[torch.Tensor],
                block_mapping: torch.Tensor) -> None:
    assert len(key_caches) == len(value_caches)
    if block_mapping.dim() == 1:
        block_mapping = block_mapping.view(-1, 2)
    for key_cache, value_cache in zip(key_caches, value_caches):
        _copy_blocks_one(key_cache, block_mapping)
        _copy_blocks_one(value_cache, block_mapping)
    return None
