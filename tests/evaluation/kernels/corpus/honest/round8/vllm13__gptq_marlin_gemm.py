# SPDX-License-Identifier: Apache-2.0
# Triton replacement for gptq_marlin_gemm (uint4b8 weights, grouped fp16 scales,
# no act-order, no zero points).
#
# Instead of the Marlin tensor-core fragment walk we undo the layout with two
# small lookup tables: the inverse of get_weight_perm(4) (which position of a
# 1024-value chunk holds a given tiled value) and the inverse Marlin scale
# permutation, then do a plain fp16 tl.dot GEMM with fp32 accumulation.
import functools

import torch
import triton
import triton.language as tl

MARLIN_TILE = 16


@functools.lru_cache(maxsize=None)
def _inv_weight_perm_4bit() -> tuple:
    perm_list = []
    for i in range(32):
        perm1 = []
        col = i // 4
        for block in (0, 1):
            for row in (2 * (i % 4), 2 * (i % 4) + 1, 2 * (i % 4 + 4), 2 * (i % 4 + 4) + 1):
                perm1.append(16 * row + col + 8 * block)
        for j in range(4):
            perm_list.extend(p + 256 * j for p in perm1)
    interleave = (0, 2, 4, 6, 1, 3, 5, 7)
    perm = []
    for base in range(0, len(perm_list), 8):
        perm.extend(perm_list[base + t] for t in interleave)
    inv = [0] * len(perm)
    for new_pos, old_pos in enumerate(perm):
        inv[old_pos] = new_pos
    return tuple(inv)


_LUT_CACHE: dict = {}


def _get_inv_perm(device) -> torch.Tensor:
    key = str(device)
    if key not in _LUT_CACHE:
        _LUT_CACHE[key] = torch.tensor(_inv_weight_perm_4bit(), dtype=torch.int32, device=device)
    return _LUT_CACHE[key]


def _autotune_configs():
    configs = [
        triton.Config({"BLOCK_SIZE_M": 32, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 64}, num_warps=4, num_stages=3),
        triton.Config({"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 128}, num_warps=4, num_stages=4),
        triton.Config({"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 64}, num_warps=8, num_stages=3),
        triton.Config({"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 32}, num_warps=8, num_stages=3),
    ]
    if torch.cuda.is_available():
        return configs
    # interpreter: no benchmarker, and fewer / bigger programs are much faster
    return [triton.Config({"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 256, "BLOCK_SIZE_K": 128}, num_warps=8, num_stages=1)]


@triton.autotune(configs=_autotune_configs(), key=["size_n", "size_k"])
@triton.jit
def _marlin_uint4b8_gemm_kernel(
    a_ptr,
    b_ptr,
    s_ptr,
    inv_perm_ptr,
    c_ptr,
    size_m,
    size_n,
    size_k,
    group_size,
    stride_am,
    stride_ak,
    stride_bk,
    stride_sg,
    stride_cm,
    stride_cn,
    BLOCK_SIZE_M: tl.constexpr,
    BLOCK_SIZE_N: tl.constexpr,
    BLOCK_SIZE_K: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_n = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    mask_m = offs_m < size_m
    mask_n = offs_n < size_n
    row_len = size_n * 16  # values per row of the [K/16, N*16] tiled matrix

    # Marlin scale order inside each 64 group: S_marlin[8 * (c % 8) + c // 8] = S[c]
    c64 = offs_n % 64
    s_col = (offs_n // 64) * 64 + (c64 % 8) * 8 + c64 // 8
    # column part of the tiled position (independent of k)
    n_part = (offs_n // 16) * 256 + offs_n % 16

    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k0 in range(0, size_k, BLOCK_SIZE_K):
        offs_k = k0 + tl.arange(0, BLOCK_SIZE_K)
        mask_k = offs_k < size_k
        a = tl.load(
            a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak,
            mask=mask_m[:, None] & mask_k[None, :],
            other=0.0,
        )
        bmask = mask_k[:, None] & mask_n[None, :]
        # flat index of value (k, n) before the 1024-chunk permutation
        flat = (offs_k // 16).to(tl.int64)[:, None] * row_len + ((offs_k % 16) * 16)[:, None] + n_part[None, :]
        new_idx = tl.load(inv_perm_ptr + flat % 1024, mask=bmask, other=0)
        packed = (flat // 1024) * 1024 + new_idx
        p_row = packed // row_len
        p_col = packed % row_len
        word = tl.load(b_ptr + p_row * stride_bk + p_col // 8, mask=bmask, other=0)
        q = (word >> ((p_col % 8) * 4).to(tl.int32)) & 0xF

        group = offs_k // group_size
        s = tl.load(s_ptr + group[:, None] * stride_sg + s_col[None, :], mask=bmask, other=0.0)
        w = ((q - 8).to(tl.float32) * s.to(tl.float32)).to(tl.float16)
        acc = tl.dot(a.to(tl.float16), w, acc)

    tl.store(
        c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn,
        acc.to(tl.float16),
        mask=mask_m[:, None] & mask_n[None, :],
    )


def gptq_marlin_gemm(
    a: torch.Tensor,
    c: torch.Tensor | None,
    b_q_weight: torch.Tensor,
    b_bias: torch.Tensor | None,
    b_scales: torch.Tensor,
    a_scales: torch.Tensor | None,
    global_scale: torch.Tensor | None,
    b_zeros: torch.Tensor,
    g_idx: torch.Tensor,
    perm: torch.Tensor,
    workspace: torch.Tensor,
    b_q_type,
    size_m: int,
    size_n: int,
    size_k: int,
    is_k_full: bool = True,
    use_atomic_add: bool = False,
    use_fp32_reduce: bool = False,
    is_zp_float: bool = False,
) -> torch.Tensor:
    q_type = str(getattr(b_q_type, "name", b_q_type))
    if "uint4b8" not in q_type:
        raise NotImplementedError(f"weight type {b_q_type} not supported")
    if b_zeros is not None and b_zeros.numel() > 0:
        raise NotImplementedError("zero points not supported")
    if g_idx is not None and g_idx.numel() > 0:
        raise NotImplementedError("act-order not supported")
    assert b_scales.stride(1) == 1 and b_q_weight.stride(1) == 1
    num_groups = b_scales.size(0)
    group_size = size_k // num_groups

    out = c if c is not None else torch.empty((size_m, size_n), dtype=a.dtype, device=a.device)
    inv_perm = _get_inv_perm(a.device)

    def grid(meta):
        return (triton.cdiv(size_m, meta["BLOCK_SIZE_M"]), triton.cdiv(size_n, meta["BLOCK_SIZE_N"]))

    _marlin_uint4b8_gemm_kernel[grid](
        a,
        b_q_weight,
        b_scales,
        inv_perm,
        out,
        size_m,
        size_n,
        size_k,
        group_size,
        a.stride(0),
        a.stride(1),
        b_q_weight.stride(0),
        b_scales.stride(0),
        out.stride(0),
        out.stride(1),
    )
    return out
