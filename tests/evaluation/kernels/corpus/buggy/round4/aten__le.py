import torch
import triton
import triton.language as tl


_MAX_DIMS = 6

_TL_DTYPE = {
    torch.float16: tl.float16,
    torch.bfloat16: tl.bfloat16,
    torch.float32: tl.float32,
    torch.float64: tl.float64,
    torch.int8: tl.int8,
    torch.uint8: tl.uint8,
    torch.int16: tl.int16,
    torch.int32: tl.int32,
    torch.int64: tl.int64,
    torch.bool: tl.int1,
}


@triton.jit
def _strided_offset(offs, s1, s2, s3, s4, s5, t0, t1, t2, t3, t4, t5):
    i5 = offs % s5
    r = offs // s5
    i4 = r % s4
    r = r // s4
    i3 = r % s3
    r = r // s3
    i2 = r % s2
    r = r // s2
    i1 = r % s1
    i0 = r // s1
    return i0 * t0 + i1 * t1 + i2 * t2 + i3 * t3 + i4 * t4 + i5 * t5


@triton.jit
def _le_tensor_kernel(
    a_ptr, b_ptr, out_ptr, N,
    s1, s2, s3, s4, s5,
    as0, as1, as2, as3, as4, as5,
    bs0, bs1, bs2, bs3, bs4, bs5,
    COMPUTE: tl.constexpr, UPCAST: tl.constexpr, BLOCK: tl.constexpr,
):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < N
    a_off = _strided_offset(offs, s1, s2, s3, s4, s5, as0, as1, as2, as3, as4, as5)
    b_off = _strided_offset(offs, s1, s2, s3, s4, s5, bs0, bs1, bs2, bs3, bs4, bs5)
    a = tl.load(a_ptr + a_off, mask=mask, other=0).to(COMPUTE)
    b = tl.load(b_ptr + b_off, mask=mask, other=0).to(COMPUTE)
    if UPCAST:
        # half types: compare exactly in fp32 after rounding to the promoted type
        a = a.to(tl.float32)
        b = b.to(tl.float32)
    res = a <= b
    tl.store(out_ptr + offs, res, mask=mask)


@triton.jit
def _le_scalar_kernel(
    a_ptr, s_ptr, out_ptr, N,
    s1, s2, s3, s4, s5,
    as0, as1, as2, as3, as4, as5,
    COMPUTE: tl.constexpr, UPCAST: tl.constexpr, BLOCK: tl.constexpr,
):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < N
    a_off = _strided_offset(offs, s1, s2, s3, s4, s5, as0, as1, as2, as3, as4, as5)
    a = tl.load(a_ptr + a_off, mask=mask, other=0).to(COMPUTE)
    b = tl.load(s_ptr).to(COMPUTE)
    if UPCAST:
        a = a.to(tl.float32)
        b = b.to(tl.float32)
    res = a <= b
    tl.store(out_ptr + offs, res, mask=mask)


def _pad(vals, fill):
    vals = list(vals)
    return [fill] * (_MAX_DIMS - len(vals)) + vals


def _prep(t, shape):
    t = t.expand(shape)
    if len(shape) > _MAX_DIMS:
        t = t.reshape(-1)
    return t


_BLOCK = 1024


def _grid(N):
    # one program per tile of _BLOCK elements
    return (max(1, N // _BLOCK),)


def le_Tensor(self, other):
    if other.device != self.device:
        other = other.to(self.device)
    shape = torch.broadcast_shapes(self.shape, other.shape)
    compute = torch.result_type(self, other)
    out = torch.zeros(shape, dtype=torch.bool, device=self.device)
    N = out.numel()
    if N == 0:
        return out
    a = _prep(self, shape)
    b = _prep(other, shape)
    sizes = _pad(a.shape, 1)
    _le_tensor_kernel[_grid(N)](
        a, b, out, N,
        sizes[1], sizes[2], sizes[3], sizes[4], sizes[5],
        *_pad(a.stride(), 0), *_pad(b.stride(), 0),
        COMPUTE=_TL_DTYPE[compute], UPCAST=compute in (torch.float16, torch.bfloat16), BLOCK=_BLOCK,
    )
    return out


def le_Scalar(self, other):
    compute = torch.result_type(self, other)
    shape = self.shape
    out = torch.zeros(shape, dtype=torch.bool, device=self.device)
    N = out.numel()
    if N == 0:
        return out
    a = _prep(self, shape)
    sizes = _pad(a.shape, 1)
    # the scalar travels as a 1-element tensor of the promoted dtype
    s = torch.full((1,), other, dtype=compute, device=self.device)
    _le_scalar_kernel[_grid(N)](
        a, s, out, N,
        sizes[1], sizes[2], sizes[3], sizes[4], sizes[5],
        *_pad(a.stride(), 0),
        COMPUTE=_TL_DTYPE[compute], UPCAST=compute in (torch.float16, torch.bfloat16), BLOCK=_BLOCK,
    )
    return out
