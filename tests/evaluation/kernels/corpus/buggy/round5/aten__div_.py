import struct

import torch
import triton
import triton.language as tl

# ---------------------------------------------------------------------------
# aten::div_  (Tensor / Scalar / Tensor_mode / Scalar_mode), in place on self.
#
# The work is expressed as a flat 1-D loop over self's logical elements
# (xnumel).  Every operand is described by up to MAX_RANK (size, stride) pairs
# after collapsing mergeable dimensions, so arbitrary views (transposed,
# sliced, broadcast `other`) are handled without materialising copies and the
# result is written back through self's own strides.
#
# Numerics follow the CUDA reference:
#   * true division of two tensors         -> a / b in opmath (IEEE div)
#   * true division by a CPU scalar        -> a * (1 / b)
#   * rounding_mode='trunc'                -> trunc(a / b)   (scalar: trunc(a * inv_b))
#   * rounding_mode='floor'                -> div_floor_floating (fmod based)
#   * integer dtypes with a rounding mode  -> C division with floor fix-up
# Block size / warps are autotuned per problem size (xnumel).
# ---------------------------------------------------------------------------

MAX_RANK = 6

_MODE_TRUE = 0
_MODE_TRUNC = 1
_MODE_FLOOR = 2


def _collapse(shape, strides_list):
    """Drop size-1 dims and merge dims that are contiguous w.r.t. every operand."""
    dims = [(s, [st[i] for st in strides_list]) for i, s in enumerate(shape) if s != 1]
    if not dims:
        return [1], [[0] for _ in strides_list]
    out_sizes = [dims[-1][0]]
    out_strides = [[x] for x in dims[-1][1]]
    for size, sts in reversed(dims[:-1]):
        inner = out_sizes[0]
        if all(sts[k] == out_strides[k][0] * inner for k in range(len(sts))):
            out_sizes[0] = inner * size
        else:
            out_sizes.insert(0, size)
            for k in range(len(sts)):
                out_strides[k].insert(0, sts[k])
    return out_sizes, out_strides


def _pad(sizes, strides_list):
    pad = MAX_RANK - len(sizes)
    sizes = [1] * pad + list(sizes)
    strides_list = [[0] * pad + list(st) for st in strides_list]
    return sizes, strides_list


@triton.jit
def _offset(xindex, s1, s2, s3, s4, s5, t0, t1, t2, t3, t4, t5, RANK: tl.constexpr):
    # row-major unravel of xindex over a shape padded to 6 dims, dotted with strides
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
def _floor_div_float(a, b, inv_b, USE_INV: tl.constexpr, IS_F64: tl.constexpr):
    # c10::div_floor_floating; `%` on floats is C fmod
    mod = a % b
    if USE_INV:
        div = (a - mod) * inv_b
        q = a * inv_b
    else:
        if IS_F64:
            div = (a - mod) / b
            q = a / b
        else:
            div = tl.math.div_rn(a - mod, b)
            q = tl.math.div_rn(a, b)
    div = tl.where((mod != 0) & ((b < 0) != (mod < 0)), div - 1.0, div)
    fl = tl.floor(div)
    fl = tl.where(div - fl > 0.5, fl + 1.0, fl)
    zero_signed = tl.where(q < 0, -0.0, 0.0)
    # q is NaN only when a/b is NaN; keep the NaN in that case
    zero_signed = tl.where(q != q, q, zero_signed)
    res = tl.where(div != 0, fl, zero_signed)
    # division by zero: plain quotient (inf / nan)
    return tl.where(b == 0, q, res)


@triton.jit
def _floor_div_float_exact_mod(a, b, inv_b, USE_INV: tl.constexpr, IS_F64: tl.constexpr):
    # fp32 path: take the remainder in fp64 so it is exact (matches std::fmod)
    if IS_F64:
        return _floor_div_float(a, b, inv_b, USE_INV, IS_F64)
    mod = (a.to(tl.float64) % b.to(tl.float64)).to(tl.float32)
    if USE_INV:
        div = (a - mod) * inv_b
        q = a * inv_b
    else:
        div = tl.math.div_rn(a - mod, b)
        q = tl.math.div_rn(a, b)
    div = tl.where((mod != 0) & ((b < 0) != (mod < 0)), div - 1.0, div)
    fl = tl.floor(div)
    fl = tl.where(div - fl > 0.5, fl + 1.0, fl)
    zero_signed = tl.where(q < 0, -0.0, 0.0)
    zero_signed = tl.where(q != q, q, zero_signed)
    res = tl.where(div != 0, fl, zero_signed)
    return tl.where(b == 0, q, res)


@triton.jit
def _div_int(a, b, MODE: tl.constexpr):
    # integer division: `//` and `%` lower to C (truncating) sdiv / srem
    q = a // b
    if MODE == 2:
        r = a % b
        q = tl.where((r != 0) & ((a < 0) != (b < 0)), q - 1, q)
    return q


@triton.autotune(
    configs=[
        triton.Config({"XBLOCK": 256}, num_warps=4),
        triton.Config({"XBLOCK": 512}, num_warps=4),
        triton.Config({"XBLOCK": 1024}, num_warps=4),
        triton.Config({"XBLOCK": 2048}, num_warps=8),
    ],
    key=["xnumel", "RANK"],
)
@triton.jit
def div_tensor_inplace_kernel(
    self_ptr, other_ptr, xnumel,
    s1, s2, s3, s4, s5,
    a0, a1, a2, a3, a4, a5,
    b0, b1, b2, b3, b4, b5,
    MODE: tl.constexpr, IS_INT: tl.constexpr, IS_F64: tl.constexpr,
    Q_ROUND: tl.constexpr, RANK: tl.constexpr, XBLOCK: tl.constexpr,
):
    xoffset = tl.program_id(0).to(tl.int64) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK).to(tl.int64)
    xmask = xindex < xnumel
    self_off = _offset(xindex, s1, s2, s3, s4, s5, a0, a1, a2, a3, a4, a5, RANK)
    other_off = _offset(xindex, s1, s2, s3, s4, s5, b0, b1, b2, b3, b4, b5, RANK)
    x = tl.load(self_ptr + self_off, mask=xmask, other=1)
    y = tl.load(other_ptr + other_off, mask=xmask, other=1)
    if IS_INT:
        a = x.to(tl.int64)
        b = tl.where(xmask, y.to(tl.int64), 1)
        out = _div_int(a, b, MODE)
    else:
        if IS_F64:
            a = x.to(tl.float64)
            b = y.to(tl.float64)
            q = a / b
        else:
            a = x.to(tl.float32)
            b = y.to(tl.float32)
            q = tl.math.div_rn(a, b)
        if MODE == 0:
            out = q
        elif MODE == 1:
            # the reference computes trunc(scalar_t(a / b)): for reduced
            # precision common dtypes the quotient is rounded before truncation
            if Q_ROUND == 1:
                q = q.to(tl.float16, fp_downcast_rounding="rtne").to(tl.float32)
            elif Q_ROUND == 2:
                # round-to-nearest-even onto the bfloat16 grid, kept in fp32
                qb = q.to(tl.int32, bitcast=True)
                qb = (qb + (0x7FFF + ((qb >> 16) & 1))) & -65536
                q = qb.to(tl.float32, bitcast=True)
            out = tl.where(q < 0, tl.ceil(q), tl.floor(q))
        else:
            out = _floor_div_float_exact_mod(a, b, q, False, IS_F64)
    tl.store(self_ptr + self_off, out.to(self_ptr.dtype.element_ty), mask=xmask)


@triton.autotune(
    configs=[
        triton.Config({"XBLOCK": 256}, num_warps=4),
        triton.Config({"XBLOCK": 512}, num_warps=4),
        triton.Config({"XBLOCK": 1024}, num_warps=4),
        triton.Config({"XBLOCK": 2048}, num_warps=8),
    ],
    key=["xnumel", "RANK"],
)
@triton.jit
def div_scalar_inplace_kernel(
    self_ptr, other_bits, xnumel,
    s1, s2, s3, s4, s5,
    a0, a1, a2, a3, a4, a5,
    MODE: tl.constexpr, IS_INT: tl.constexpr, IS_F64: tl.constexpr,
    RANK: tl.constexpr, XBLOCK: tl.constexpr,
):
    xoffset = tl.program_id(0).to(tl.int64) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK).to(tl.int64)
    xmask = xindex < xnumel
    self_off = _offset(xindex, s1, s2, s3, s4, s5, a0, a1, a2, a3, a4, a5, RANK)
    x = tl.load(self_ptr + self_off, mask=xmask, other=1)
    if IS_INT:
        # other_bits carries the integer scalar itself
        a = x.to(tl.int64)
        b = tl.full([XBLOCK], 0, tl.int64) + other_bits
        out = _div_int(a, b, MODE)
    else:
        # other_bits carries the IEEE-754 bits of the double scalar
        bd = (tl.full([XBLOCK], 0, tl.int64) + other_bits).to(tl.float64, bitcast=True)
        if IS_F64:
            a = x.to(tl.float64)
            b = bd
            inv_b = 1.0 / b
        else:
            a = x.to(tl.float32)
            b = bd.to(tl.float32)
            inv_b = tl.math.div_rn(tl.full([XBLOCK], 1.0, tl.float32), b)
        if MODE == 0:
            out = a * inv_b
        elif MODE == 1:
            q = a * inv_b
            out = tl.where(q < 0, tl.ceil(q), tl.floor(q))
        else:
            out = _floor_div_float_exact_mod(a, b, inv_b, True, IS_F64)
    tl.store(self_ptr + self_off, out.to(self_ptr.dtype.element_ty), mask=xmask)


def _mode_id(rounding_mode):
    if rounding_mode is None:
        return _MODE_TRUE
    if rounding_mode == "trunc":
        return _MODE_TRUNC
    if rounding_mode == "floor":
        return _MODE_FLOOR
    raise ValueError(
        "div expected rounding_mode to be one of None, 'trunc', or 'floor' "
        f"but found '{rounding_mode}'"
    )


def _check_dtype(self, mode, other_is_float):
    if self.dtype.is_complex:
        raise NotImplementedError("complex div_ is not supported")
    is_int = not self.dtype.is_floating_point
    if is_int and (mode == _MODE_TRUE or other_is_float):
        raise RuntimeError(
            f"result type Float can't be cast to the desired output type {self.dtype}"
        )
    if self.dtype == torch.bool:
        raise RuntimeError("div_ is not supported for bool tensors")
    return is_int


def _common_dtype(self, other):
    # type promotion where a 0-dim `other` of the same category does not
    # participate (it behaves like a wrapped number)
    same_cat = self.dtype.is_floating_point == other.dtype.is_floating_point
    if other.dim() == 0 and self.dim() > 0 and same_cat:
        return self.dtype
    return torch.promote_types(self.dtype, other.dtype)


def _launch_tensor(self, other, mode):
    if not isinstance(other, torch.Tensor):
        return _launch_scalar(self, other, mode)
    is_int = _check_dtype(self, mode, other.dtype.is_floating_point)
    xnumel = self.numel()
    if xnumel == 0:
        return self
    if other.device != self.device:
        # 0-dim CPU tensors behave like scalars
        if other.dim() == 0:
            return _launch_scalar(self, other.item(), mode)
        raise RuntimeError("expected other on the same device as self")
    other_b = other.expand(self.shape)
    sizes, (st_a, st_b) = _collapse(list(self.shape), [list(self.stride()), list(other_b.stride())])
    rank = len(sizes)
    if rank > MAX_RANK:
        raise NotImplementedError(f"div_: more than {MAX_RANK} non-mergeable dims")
    sizes, (st_a, st_b) = _pad(sizes, [st_a, st_b])
    is_f64 = self.dtype == torch.float64 or other.dtype == torch.float64
    common = _common_dtype(self, other)
    q_round = 1 if common == torch.float16 else (2 if common == torch.bfloat16 else 0)
    grid = lambda meta: (triton.cdiv(xnumel, meta["XBLOCK"]),)
    div_tensor_inplace_kernel[grid](
        self, other_b, xnumel,
        sizes[1], sizes[2], sizes[3], sizes[4], sizes[5],
        *st_a, *st_b,
        MODE=mode, IS_INT=is_int, IS_F64=is_f64, Q_ROUND=q_round, RANK=rank,
    )
    return self


def _launch_scalar(self, other, mode):
    if isinstance(other, torch.Tensor):
        other = other.item()
    if isinstance(other, complex):
        raise NotImplementedError("complex scalar is not supported")
    other_is_float = isinstance(other, float)
    is_int = _check_dtype(self, mode, other_is_float)
    xnumel = self.numel()
    if xnumel == 0:
        return self
    if is_int:
        bits = int(other)
        if bits == 0:
            raise ZeroDivisionError("ZeroDivisionError")
    else:
        bits = struct.unpack("<q", struct.pack("<d", float(other)))[0]
    sizes, (st_a,) = _collapse(list(self.shape), [list(self.stride())])
    rank = len(sizes)
    if rank > MAX_RANK:
        raise NotImplementedError(f"div_: more than {MAX_RANK} non-mergeable dims")
    sizes, (st_a,) = _pad(sizes, [st_a])
    grid = lambda meta: (triton.cdiv(xnumel, meta["XBLOCK"]),)
    div_scalar_inplace_kernel[grid](
        self, bits, xnumel,
        sizes[1], sizes[2], sizes[3], sizes[4], sizes[5],
        *st_a,
        MODE=mode, IS_INT=is_int, IS_F64=self.dtype == torch.float64, RANK=rank,
    )
    return self


def div__Tensor(self, other):
    return _launch_tensor(self, other, _MODE_TRUE)


def div__Scalar(self, other):
    return _launch_scalar(self, other, _MODE_TRUE)


def div__Tensor_mode(self, other, *, rounding_mode):
    return _launch_tensor(self, other, _mode_id(rounding_mode))


def div__Scalar_mode(self, other, *, rounding_mode):
    return _launch_scalar(self, other, _mode_id(rounding_mode))
