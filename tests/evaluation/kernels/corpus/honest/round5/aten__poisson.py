import torch
import triton
import triton.language as tl

# ---------------------------------------------------------------------------
# aten::poisson(self, generator=None)
#
# One Poisson(rate) draw per element, written as a whole number in self's
# dtype.  Per element, a Philox4x32 stream keyed by (seed) with counter
# (element index lo/hi, iteration, call offset) feeds:
#   rate < 10  : multiplication (Knuth) method, four uniforms per iteration
#   rate >= 10 : PTRS transformed rejection (Hoermann 1993), two attempts per
#                iteration, evaluated in fp64
# The block loops until every lane has produced its sample.
#
# Seed / offset come from the caller's generator (or the device default
# generator): the Philox offset is advanced on every call, so successive calls
# draw different numbers, and manual_seed() makes them reproducible.
# ---------------------------------------------------------------------------

MAX_RANK = 6
_PTRS_THRESHOLD = 10.0
_OFFSET_INCREMENT = 4


def _collapse(shape, strides):
    dims = [(s, st) for s, st in zip(shape, strides) if s != 1]
    if not dims:
        return [1], [0]
    sizes, strs = [dims[-1][0]], [dims[-1][1]]
    for s, st in reversed(dims[:-1]):
        if st == strs[0] * sizes[0]:
            sizes[0] *= s
        else:
            sizes.insert(0, s)
            strs.insert(0, st)
    return sizes, strs


@triton.jit
def _offset(xindex, s1, s2, s3, s4, s5, t0, t1, t2, t3, t4, t5, RANK: tl.constexpr):
    r = xindex
    off = (r % s5) * t5
    if RANK >= 2:
        r = r // s5
        off += (r % s4) * t4
    if RANK >= 3:
        r = r // s4
        off += (r % s3) * t3
    if RANK >= 4:
        r = r // s3
        off += (r % s2) * t2
    if RANK >= 5:
        r = r // s2
        off += (r % s1) * t1
    if RANK >= 6:
        r = r // s1
        off += r * t0
    return off


@triton.jit
def _log_factorial(k):
    # log(k!) for integral k >= 0 (fp64): exact table below 10, Stirling above
    kk = tl.maximum(k, 1.0)
    stirling = (kk + 0.5) * tl.log(kk) - kk + 0.91893853320467274178 \
        + 1.0 / (12.0 * kk) - 1.0 / (360.0 * kk * kk * kk) + 1.0 / (1260.0 * kk * kk * kk * kk * kk)
    small = tl.where(k < 1.5, 0.0,
            tl.where(k < 2.5, 0.69314718055994530942,
            tl.where(k < 3.5, 1.79175946922805500081,
            tl.where(k < 4.5, 3.17805383034794561964,
            tl.where(k < 5.5, 4.78749174278204599425,
            tl.where(k < 6.5, 6.57925121201010099506,
            tl.where(k < 7.5, 8.52516136106541430017,
            tl.where(k < 8.5, 10.60460290274525022842,
                     12.80182748008146961121))))))))
    return tl.where(k < 9.5, small, stirling)


@triton.jit
def _uniform(u):
    # uint32 -> float in [0, 1)
    return tl.random.uint_to_uniform_float(u)


@triton.jit
def _ptrs_attempt(U, V, lam, slam, loglam, a, b, invalpha, vr):
    # one PTRS attempt in fp64; returns (accepted, k)
    U = U - 0.5
    us = 0.5 - tl.abs(U)
    k = tl.floor((2.0 * a / us + b) * U + lam + 0.43)
    fast = (us >= 0.07) & (V <= vr)
    reject = (k < 0.0) | ((us < 0.013) & (V > us))
    lhs = tl.log(V) + tl.log(invalpha) - tl.log(a / (us * us) + b)
    rhs = -lam + k * loglam - _log_factorial(tl.maximum(k, 0.0))
    ok = fast | ((~reject) & (lhs <= rhs))
    return ok, k


@triton.jit(do_not_specialize=["seed", "philox_offset"])
def poisson_kernel(
    in_ptr, out_ptr, xnumel, seed, philox_offset,
    s1, s2, s3, s4, s5,
    t0, t1, t2, t3, t4, t5,
    RANK: tl.constexpr, PTRS_THRESHOLD: tl.constexpr, MAX_ITERS: tl.constexpr,
    XBLOCK: tl.constexpr,
):
    xoffset = tl.program_id(0).to(tl.int64) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK).to(tl.int64)
    xmask = xindex < xnumel
    src = _offset(xindex, s1, s2, s3, s4, s5, t0, t1, t2, t3, t4, t5, RANK)
    lam32 = tl.load(in_ptr + src, mask=xmask, other=0.0).to(tl.float32)
    lam32 = tl.where(lam32 > 0.0, lam32, 0.0)  # also maps NaN -> 0

    use_ptrs = lam32 >= PTRS_THRESHOLD
    # Knuth state
    knuth_active = xmask & (lam32 > 0.0) & (~use_ptrs)
    limit = tl.exp(-lam32)
    prod = tl.full([XBLOCK], 1.0, tl.float32)
    k_knuth = tl.zeros([XBLOCK], tl.float32)

    # PTRS constants (fp64)
    lam = lam32.to(tl.float64)
    lam_p = tl.maximum(lam, PTRS_THRESHOLD)
    slam = tl.sqrt(lam_p)
    loglam = tl.log(lam_p)
    b = 0.931 + 2.53 * slam
    a = -0.059 + 0.02483 * b
    invalpha = 1.1239 + 1.1328 / (b - 3.4)
    vr = 0.9277 - 3.6224 / (b - 2.0)
    ptrs_active = xmask & use_ptrs
    k_ptrs = tl.zeros([XBLOCK], tl.float64)

    c0 = (xindex & 0xFFFFFFFF).to(tl.uint32)
    c1 = (xindex >> 32).to(tl.uint32)
    c3 = (tl.zeros([XBLOCK], tl.int64) + philox_offset).to(tl.uint32)

    it = tl.full([], 0, tl.int32)
    n_active = tl.sum((knuth_active | ptrs_active).to(tl.int32), 0)
    while (n_active > 0) & (it < MAX_ITERS):
        c2 = (tl.zeros([XBLOCK], tl.int32) + it).to(tl.uint32)
        r0, r1, r2, r3 = tl.philox(seed, c0, c1, c2, c3)
        u0 = _uniform(r0)
        u1 = _uniform(r1)
        u2 = _uniform(r2)
        u3 = _uniform(r3)

        # Knuth: multiply uniforms until the product drops to exp(-rate)
        for u in tl.static_range(4):
            if u == 0:
                uu = u0
            elif u == 1:
                uu = u1
            elif u == 2:
                uu = u2
            else:
                uu = u3
            prod = tl.where(knuth_active, prod * uu, prod)
            keep = knuth_active & (prod > limit)
            k_knuth = tl.where(keep, k_knuth + 1.0, k_knuth)
            knuth_active = keep

        # PTRS: two attempts per Philox block
        ok0, k0 = _ptrs_attempt(u0.to(tl.float64), u1.to(tl.float64), lam, slam, loglam, a, b, invalpha, vr)
        take0 = ptrs_active & ok0
        k_ptrs = tl.where(take0, k0, k_ptrs)
        ptrs_active = ptrs_active & (~ok0)
        ok1, k1 = _ptrs_attempt(u2.to(tl.float64), u3.to(tl.float64), lam, slam, loglam, a, b, invalpha, vr)
        take1 = ptrs_active & ok1
        k_ptrs = tl.where(take1, k1, k_ptrs)
        ptrs_active = ptrs_active & (~ok1)

        it += 1
        n_active = tl.sum((knuth_active | ptrs_active).to(tl.int32), 0)

    result = tl.where(use_ptrs, k_ptrs.to(tl.float32), k_knuth)
    tl.store(out_ptr + xindex, result.to(out_ptr.dtype.element_ty), mask=xmask)


def _philox_seed_offset(device, generator, increment):
    gen = generator
    if gen is None:
        if device.type == "cuda":
            idx = device.index if device.index is not None else torch.cuda.current_device()
            gen = torch.cuda.default_generators[idx]
        else:
            gen = torch.default_generator
    try:
        # CUDA (Philox) generators: reserve `increment` counters of this stream
        offset = gen.get_offset()
        gen.set_offset(offset + increment)
        return gen.initial_seed(), offset
    except (RuntimeError, AttributeError, NotImplementedError):
        # generators without a Philox offset: draw a fresh 62-bit seed from them
        seed = torch.randint(0, 2 ** 62, (1,), generator=gen, device=gen.device).item()
        return seed, 0


def poisson(self, generator=None):
    if not self.dtype.is_floating_point:
        raise RuntimeError(f"poisson not implemented for '{self.dtype}'")
    out = torch.empty(self.shape, dtype=self.dtype, device=self.device)
    xnumel = self.numel()
    if xnumel == 0:
        return out
    seed, offset = _philox_seed_offset(self.device, generator, _OFFSET_INCREMENT)
    seed = seed & 0x7FFFFFFFFFFFFFFF
    offset = offset & 0xFFFFFFFF

    sizes, strides = _collapse(list(self.shape), list(self.stride()))
    rank = len(sizes)
    if rank > MAX_RANK:
        raise NotImplementedError(f"poisson: more than {MAX_RANK} non-mergeable dims")
    pad = MAX_RANK - rank
    sizes = [1] * pad + sizes
    strides = [0] * pad + strides

    XBLOCK = 256
    grid = (triton.cdiv(xnumel, XBLOCK),)
    poisson_kernel[grid](
        self, out, xnumel, seed, offset,
        sizes[1], sizes[2], sizes[3], sizes[4], sizes[5],
        *strides,
        RANK=rank, PTRS_THRESHOLD=_PTRS_THRESHOLD, MAX_ITERS=4096,
        XBLOCK=XBLOCK, num_warps=4,
    )
    return out
