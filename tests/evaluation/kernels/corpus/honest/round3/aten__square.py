import torch
import triton
import triton.language as tl


@triton.jit
def _square_kernel(X, Y, N, COMPUTE_DTYPE: tl.constexpr, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < N
    x = tl.load(X + offsets, mask=mask).to(COMPUTE_DTYPE)
    y = x * x
    tl.store(Y + offsets, y.to(Y.dtype.element_ty), mask=mask)


@triton.jit
def _strided_copy_kernel(
    SRC, DST, N,
    D1, D2, D3,
    ST0, ST1, ST2, ST3,
    BLOCK_SIZE: tl.constexpr,
):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < N
    i3 = offsets % D3
    r = offsets // D3
    i2 = r % D2
    r = r // D2
    i1 = r % D1
    i0 = r // D1
    dst_off = i0 * ST0 + i1 * ST1 + i2 * ST2 + i3 * ST3
    v = tl.load(SRC + offsets, mask=mask)
    tl.store(DST + dst_off, v, mask=mask)


BLOCK_SIZE = 1024


_COMPUTE_DTYPE = {
    torch.float16: tl.float32,
    torch.bfloat16: tl.float32,
    torch.float32: tl.float32,
    torch.float64: tl.float64,
    torch.bool: tl.int64,
    torch.uint8: tl.uint8,
    torch.int8: tl.int8,
    torch.int16: tl.int16,
    torch.int32: tl.int32,
    torch.int64: tl.int64,
}


def _result_dtype(dtype: torch.dtype) -> torch.dtype:
    # pow(bool, 2) promotes to the default integer type
    return torch.int64 if dtype == torch.bool else dtype


def _launch_square(x: torch.Tensor, y: torch.Tensor) -> None:
    n = x.numel()
    if n == 0:
        return
    grid = (triton.cdiv(n, BLOCK_SIZE),)
    _square_kernel[grid](x, y, n, COMPUTE_DTYPE=_COMPUTE_DTYPE[x.dtype], BLOCK_SIZE=BLOCK_SIZE)


def square(self: torch.Tensor) -> torch.Tensor:
    x = self.contiguous()
    y = torch.empty(x.shape, dtype=_result_dtype(x.dtype), device=x.device)
    _launch_square(x, y)
    return y


def square_out(self: torch.Tensor, *, out: torch.Tensor) -> torch.Tensor:
    if out.shape != self.shape:
        out.resize_(self.shape)
    x = self.contiguous()
    n = x.numel()
    if n == 0:
        return out

    if out.is_contiguous():
        _launch_square(x, out)
        return out

    tmp = torch.empty(x.shape, dtype=out.dtype, device=x.device)
    _launch_square(x, tmp)

    dst = out
    if dst.dim() > 4:
        raise NotImplementedError("square_out: non-contiguous out with more than 4 dims")
    shape = [1] * (4 - dst.dim()) + list(dst.shape)
    strides = [0] * (4 - dst.dim()) + list(dst.stride())
    grid = (triton.cdiv(n, BLOCK_SIZE),)
    _strided_copy_kernel[grid](
        tmp, dst, n,
        shape[1], shape[2], shape[3],
        strides[0], strides[1], strides[2], strides[3],
        BLOCK_SIZE=BLOCK_SIZE,
    )
    return out
