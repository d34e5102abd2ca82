# SPDX-License-Identifier: Apache-2.0
# Triton version of gptq_marlin_moe_repack: per expert, turn GPTQ row-packed
# int4 / int8 weights (optionally act-order permuted) into the Marlin layout
# (16x16 tiles, get_weight_perm() interleave per 1024 values, pack along rows).
import functools

import torch
import triton
import triton.language as tl

MARLIN_TILE = 16
PERM_CHUNK = 1024


@functools.lru_cache(maxsize=None)
def _weight_perm_list(num_bits: int) -> tuple:
    perm_list = []
    for i in range(32):
        perm1 = []
        col = i // 4
        for block in (0, 1):
            for row in (
                2 * (i % 4),
                2 * (i % 4) + 1,
                2 * (i % 4 + 4),
                2 * (i % 4 + 4) + 1,
            ):
                perm1.append(16 * row + col + 8 * block)
        for j in range(4):
            perm_list.extend(p + 256 * j for p in perm1)
    if num_bits == 4:
        interleave = (0, 2, 4, 6, 1, 3, 5, 7)
    elif num_bits == 8:
        interleave = (0, 2, 1, 3)
    else:
        raise ValueError(f"num_bits must be 4 or 8, got {num_bits}")
    n = len(interleave)
    out = []
    for base in range(0, len(perm_list), n):
        out.extend(perm_list[base + t] for t in interleave)
    return tuple(out)


_PERM_CACHE: dict = {}


def _get_weight_perm(num_bits: int, device: torch.device) -> torch.Tensor:
    key = (num_bits, str(device))
    t = _PERM_CACHE.get(key)
    if t is None:
        t = torch.tensor(_weight_perm_list(num_bits), dtype=torch.int32, device=device)
        _PERM_CACHE[key] = t
    return t


@triton.jit
def _gptq_marlin_repack_kernel(
    b_q_ptr,
    act_perm_ptr,
    weight_perm_ptr,
    out_ptr,
    size_n,
    row_len,
    total_words,
    stride_be,
    stride_bk,
    stride_bn,
    stride_pe,
    stride_oe,
    HAS_ACT_PERM: tl.constexpr,
    NUM_BITS: tl.constexpr,
    BLOCK_W: tl.constexpr,
):
    PACK: tl.constexpr = 32 // NUM_BITS
    MASK: tl.constexpr = (1 << NUM_BITS) - 1
    e = tl.program_id(0).to(tl.int64)
    pid_w = tl.program_id(1)

    # flat word index inside this expert's [K/16, N*bits/2] output; since the
    # output is packed row-major, value slot i of word w is flat position
    # w * PACK + i of the tiled [K/16, N*16] matrix
    offs_w = pid_w * BLOCK_W + tl.arange(0, BLOCK_W)
    mask_w = offs_w < total_words
    res = tl.zeros((BLOCK_W,), dtype=tl.int32)
    for i in tl.static_range(PACK):
        # flat position in the [K/16, N*16] tiled matrix; the 1024-wide
        # permutation chunks are taken over the flattened matrix
        j = offs_w.to(tl.int64) * PACK + i
        src = (j // 1024) * 1024 + tl.load(weight_perm_ptr + j % 1024, mask=mask_w, other=0)
        src_kt = src // row_len
        src_pos = src % row_len
        tile_n = src_pos // 256
        r = (src_pos % 256) // 16
        c = src_pos % 16
        k = src_kt * 16 + r
        n = tile_n * 16 + c
        if HAS_ACT_PERM:
            k = tl.load(act_perm_ptr + e * stride_pe + k, mask=mask_w, other=0)
        word = tl.load(
            b_q_ptr + e * stride_be + (k // PACK) * stride_bk + n * stride_bn,
            mask=mask_w & (n < size_n),
            other=0,
        )
        v = (word >> ((k % PACK) * NUM_BITS)) & MASK
        res = res | (v << (i * NUM_BITS))
    tl.store(out_ptr + e * stride_oe + offs_w, res, mask=mask_w)


def gptq_marlin_moe_repack(
    b_q_weight: torch.Tensor,
    perm: torch.Tensor,
    size_k: int,
    size_n: int,
    num_bits: int,
    is_a_8bit: bool = False,
) -> torch.Tensor:
    assert num_bits in (4, 8)
    assert size_k % MARLIN_TILE == 0 and (size_k * size_n) % (PERM_CHUNK) == 0
    num_experts = b_q_weight.shape[0]
    device = b_q_weight.device
    has_perm = perm is not None and perm.numel() > 0 and perm.dim() == 2 and perm.size(1) > 0
    out_row_words = size_n * num_bits // 2
    out = torch.empty(
        (num_experts, size_k // MARLIN_TILE, out_row_words), dtype=torch.int32, device=device
    )
    if has_perm:
        act_perm = perm if perm.stride(-1) == 1 else perm.contiguous()
        stride_pe = act_perm.stride(0)
    else:
        act_perm = out
        stride_pe = 0
    weight_perm = _get_weight_perm(num_bits, device)

    total_words = (size_k // MARLIN_TILE) * out_row_words
    BLOCK_W = min(4096, triton.next_power_of_2(total_words))
    grid = (num_experts, triton.cdiv(total_words, BLOCK_W))
    _gptq_marlin_repack_kernel[grid](
        b_q_weight,
        act_perm,
        weight_perm,
        out,
        size_n,
        size_n * MARLIN_TILE,
        total_words,
        b_q_weight.stride(0),
        b_q_weight.stride(1),
        b_q_weight.stride(2),
        stride_pe,
        out.stride(0),
        HAS_ACT_PERM=has_perm,
        NUM_BITS=num_bits,
        BLOCK_W=BLOCK_W,
    )
    return out
