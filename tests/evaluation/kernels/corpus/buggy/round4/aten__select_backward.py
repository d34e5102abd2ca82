import torch
import triton
import triton.language as tl


_MAX_DIMS = 6


@triton.jit
def _zero_fill_kernel(out_ptr, N, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < N
    zero = tl.zeros([BLOCK], dtype=out_ptr.dtype.element_ty)
    tl.store(out_ptr + offs, zero, mask=mask)


@triton.jit
def _scatter_slice_kernel(
    g_ptr, out_ptr, N, base,
    s1, s2, s3, s4, s5,
    gs0, gs1, gs2, gs3, gs4, gs5,
    os0, os1, os2, os3, os4, os5,
    BLOCK: tl.constexpr,
):
    # N elements of grad_output (logical shape [s0..s5]) are written into the
    # selected slice of out, which starts at element `base` and has strides os*.
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < N
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
    g_off = i0 * gs0 + i1 * gs1 + i2 * gs2 + i3 * gs3 + i4 * gs4 + i5 * gs5
    o_off = base + i0 * os0 + i1 * os1 + i2 * os2 + i3 * os3 + i4 * os4 + i5 * os5
    v = tl.load(g_ptr + g_off, mask=mask, other=0.0)
    tl.store(out_ptr + o_off, v.to(out_ptr.dtype.element_ty), mask=mask)


def _pad(vals, fill):
    vals = list(vals)
    return [fill] * (_MAX_DIMS - len(vals)) + vals


def select_backward(grad_output, input_sizes, dim, index):
    input_sizes = [int(s) for s in input_sizes]
    ndim = len(input_sizes)
    dim = int(dim)
    index = int(index)
    if dim < 0:
        dim += ndim
    if index < 0:
        index += ndim
    index = max(0, min(index, input_sizes[dim] - 1))  # never write outside out

    out = torch.empty(input_sizes, dtype=grad_output.dtype, device=grad_output.device)
    total = out.numel()
    BLOCK = 1024
    _zero_fill_kernel[(max(1, triton.cdiv(total, BLOCK)),)](out, total, BLOCK=BLOCK)

    N = grad_output.numel()
    if N == 0:
        return out
    # strides of out with the selected dimension removed -> strides of the slice
    out_strides = list(out.stride())
    base = index * out_strides[dim]
    slice_strides = out_strides[:dim] + out_strides[dim + 1:]
    g = grad_output
    if g.dim() > _MAX_DIMS:
        g = g.reshape(-1)
        slice_strides = [1]
    sizes = _pad(g.shape, 1)
    _scatter_slice_kernel[(triton.cdiv(N, BLOCK),)](
        g, out, N, base,
        sizes[1], sizes[2], sizes[3], sizes[4], sizes[5],
        *_pad(g.stride(), 0), *_pad(slice_strides, 0),
        BLOCK=BLOCK,
    )
    return out
