"""Reference Triton kernel for vllm13::permute_cols: out[:, j] = a[:, perm[j]]."""

import torch
import triton
import triton.language as tl


@triton.jit
def _permute_cols_kernel(a_ptr, perm_ptr, out_ptr, n_cols, a_row_stride, out_row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    chunk = tl.program_id(1)
    columns = chunk * BLOCK + tl.arange(0, BLOCK)
    mask = columns < n_cols
    source = tl.load(perm_ptr + columns, mask=mask, other=0)
    values = tl.load(a_ptr + row * a_row_stride + source, mask=mask)
    tl.store(out_ptr + row * out_row_stride + columns, values, mask=mask)


def permute_cols(a, perm):
    rows, cols = a.shape
    out = torch.empty_like(a)
    block = min(1024, triton.next_power_of_2(cols))
    _permute_cols_kernel[(rows, triton.cdiv(cols, block))](a, perm, out, cols, a.stride(0), out.stride(0), BLOCK=block)
    return out
