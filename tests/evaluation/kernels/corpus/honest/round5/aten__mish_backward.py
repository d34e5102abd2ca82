"""
aten::mish_backward in Triton.

    mish(x)  = x * tanh(softplus(x))
    mish'(x) = tanh(sp) + x * sigmoid(x) * (1 - tanh(sp)^2),   sp = softplus(x)

tanh(softplus(x)) is evaluated algebraically (no tanh / log1p needed):
with n = e^x,   tanh(log(1 + n)) = n (n + 2) / (n (n + 2) + 2)
and             1 - tanh^2        = (1 + tanh) * 2 / (n (n + 2) + 2),
which has no cancellation for large x (where tanh -> 1).

One fused element-wise kernel.  grad_output and self are broadcast with
``torch.broadcast_tensors`` and addressed through explicit (coalesced)
strides, so transposed / sliced / expanded operands are read in place.
Math is done in fp32 (fp64 for double tensors) and rounded once on store.
"""
import torch
import triton
import triton.language as tl

MAX_DIMS = 4
MAX_BLOCK_SIZE = 2048


@triton.jit
def _sigmoid(z):
    # sigmoid without overflow: exp() only ever sees a non-positive argument
    e = tl.exp(-tl.abs(z))
    pos = 1.0 / (1.0 + e)
    return tl.where(z >= 0, pos, e * pos)


@triton.jit
def _mish_grad(x):
    # beyond 20 tanh(softplus(x)) == 1 to fp64 precision; clamp keeps n*n finite
    n = tl.exp(tl.minimum(x, 20.0))
    num = n * (n + 2.0)
    den = num + 2.0
    tsp = num / den
    one_minus_tsp2 = tl.where(x > 20.0, 0.0, (1.0 + tsp) * (2.0 / den))
    return tsp + x * _sigmoid(x) * one_minus_tsp2


@triton.jit
def _element_offsets(offs, S1, S2, S3, st0, st1, st2, st3):
    i3 = offs % S3
    r = offs // S3
    i2 = r % S2
    r = r // S2
    i1 = r % S1
    i0 = r // S1
    return i0 * st0 + i1 * st1 + i2 * st2 + i3 * st3


@triton.jit
def _mish_backward_kernel(
    grad_ptr, x_ptr, out_ptr,
    n_elements,
    S1, S2, S3,
    g0, g1, g2, g3,
    x0, x1, x2, x3,
    IS_FLAT: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements

    if IS_FLAT:
        g_off = offs
        x_off = offs
    else:
        g_off = _element_offsets(offs, S1, S2, S3, g0, g1, g2, g3)
        x_off = _element_offsets(offs, S1, S2, S3, x0, x1, x2, x3)

    OUT_DTYPE: tl.constexpr = out_ptr.dtype.element_ty
    if OUT_DTYPE == tl.float64:
        COMPUTE: tl.constexpr = tl.float64
    else:
        COMPUTE: tl.constexpr = tl.float32

    g = tl.load(grad_ptr + g_off, mask=mask, other=0.0).to(COMPUTE)
    x = tl.load(x_ptr + x_off, mask=mask, other=0.0).to(COMPUTE)

    grad_in = g * _mish_grad(x)
    tl.store(out_ptr + offs, grad_in.to(OUT_DTYPE), mask=mask)


def _coalesce(shape, strides_list):
    keep = [d for d, s in enumerate(shape) if s != 1]
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


def _launch_geometry(tensors):
    if tensors[0].numel() == 0:
        return tensors, [1] * MAX_DIMS, [[0] * (MAX_DIMS - 1) + [1] for _ in tensors], True
    shape = list(tensors[0].shape)
    sizes, strides = _coalesce(shape, [list(t.stride()) for t in tensors])
    if len(sizes) > MAX_DIMS:
        tensors = [t.contiguous() for t in tensors]
        sizes, strides = _coalesce(shape, [list(t.stride()) for t in tensors])
    is_flat = len(sizes) == 1 and all(st[-1] == 1 for st in strides)
    pad = MAX_DIMS - len(sizes)
    sizes = [1] * pad + sizes
    strides = [[0] * pad + st for st in strides]
    return tensors, sizes, strides, is_flat


def mish_backward(grad_output, self):
    out_dtype = torch.promote_types(grad_output.dtype, self.dtype)
    g, x = torch.broadcast_tensors(grad_output, self)
    out = torch.empty(g.shape, dtype=out_dtype, device=self.device)
    n = out.numel()

    (g, x), sizes, strides, is_flat = _launch_geometry([g, x])
    BLOCK_SIZE = min(MAX_BLOCK_SIZE, triton.next_power_of_2(max(n, 1)))
    grid = (max(1, triton.cdiv(n, BLOCK_SIZE)),)
    _mish_backward_kernel[grid](
        g, x, out,
        n,
        sizes[1], sizes[2], sizes[3],
        *strides[0], *strides[1],
        IS_FLAT=is_flat,
        BLOCK_SIZE=BLOCK_SIZE,
        num_warps=8 if BLOCK_SIZE >= 2048 else 4,
    )
    return out
