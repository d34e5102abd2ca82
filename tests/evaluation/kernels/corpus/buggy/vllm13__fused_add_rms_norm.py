import triton
import triton.language as tl


@triton.jit
def _fused_add_rms_norm(x_ptr, res_ptr, w_ptr, hidden, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < hidden
    x = tl.load(x_ptr + row * hidden + cols, mask=m, other=0.0).to(tl.float32)
    r = tl.load(res_ptr + row * hidden + cols, mask=m, other=0.0).to(tl.float32)
    z = (x + r).to(x_ptr.dtype.element_ty).to(tl.float32)
    # BUG (honest): the summed hidden state z is used for the norm but never written back to
    # ``residual``; vLLM's contract is that residual holds input + residual afterwards
    inv = tl.rsqrt(tl.sum(z * z, axis=0) / hidden + eps)
    w = tl.load(w_ptr + cols, mask=m, other=0.0).to(tl.float32)
    y = (z * inv).to(x_ptr.dtype.element_ty).to(tl.float32) * w
    tl.store(x_ptr + row * hidden + cols, y.to(x_ptr.dtype.element_ty), mask=m)


def fused_add_rms_norm(input, residual, weight, epsilon):
    hidden = input.shape[-1]
    rows = input.numel() // hidden
    _fused_add_rms_norm[(rows,)](input, residual, weight, hidden, epsilon, BLOCK=triton.next_power_of_2(hidden))
