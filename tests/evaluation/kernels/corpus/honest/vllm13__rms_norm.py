"""vllm13::rms_norm(out, input, weight, epsilon): one program per token row, vLLM's rounding order
(normalise in fp32, round to the model dtype, then multiply by the weight in that dtype)."""
import torch
import triton
import triton.language as tl


@triton.jit
def _rms_norm_kernel(
    out_ptr,
    in_ptr,
    w_ptr,
    hidden_size,
    in_row_stride,
    out_row_stride,
    eps,
    BLOCK_SIZE: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < hidden_size
    x = tl.load(in_ptr + row * in_row_stride + cols, mask=mask, other=0.0).to(tl.float32)
    variance = tl.sum(x * x, axis=0) / hidden_size
    inv_rms = tl.rsqrt(variance + eps)
    normed = (x * inv_rms).to(out_ptr.dtype.element_ty)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    # the product of two values of the model dtype is exact in fp32; rounding it once is the dtype product
    y = (normed.to(tl.float32) * w.to(tl.float32)).to(out_ptr.dtype.element_ty)
    tl.store(out_ptr + row * out_row_stride + cols, y, mask=mask)


def rms_norm(out: torch.Tensor, input: torch.Tensor, weight: torch.Tensor, epsilon: float) -> None:
    hidden_size = input.shape[-1]
    x = input.reshape(-1, hidden_size)
    y = out.view(-1, hidden_size)
    num_tokens = x.shape[0]
    if num_tokens == 0:
        return None
    BLOCK_SIZE = triton.next_power_of_2(hidden_size)
    num_warps = min(max(BLOCK_SIZE // 256, 1), 8)
    _rms_norm_kernel[(num_tokens,)](
        y, x, weight, hidden_size, x.stride(0), y.stride(0), epsilon,
        BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps,
    )
    return None
