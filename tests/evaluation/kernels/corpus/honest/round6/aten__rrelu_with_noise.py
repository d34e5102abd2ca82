import torch
import triton
import triton.language as tl

_MAX_DIMS = 6


def _coalesce(shape, strides_list):
    dims = [(s, [st[d] for st in strides_list]) for d, s in enumerate(shape) if s != 1]
    if not dims:
        return [1], [[0] for _ in strides_list]
    out = [dims[-1]]
    for size, sts in reversed(dims[:-1]):
        isz, ists = out[-1]
        if all(sts[t] == ists[t] * isz for t in range(len(sts))):
            out[-1] = (isz * size, ists)
        else:
            out.append((size, sts))
    out.reverse()
    sizes = [d[0] for d in out]
    strides = [[d[1][t] for d in out] for t in range(len(strides_list))]
    return sizes, strides


def _pad(sizes, strides):
    pad = _MAX_DIMS - len(sizes)
    return [1] * pad + list(sizes), [[0] * pad + list(s) for s in strides]


@triton.jit
def _nd_offsets(offs, S1, S2, S3, S4, S5, T0, T1, T2, T3, T4, T5):
    r = offs
    i5 = r % S5
    r = r // S5
    i4 = r % S4
    r = r // S4
    i3 = r % S3
    r = r // S3
    i2 = r % S2
    r = r // S2
    i1 = r % S1
    i0 = r // S1
    return i0 * T0 + i1 * T1 + i2 * T2 + i3 * T3 + i4 * T4 + i5 * T5


@triton.jit
def _rn_bf16(v):
    # float32 -> nearest-even bfloat16 value, returned as float32 (exact in
    # bf16, so the final cast is exact whatever rounding the backend uses).
    b = v.to(tl.int32, bitcast=True)
    b = (b + 0x7FFF + ((b >> 16) & 1)) & -65536
    return b.to(tl.float32, bitcast=True)


@triton.jit
def _clamp_to_bounds(v, lower, upper, BITS: tl.constexpr, IS_BF16: tl.constexpr,
                     dtype: tl.constexpr):
    # v: positive float32 in [lower, upper]. Returns a float32 value exactly
    # representable in `dtype`; for 16-bit types, a rounding that crossed a
    # bound is stepped back by one ulp so the slope stays inside [lower, upper].
    if IS_BF16:
        b = _rn_bf16(v).to(tl.int32, bitcast=True)
        df = b.to(tl.float32, bitcast=True)
        dn = (b - 65536).to(tl.float32, bitcast=True)
        up = (b + 65536).to(tl.float32, bitcast=True)
        df = tl.where(df > upper, dn, df)
        df = tl.where(df < lower, up, df)
        return df
    elif BITS == 16:
        d = v.to(dtype)
        df = d.to(tl.float32)
        bits = d.to(tl.int16, bitcast=True)
        # positive values: bits - 1 is the next value down, bits + 1 the next up
        dn = (bits - 1).to(dtype, bitcast=True).to(tl.float32)
        up = (bits + 1).to(dtype, bitcast=True).to(tl.float32)
        df = tl.where(df > upper, dn, df)
        df = tl.where(df < lower, up, df)
        return df
    else:
        return v.to(dtype).to(tl.float32)


@triton.jit
def _rrelu_train_kernel(x_ptr, noise_ptr, out_ptr, n, seed, lower, upper,
                        S1, S2, S3, S4, S5, X0, X1, X2, X3, X4, X5,
                        CONTIG: tl.constexpr, NBITS: tl.constexpr, NOISE_BF16: tl.constexpr,
                        OUT_BF16: tl.constexpr,
                        BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    if CONTIG:
        xo = offs
    else:
        xo = _nd_offsets(offs, S1, S2, S3, S4, S5, X0, X1, X2, X3, X4, X5)
    x = tl.load(x_ptr + xo, mask=mask, other=0.0).to(tl.float32)
    r = tl.rand(seed, offs)                      # uniform [0, 1)
    slope = lower + (upper - lower) * r
    slope = tl.minimum(tl.maximum(slope, lower), upper)
    slope_d = _clamp_to_bounds(slope, lower, upper, NBITS, NOISE_BF16,
                               noise_ptr.dtype.element_ty)
    noise = tl.where(x > 0.0, 1.0, slope_d)   # float32, exact in noise's dtype
    tl.store(noise_ptr + offs, noise.to(noise_ptr.dtype.element_ty), mask=mask)
    y = x * noise
    if OUT_BF16:
        y = _rn_bf16(y)
    tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _rrelu_eval_kernel(x_ptr, out_ptr, n, slope,
                       S1, S2, S3, S4, S5, X0, X1, X2, X3, X4, X5,
                       CONTIG: tl.constexpr, OUT_BF16: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    if CONTIG:
        xo = offs
    else:
        xo = _nd_offsets(offs, S1, S2, S3, S4, S5, X0, X1, X2, X3, X4, X5)
    x = tl.load(x_ptr + xo, mask=mask, other=0.0)
    xf = x.to(tl.float32)
    y = tl.where(xf > 0.0, xf, xf * slope)
    if OUT_BF16:
        y = _rn_bf16(y)
    tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty), mask=mask)


def _layout(x):
    sizes, (xs,) = _coalesce(list(x.shape), [list(x.stride())])
    if len(sizes) > _MAX_DIMS:
        x = x.contiguous()
        sizes, (xs,) = _coalesce(list(x.shape), [list(x.stride())])
    contig = len(sizes) == 1 and xs[0] == 1
    S, (X,) = _pad(sizes, [xs])
    return x, S[1:], X, contig


def rrelu_with_noise(self, noise, lower=0.125, upper=0.33333333333333331, training=False,
                     generator=None):
    lower = float(lower)
    upper = float(upper)
    out = torch.empty(self.shape, dtype=self.dtype, device=self.device)
    n = self.numel()
    x, S, X, contig = _layout(self)
    BLOCK = 1024
    grid = (max(1, triton.cdiv(n, BLOCK)),)
    if training:
        # seed for the in-kernel Philox stream, drawn from torch's generator
        seed = int(torch.randint(0, 2 ** 31 - 1, (1,), generator=generator).item())
        nbits = noise.element_size() * 8
        _rrelu_train_kernel[grid](x, noise, out, n, seed, lower, upper, *S, *X,
                                  CONTIG=contig, NBITS=nbits,
                                  NOISE_BF16=(noise.dtype == torch.bfloat16),
                                  OUT_BF16=(out.dtype == torch.bfloat16), BLOCK=BLOCK)
    else:
        slope = (lower + upper) / 2.0
        _rrelu_eval_kernel[grid](x, out, n, slope, *S, *X, CONTIG=contig,
                                 OUT_BF16=(out.dtype == torch.bfloat16), BLOCK=BLOCK)
    return out
