# SPDX-License-Identifier: Apache-2.0
# Triton port of exllama's gptq_shuffle: optional act-order row permutation
# followed (for 4-bit) by the nibble interleave (0, 2, 4, 6, 1, 3, 5, 7).
import torch
import triton
import triton.language as tl


@triton.jit
def _gptq_shuffle_gather_kernel(
    src_ptr,
    dst_ptr,
    perm_ptr,
    size_packed_k,
    size_n,
    stride_sk,
    stride_sn,
    HAS_PERM: tl.constexpr,
    BITS: tl.constexpr,
    INTERLEAVE: tl.constexpr,
    BLOCK_K: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    PACK_FACTOR: tl.constexpr = 32 // BITS
    MASK: tl.constexpr = (1 << BITS) - 1
    pid_k = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_pk = pid_k * BLOCK_K + tl.arange(0, BLOCK_K)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask_k = offs_pk < size_packed_k
    mask = mask_k[:, None] & (offs_n[None, :] < size_n)

    out = tl.zeros((BLOCK_K, BLOCK_N), dtype=tl.int32)
    for i in tl.static_range(PACK_FACTOR):
        if INTERLEAVE:
            # slot i <- row (0, 2, 4, 6, 1, 3, 5, 7)[i] of this word
            j = (i % 4) * 2 + i // 4
        else:
            j = i
        row = offs_pk * PACK_FACTOR + j
        if HAS_PERM:
            row = tl.load(perm_ptr + row, mask=mask_k, other=0)
        src_word = tl.load(
            src_ptr + (row // PACK_FACTOR)[:, None] * stride_sk + offs_n[None, :] * stride_sn,
            mask=mask,
            other=0,
        )
        v = (src_word >> ((row % PACK_FACTOR) * BITS)[:, None]) & MASK
        out = out | (v << (i * BITS))
    tl.store(dst_ptr + offs_pk[:, None] * size_n + offs_n[None, :], out, mask=mask)


@triton.jit
def _copy_back_kernel(
    src_ptr,
    dst_ptr,
    size_packed_k,
    size_n,
    stride_dk,
    stride_dn,
    BLOCK_K: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    pid_k = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_k = pid_k * BLOCK_K + tl.arange(0, BLOCK_K)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (offs_k[:, None] < size_packed_k) & (offs_n[None, :] < size_n)
    x = tl.load(src_ptr + offs_k[:, None] * size_n + offs_n[None, :], mask=mask)
    tl.store(
        dst_ptr + offs_k[:, None] * stride_dk + offs_n[None, :] * stride_dn, x, mask=mask
    )


def gptq_shuffle(q_weight: torch.Tensor, q_perm: torch.Tensor, bit: int) -> None:
    assert bit in (2, 4, 8), f"unsupported bit width {bit}"
    assert q_weight.dtype == torch.int32
    size_packed_k, size_n = q_weight.shape
    has_perm = q_perm is not None and q_perm.numel() > 0
    interleave = bit == 4

    # gather into a dense scratch buffer, then copy back in place
    scratch = torch.empty((size_packed_k, size_n), dtype=torch.int32, device=q_weight.device)
    perm = q_perm.contiguous() if has_perm else scratch  # dummy pointer when unused

    # GPU: small tiles for occupancy; interpreter/CPU: big tiles, fewer programs
    max_k, max_n = (16, 128) if q_weight.is_cuda else (64, 512)
    BLOCK_K = min(triton.next_power_of_2(size_packed_k), max_k)
    BLOCK_N = min(triton.next_power_of_2(size_n), max_n)
    grid = (triton.cdiv(size_packed_k, BLOCK_K), triton.cdiv(size_n, BLOCK_N))
    _gptq_shuffle_gather_kernel[grid](
        q_weight,
        scratch,
        perm,
        size_packed_k,
        size_n,
        q_weight.stride(0),
        q_weight.stride(1),
        HAS_PERM=has_perm,
        BITS=bit,
        INTERLEAVE=interleave,
        BLOCK_K=BLOCK_K,
        BLOCK_N=BLOCK_N,
    )
    _copy_back_kernel[grid](
        scratch,
        q_weight,
        size_packed_k,
        size_n,
        q_weight.stride(0),
        q_weight.stride(1),
        BLOCK_K=BLOCK_K,
        BLOCK_N=BLOCK_N,
    )
    return None
