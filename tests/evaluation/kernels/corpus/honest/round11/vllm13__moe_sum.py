"""Triton port of vLLM's moe_sum: output[t, h] = sum_k input[t, k, h].

Numerics follow vLLM exactly:
  * topk in {2, 3, 4}: the templated CUDA kernel accumulates in the activation
    dtype, k = 0, 1, ... with every add rounded;
  * any other topk: at::sum_out, i.e. fp32 accumulation rounded once.
A sum of two fp16/bf16 values computed in fp32 and rounded once is identical
to the native half add (fp32 has >= 2p+2 bits), so both paths run in fp32
registers with explicit roundings.
"""

import functools
import logging
import os
from typing import Tuple

import torch
import triton
import triton.language as tl

logger = logging.getLogger(__name__)

_BLOCK_H_MAX = int(os.environ.get("VLLM_TRITON_MOE_SUM_BLOCK_H", "1024"))
_SUPPORTED = (torch.float16, torch.bfloat16, torch.float32)


@functools.lru_cache(maxsize=128)
def _launch_config(hidden: int) -> Tuple[int, int]:
    block_h = max(16, min(triton.next_power_of_2(max(hidden, 1)), _BLOCK_H_MAX))
    num_warps = 4 if block_h <= 512 else 8
    return block_h, num_warps


@triton.jit
def _moe_sum_kernel(
    in_ptr, out_ptr,
    T, TOPK, H,
    in_s0, in_s1, in_s2,
    out_s0, out_s1,
    ROUND_EACH_ADD: tl.constexpr,
    BLOCK_H: tl.constexpr,
):
    t = tl.program_id(0).to(tl.int64)
    hs = (tl.program_id(1) * BLOCK_H + tl.arange(0, BLOCK_H)).to(tl.int64)
    mask = (hs < H) & (t < T)
    out_ty = out_ptr.dtype.element_ty
    base = in_ptr + t * in_s0 + hs * in_s2
    acc = tl.zeros([BLOCK_H], dtype=tl.float32)
    for k in range(0, TOPK):
        v = tl.load(base + k * in_s1, mask=mask, other=0.0).to(tl.float32)
        if ROUND_EACH_ADD:
            acc = (acc + v).to(out_ty).to(tl.float32)
        else:
            acc = acc + v
    tl.store(out_ptr + t * out_s0 + hs * out_s1, acc.to(out_ty), mask=mask)


def moe_sum(input: torch.Tensor, output: torch.Tensor) -> None:
    if input.dim() != 3:
        raise ValueError(f"input must be [T, topk, H], got {tuple(input.shape)}")
    if output.dim() != 2:
        raise ValueError(f"output must be [T, H], got {tuple(output.shape)}")
    T, topk, H = input.shape
    if tuple(output.shape) != (T, H):
        raise ValueError(f"output shape {tuple(output.shape)} != {(T, H)}")
    if input.dtype not in _SUPPORTED or output.dtype != input.dtype:
        raise ValueError(f"unsupported dtypes input={input.dtype} output={output.dtype}")
    assert input.device == output.device, "input/output on different devices"

    block_h, warps = _launch_config(H)
    grid = (max(T, 1), max(1, triton.cdiv(H, block_h)))
    if T == 0 or H == 0:
        logger.debug("moe_sum: empty input %s, masked launch only", tuple(input.shape))
    _moe_sum_kernel[grid](
        input, output, T, topk, H,
        input.stride(0), input.stride(1), input.stride(2),
        output.stride(0), output.stride(1),
        ROUND_EACH_ADD=topk in (2, 3, 4),
        BLOCK_H=block_h, num_warps=warps,
    )
    return None
