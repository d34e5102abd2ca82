import torch
import triton
import triton.language as tl

# ---------------------------------------------------------------------------
# aten::rrelu_with_noise_backward
#
#   training and (upper - lower) > 1e-6 :  grad_input = grad_output * noise
#   otherwise                           :  grad_input = self > 0 ? grad_output
#                                                       : grad_output * (lower + upper) / 2
#
# Pointwise kernel over the broadcast output shape, flattened to 1-D
# (xnumel).  Inputs are read through their own strides after collapsing
# mergeable dims, so transposed / sliced / expanded operands need no copies.
# ---------------------------------------------------------------------------

MAX_RANK = 6


def _collapse(shape, strides_list):
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
    return [1] * pad + list(sizes), [[0] * pad + list(st) for st in strides_list]


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


@triton.autotune(
    configs=[
        triton.Config({"XBLOCK": 512}, num_warps=4),
        triton.Config({"XBLOCK": 1024}, num_warps=4),
        triton.Config({"XBLOCK": 2048}, num_warps=8),
        triton.Config({"XBLOCK": 4096}, num_warps=8),
    ],
    key=["xnumel", "RANK", "USE_NOISE"],
)
@triton.jit
def rrelu_with_noise_backward_kernel(
    grad_ptr, self_ptr, noise_ptr, out_ptr, xnumel, negval,
    s1, s2, s3, s4, s5,
    g0, g1, g2, g3, g4, g5,
    x0, x1, x2, x3, x4, x5,
    n0, n1, n2, n3, n4, n5,
    USE_NOISE: tl.constexpr, RANK: tl.constexpr, XBLOCK: tl.constexpr,
):
    xoffset = tl.program_id(0).to(tl.int64) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK).to(tl.int64)
    xmask = xindex < xnumel
    g_off = _offset(xindex, s1, s2, s3, s4, s5, g0, g1, g2, g3, g4, g5, RANK)
    grad = tl.load(grad_ptr + g_off, mask=xmask, other=0.0).to(tl.float32)
    if USE_NOISE:
        n_off = _offset(xindex, s1, s2, s3, s4, s5, n0, n1, n2, n3, n4, n5, RANK)
        noise = tl.load(noise_ptr + n_off, mask=xmask, other=0.0).to(tl.float32)
        res = grad * noise
    else:
        x_off = _offset(xindex, s1, s2, s3, s4, s5, x0, x1, x2, x3, x4, x5, RANK)
        x = tl.load(self_ptr + x_off, mask=xmask, other=0.0).to(tl.float32)
        res = tl.where(x > 0.0, grad, grad * negval)
    # output is dense and row-major: xindex is its linear offset
    tl.store(out_ptr + xindex, res.to(out_ptr.dtype.element_ty), mask=xmask)


def rrelu_with_noise_backward(grad_output, self, noise, lower, upper, training, self_is_result):
    if self_is_result:
        raise NotImplementedError("self_is_result=True is not supported")
    lower = float(lower)
    upper = float(upper)
    use_noise = bool(training) and (upper - lower) > 1e-6

    if use_noise:
        out_shape = torch.broadcast_shapes(grad_output.shape, noise.shape)
        out_dtype = torch.promote_types(grad_output.dtype, noise.dtype)
    else:
        out_shape = torch.broadcast_shapes(grad_output.shape, self.shape)
        out_dtype = torch.promote_types(grad_output.dtype, self.dtype)
    out = torch.empty(out_shape, dtype=out_dtype, device=grad_output.device)
    xnumel = out.numel()
    if xnumel == 0:
        return out

    g = grad_output.expand(out_shape)
    # the operand that the selected branch does not read is described with
    # zero strides so it never constrains the dimension collapsing
    x = self.expand(out_shape) if not use_noise else None
    n = noise.expand(out_shape) if use_noise else None
    zeros = [0] * len(out_shape)
    sizes, (sg, sx, sn) = _collapse(
        list(out_shape),
        [list(g.stride()),
         list(x.stride()) if x is not None else zeros,
         list(n.stride()) if n is not None else zeros],
    )
    rank = len(sizes)
    if rank > MAX_RANK:
        raise NotImplementedError(f"more than {MAX_RANK} non-mergeable dims")
    sizes, (sg, sx, sn) = _pad(sizes, [sg, sx, sn])

    negval = (lower + upper) / 2.0
    grid = lambda meta: (triton.cdiv(xnumel, meta["XBLOCK"]),)
    rrelu_with_noise_backward_kernel[grid](
        g, x if x is not None else g, n if n is not None else g, out, xnumel, negval,
        sizes[1], sizes[2], sizes[3], sizes[4], sizes[5],
        *sg, *sx, *sn,
        USE_NOISE=use_noise, RANK=rank,
    )
    return out
