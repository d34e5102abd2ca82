"""softmax.int with the online (single-pass) max/sum recurrence, then a second pass to normalise:
two loops over the row, so rows longer than one block work too."""
import torch
import triton
import triton.language as tl


@triton.jit
def online_softmax_kernel(x_ptr, y_ptr, n_cols, x_stride, y_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * x_stride
    y_row = y_ptr + row * y_stride
    lanes = tl.arange(0, BLOCK)
    m = tl.full([BLOCK], float("-inf"), tl.float32)
    d = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        c = start + lanes
        v = tl.load(x_row + c, mask=c < n_cols, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, v)
        # lanes that have seen nothing yet keep d = 0 (avoid -inf - -inf)
        scale = tl.where(m_new == float("-inf"), 0.0, tl.exp(m - m_new))
        d = d * scale + tl.where(v == float("-inf"), 0.0, tl.exp(v - m_new))
        m = m_new
    row_max = tl.max(m, axis=0)
    denom = tl.sum(d * tl.where(m == float("-inf"), 0.0, tl.exp(m - row_max)), axis=0)
    for start in range(0, n_cols, BLOCK):
        c = start + lanes
        v = tl.load(x_row + c, mask=c < n_cols, other=float("-inf")).to(tl.float32)
        tl.store(y_row + c, (tl.exp(v - row_max) / denom).to(y_ptr.dtype.element_ty), mask=c < n_cols)


def softmax_int(self, dim, dtype=None):
    out_dtype = dtype or self.dtype
    if self.dim() == 0:
        return _scalar_softmax(self, out_dtype)
    moved = self.movedim(dim, -1).contiguous()
    rows = moved.numel() // moved.shape[-1] if moved.shape[-1] else 0
    y = torch.empty(moved.shape, dtype=out_dtype, device=self.device)
    if rows:
        n_cols = moved.shape[-1]
        online_softmax_kernel[(rows,)](moved, y, n_cols, n_cols, n_cols,
                                       BLOCK=min(2048, triton.next_power_of_2(n_cols)))
    return y.movedim(-1, dim)


def _scalar_softmax(x, out_dtype):
    y = torch.empty((), dtype=out_dtype, device=x.device)
    online_softmax_kernel[(1,)](x.reshape(1), y.reshape(1), 1, 1, 1, BLOCK=1)
    return y
