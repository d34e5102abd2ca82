import torch
import triton
import triton.language as tl


@triton.jit
def _add(a, b):
    return a + b


@triton.jit
def cumsum_kernel(x_ptr, y_ptr, length, x_row_stride, x_stride, y_row_stride,
                  ACC_DTYPE: tl.constexpr, BLOCK: tl.constexpr):
    """Scan one row in tiles of BLOCK, carrying the running total between tiles."""
    row = tl.program_id(0).to(tl.int64)
    carry = tl.zeros([1], dtype=ACC_DTYPE)
    lanes = tl.arange(0, BLOCK)
    for start in range(0, length, BLOCK):
        idx = start + lanes
        ok = idx < length
        v = tl.load(x_ptr + row * x_row_stride + idx * x_stride, mask=ok, other=0).to(ACC_DTYPE)
        scanned = tl.associative_scan(v, 0, _add) + carry
        tl.store(y_ptr + row * y_row_stride + idx, scanned.to(y_ptr.dtype.element_ty), mask=ok)
        carry += tl.sum(v, axis=0)


def cumsum(self, dim, *, dtype=None):
    if dtype is None:
        dtype = self.dtype if (self.dtype.is_floating_point or self.dtype.is_complex) else torch.int64
    if self.dim() == 0:
        src = self.reshape(1, 1)
    else:
        src = self.movedim(dim, -1)
        src = src.reshape(-1, src.shape[-1])
    acc = tl.int64 if not dtype.is_floating_point else (tl.float64 if dtype == torch.float64 else tl.float32)
    moved_shape = list(self.movedim(dim, -1).shape) if self.dim() else []
    result = torch.empty(moved_shape, dtype=dtype, device=self.device)
    rows, length = src.shape
    if rows and length:
        cumsum_kernel[(rows,)](src, result, length, src.stride(0), src.stride(1), length,
                               ACC_DTYPE=acc, BLOCK=min(1024, triton.next_power_of_2(length)))
    return result.movedim(-1, dim) if self.dim() else result
