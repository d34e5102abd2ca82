"""
aten::i0 / aten::i0.out in Triton: modified Bessel function of the first
kind, order 0.

I0 is even, so we evaluate on |x| with the classic Cephes Chebyshev
expansions (Clenshaw recurrence), the same split PyTorch uses:

    |x| <= 8 : I0(x) = e^|x| * chbevl(|x| / 2 - 2, A[30])
    |x| >  8 : I0(x) = e^|x| * chbevl(32 / |x| - 2, B[25]) / sqrt(|x|)

Evaluation is in fp32 for half / bfloat16 / float inputs and in fp64 for
double inputs, with a single rounding on store.  Arbitrary input / output
strides are handled by coalescing dimensions on the host and passing up to
four (size, stride) pairs to the kernel.
"""
import torch
import triton
import triton.language as tl

MAX_DIMS = 4
MAX_BLOCK_SIZE = 1024


@triton.jit
def _cheb_step(y2, b0, b1, c):
    """One Clenshaw step: returns (b0', b1', b2') = (y2*b0 - b1 + c, b0, b1)."""
    return y2 * b0 - b1 + c, b0, b1


@triton.jit
def _chbevl_i0_small(y):
    # Cephes i0.c, coefficients A (interval [0, 8]), lowest order last
    b0 = tl.zeros_like(y) + (-4.41534164647933937950e-18)
    b1 = tl.zeros_like(y)
    b2 = tl.zeros_like(y)
    b0, b1, b2 = _cheb_step(y, b0, b1, 3.33079451882223809783e-17)
    b0, b1, b2 = _cheb_step(y, b0, b1, -2.43127984654795469359e-16)
    b0, b1, b2 = _cheb_step(y, b0, b1, 1.71539128555513303061e-15)
    b0, b1, b2 = _cheb_step(y, b0, b1, -1.16853328779934516808e-14)
    b0, b1, b2 = _cheb_step(y, b0, b1, 7.67618549860493561688e-14)
    b0, b1, b2 = _cheb_step(y, b0, b1, -4.85644678311192946090e-13)
    b0, b1, b2 = _cheb_step(y, b0, b1, 2.95505266312963983461e-12)
    b0, b1, b2 = _cheb_step(y, b0, b1, -1.72682629144155570723e-11)
    b0, b1, b2 = _cheb_step(y, b0, b1, 9.67580903537323691224e-11)
    b0, b1, b2 = _cheb_step(y, b0, b1, -5.18979560163526290666e-10)
    b0, b1, b2 = _cheb_step(y, b0, b1, 2.65982372468238665035e-9)
    b0, b1, b2 = _cheb_step(y, b0, b1, -1.30002500998624804212e-8)
    b0, b1, b2 = _cheb_step(y, b0, b1, 6.04699502254191894932e-8)
    b0, b1, b2 = _cheb_step(y, b0, b1, -2.67079385394061173391e-7)
    b0, b1, b2 = _cheb_step(y, b0, b1, 1.11738753912010371815e-6)
    b0, b1, b2 = _cheb_step(y, b0, b1, -4.41673835845875056359e-6)
    b0, b1, b2 = _cheb_step(y, b0, b1, 1.64484480707288970893e-5)
    b0, b1, b2 = _cheb_step(y, b0, b1, -5.75419501008210370398e-5)
    b0, b1, b2 = _cheb_step(y, b0, b1, 1.88502885095841655729e-4)
    b0, b1, b2 = _cheb_step(y, b0, b1, -5.76375574538582365885e-4)
    b0, b1, b2 = _cheb_step(y, b0, b1, 1.63947561694133579842e-3)
    b0, b1, b2 = _cheb_step(y, b0, b1, -4.32430999505057594430e-3)
    b0, b1, b2 = _cheb_step(y, b0, b1, 1.05464603945949983183e-2)
    b0, b1, b2 = _cheb_step(y, b0, b1, -2.37374148058994688156e-2)
    b0, b1, b2 = _cheb_step(y, b0, b1, 4.93052842396707084878e-2)
    b0, b1, b2 = _cheb_step(y, b0, b1, -9.49010970480476444210e-2)
    b0, b1, b2 = _cheb_step(y, b0, b1, 1.71620901522208775349e-1)
    b0, b1, b2 = _cheb_step(y, b0, b1, -3.04682672343198398683e-1)
    b0, b1, b2 = _cheb_step(y, b0, b1, 6.76795274409476084995e-1)
    return 0.5 * (b0 - b2)


@triton.jit
def _chbevl_i0_large(y):
    # Cephes i0.c, coefficients B (interval [8, inf)), lowest order last
    b0 = tl.zeros_like(y) + (-7.23318048787475395456e-18)
    b1 = tl.zeros_like(y)
    b2 = tl.zeros_like(y)
    b0, b1, b2 = _cheb_step(y, b0, b1, -4.83050448594418207126e-18)
    b0, b1, b2 = _cheb_step(y, b0, b1, 4.46562142029675999901e-17)
    b0, b1, b2 = _cheb_step(y, b0, b1, 3.46122286769746109310e-17)
    b0, b1, b2 = _cheb_step(y, b0, b1, -2.82762398051658348494e-16)
    b0, b1, b2 = _cheb_step(y, b0, b1, -3.42548561967721913462e-16)
    b0, b1, b2 = _cheb_step(y, b0, b1, 1.77256013305652638360e-15)
    b0, b1, b2 = _cheb_step(y, b0, b1, 3.81168066935262242075e-15)
    b0, b1, b2 = _cheb_step(y, b0, b1, -9.55484669882830764870e-15)
    b0, b1, b2 = _cheb_step(y, b0, b1, -4.15056934728722208663e-14)
    b0, b1, b2 = _cheb_step(y, b0, b1, 1.54008621752140982691e-14)
    b0, b1, b2 = _cheb_step(y, b0, b1, 3.85277838274214270114e-13)
    b0, b1, b2 = _cheb_step(y, b0, b1, 7.18012445138366623367e-13)
    b0, b1, b2 = _cheb_step(y, b0, b1, -1.79417853150680611778e-12)
    b0, b1, b2 = _cheb_step(y, b0, b1, -1.32158118404477131188e-11)
    b0, b1, b2 = _cheb_step(y, b0, b1, -3.14991652796324136454e-11)
    b0, b1, b2 = _cheb_step(y, b0, b1, 1.18891471078464383424e-11)
    b0, b1, b2 = _cheb_step(y, b0, b1, 4.94060238822496958910e-10)
    b0, b1, b2 = _cheb_step(y, b0, b1, 3.39623202570838634515e-9)
    b0, b1, b2 = _cheb_step(y, b0, b1, 2.26666899049817806459e-8)
    b0, b1, b2 = _cheb_step(y, b0, b1, 2.04891858946906374183e-7)
    b0, b1, b2 = _cheb_step(y, b0, b1, 2.89137052083475648297e-6)
    b0, b1, b2 = _cheb_step(y, b0, b1, 6.88975834691682398426e-5)
    b0, b1, b2 = _cheb_step(y, b0, b1, 3.36911647825569408990e-3)
    b0, b1, b2 = _cheb_step(y, b0, b1, 8.04490411014108831608e-1)
    return 0.5 * (b0 - b2)


@triton.jit
def _i0(x):
    ax = tl.abs(x)
    small = _chbevl_i0_small(ax * 0.5 - 2.0)
    # keep the large-argument branch finite for the lanes that will not use it
    ax_l = tl.maximum(ax, 8.0)
    large = _chbevl_i0_large(32.0 / ax_l - 2.0) / tl.sqrt(ax_l)
    return tl.exp(ax) * tl.where(ax <= 8.0, small, large)


@triton.jit
def _i0_kernel(
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
    tl.store(out_ptr + o_off, _i0(x).to(OUT_DTYPE), mask=mask)


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
    _i0_kernel[grid](
        x, out, n,
        sizes[1], sizes[2], sizes[3],
        *sx, *so,
        IS_FLAT=is_flat,
        BLOCK_SIZE=BLOCK_SIZE,
        num_warps=4,
    )
    return out


def _result_dtype(x):
    return x.dtype if x.dtype.is_floating_point else torch.get_default_dtype()


def i0(self):
    # preserve_format keeps a dense permuted input dense -> flat launch
    out = torch.empty_like(self, dtype=_result_dtype(self))
    return _launch_unary(self, out)


def i0_out(self, *, out):
    if out.shape != self.shape:
        out.resize_(self.shape)
    return _launch_unary(self, out)
