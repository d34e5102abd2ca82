"""Reference Triton kernel for vllm13::marlin_int4_fp8_preprocess: nibble v -> v-8 (v >= 8) or 15-v."""

import torch
import triton
import triton.language as tl


@triton.jit
def _preprocess_kernel(q_ptr, out_ptr, numel, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < numel
    words = tl.load(q_ptr + offsets, mask=mask, other=0)
    result = tl.zeros([BLOCK], dtype=tl.int32)
    for j in tl.static_range(8):
        nibble = (words >> (4 * j)) & 15
        mapped = tl.where(nibble >= 8, nibble - 8, 15 - nibble)
        result = result | (mapped << (4 * j))
    tl.store(out_ptr + offsets, result, mask=mask)


def marlin_int4_fp8_preprocess(qweight, qzeros_or_none=None, inplace=False):
    out = qweight if inplace else torch.empty_like(qweight)
    numel = qweight.numel()
    block = 1024
    _preprocess_kernel[(triton.cdiv(numel, block),)](qweight, out, numel, BLOCK=block)
    return out
