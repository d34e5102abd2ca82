"""
aten::special_entr / aten::special_entr.out in Triton.

    entr(x) = -x * ln(x)   x > 0
            = 0            x == 0
            = -inf         x < 0
            = nan          x is nan

Evaluation is in fp32 for half / bfloat16 / float inputs and in fp64 for
double inputs, with a single rounding on store.  Arbitrary input / output
strides are handled by coalescing dimensions on the host and passing up to
four (size, stride) pairs to the kernel.
"""
import torch
import triton
import triton.language as tl

MAX_DIMS = 4
MAX_BLOCK_SIZE = 2048


@triton.jit
def _entr(x):
    # -x*ln(x) for x > 0, 0 at 0, -inf below, NaN passes through
    pos = -x * tl.log(tl.where(x > 0, x, 1.0))
    res = tl.where(x > 0, pos, tl.where(x == 0, 0.0, float("-inf")))
    return tl.where(x != x, x, res)


@triton.jit
def _special_entr_kernel(
    x_ptr, out_ptr, n_elements,
    S1, S2, S3,
    x0, x1, x2, x3,
    o0, o1, o2, o3,
    IS_FLAT: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    if IS_FLAT:
        x_off = offs
        o_off = offs
    else:
        i3 = offs % S3
        r = offs // S3
        i2 = r % S2
        r = r // S2
        i1 = r % S1
        i0 = r // S1
        x_off = i0 * x0 + i1 * x1 + i2 * x2 + i3 * x3
        o_off = i0 * o0 + i1 * o1 + i2 * o2 + i3 * o3

    OUT_DTYPE: tl.constexpr = out_ptr.dtype.element_ty
    if OUT_DTYPE == tl.float64:
        COMPUTE: tl.constexpr = tl.float64
    else:
        COMPUTE: tl.constexpr = tl.float32

    x = tl.load(x_ptr + x_off, mask=mask, other=0).to(COMPUTE)
    tl.store(out_ptr + o_off, _entr(x).to(OUT_DTYPE), mask=mask)


# ----------------------------------------------------------------------------
# host side
# ----------------------------------------------------------------------------
def _coalesce(shape, strides_list):
    """Drop size-1 dims, order dims by the output's strides (last entry of
    strides_list, outermost first) and merge dims contiguous for all operands."""
    keep = [d for d, s in enumerate(shape) if s != 1]
    keep.sort(key=lambda d: tuple(abs(st[d]) for st in reversed(strides_list)), reverse=True)
    shape = [shape[d] for d in keep]
    strides_list = [[st[d] for d in keep] for st in strides_list]
    if not shape:
        return [1], [[1] for _ in strides_list]
    sizes = [shape[-1]]
    strides = [[st[-1]] for st in strides_list]
    for d in range(len(shape) - 2, -1, -1):
        if all(st[d] == ns[0] * sizes[0] for st, ns in zip(strides_list, strides)):
            sizes[0] *= shape[d]
        else:
            sizes.insert(0, shape[d])
            for st, ns in zip(strides_list, strides):
                ns.insert(0, st[d])
    return sizes, strides


def _launch_unary(x, out):
    n = x.numel()
    if n == 0:
        sizes, strides, is_flat = [1], [[1], [1]], True
    else:
        sizes, strides = _coalesce(list(x.shape), [list(x.stride()), list(out.stride())])
        if len(sizes) > MAX_DIMS:
            # rare: > 4 non-mergeable dims. Peel the outermost dim and recurse
            # on the (x[i], out[i]) views - no copies, `out` keeps its layout.
            for i in range(x.shape[0]):
                _launch_unary(x[i], out[i])
            return out
        is_flat = len(sizes) == 1 and strides[0][0] == 1 and strides[1][0] == 1
    pad = MAX_DIMS - len(sizes)
    sizes = [1] * pad + sizes
    sx, so = ([0] * pad + st for st in strides)

    BLOCK_SIZE = min(MAX_BLOCK_SIZE, triton.next_power_of_2(max(n, 1)))
    grid = (max(1, triton.cdiv(n, BLOCK_SIZE)),)
    _special_entr_kernel[grid](
        x, out, n,
        sizes[1], sizes[2], sizes[3],
        *sx, *so,
        IS_FLAT=is_flat,
        BLOCK_SIZE=BLOCK_SIZE,
        num_warps=8 if BLOCK_SIZE >= 2048 else 4,
    )
    return out


def _result_dtype(x):
    return x.dtype if x.dtype.is_floating_point else torch.get_default_dtype()


def special_entr(self):
    # preserve_format keeps a dense permuted input dense -> flat launch
    out = torch.empty_like(self, dtype=_result_dtype(self))
    return _launch_unary(self, out)


def special_entr_out(self, *, out):
    if out.shape != self.shape:
        out.resize_(self.shape)
    return _launch_unary(self, out)
