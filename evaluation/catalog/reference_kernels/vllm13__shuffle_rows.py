"""Reference Triton kernel for vllm13::shuffle_rows: out[i] = input[dst2src_map[i]]."""

import torch
import triton
import triton.language as tl


@triton.jit
def _shuffle_rows_kernel(x_ptr, map_ptr, out_ptr, n_cols, x_row_stride, out_row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    chunk = tl.program_id(1)
    source = tl.load(map_ptr + row).to(tl.int64)
    columns = chunk * BLOCK + tl.arange(0, BLOCK)
    mask = columns < n_cols
    values = tl.load(x_ptr + source * x_row_stride + columns, mask=mask)
    tl.store(out_ptr + row * out_row_stride + columns, values, mask=mask)


def shuffle_rows(input_tensor, dst2src_map):
    rows = dst2src_map.shape[0]
    cols = input_tensor.shape[1]
    out = torch.empty((rows, cols), dtype=input_tensor.dtype, device=input_tensor.device)
    block = min(1024, triton.next_power_of_2(cols))
    _shuffle_rows_kernel[(rows, triton.cdiv(cols, block))](input_tensor, dst2src_map, out, cols,
                                                           input_tensor.stride(0), out.stride(0), BLOCK=block)
    return out
