import torch
import triton
import triton.language as tl


@triton.jit
def _shuffle_rows_kernel(
    input_ptr,
    dst2src_ptr,
    output_ptr,
    num_dst_rows,
    num_cols,
    stride_in_row,
    stride_in_col,
    stride_out_row,
    stride_map,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)

    dst_rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    row_mask = dst_rows < num_dst_rows

    src_rows = tl.load(dst2src_ptr + dst_rows * stride_map, mask=row_mask, other=0).to(tl.int64)

    mask = row_mask[:, None] & (cols[None, :] < num_cols)
    src = input_ptr + src_rows[:, None] * stride_in_row + cols[None, :] * stride_in_col
    vals = tl.load(src, mask=mask)
    dst = output_ptr + dst_rows[:, None].to(tl.int64) * stride_out_row + cols[None, :]
    tl.store(dst, vals, mask=mask)


def shuffle_rows(input_tensor: torch.Tensor, dst2src_map: torch.Tensor) -> torch.Tensor:
    assert input_tensor.dim() == 2, "input_tensor must be [num_rows, num_cols]"
    assert dst2src_map.dim() == 1, "dst2src_map must be 1-D"

    num_dst_rows = dst2src_map.shape[0]
    num_cols = input_tensor.shape[1]
    output = torch.empty(
        (num_dst_rows, num_cols), dtype=input_tensor.dtype, device=input_tensor.device
    )
    if num_dst_rows == 0 or num_cols == 0:
        return output

    BLOCK_N = min(triton.next_power_of_2(num_cols), 1024)
    BLOCK_M = max(1, min(64, 4096 // BLOCK_N))
    grid = (triton.cdiv(num_dst_rows, BLOCK_M), triton.cdiv(num_cols, BLOCK_N))
    _shuffle_rows_kernel[grid](
        input_tensor,
        dst2src_map,
        output,
        num_dst_rows,
        num_cols,
        input_tensor.stride(0),
        input_tensor.stride(1),
        output.stride(0),
        dst2src_map.stride(0),
        BLOCK_M=BLOCK_M,
        BLOCK_N=BLOCK_N,
    )
    return output
