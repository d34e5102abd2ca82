import torch
import triton
import triton.language as tl


@triton.jit
def heaviside_kernel(
    x_ptr, v_ptr, out_ptr, n_elements,
    s1, s2, s3,
    xs0, xs1, xs2, xs3,
    vs0, vs1, vs2, vs3,
    BLOCK: tl.constexpr,
):
    pid = tl.program_id(0)
    idx = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = idx < n_elements

    # unravel the flat (row-major) output index into 4 coordinates
    c3 = idx % s3
    rem = idx // s3
    c2 = rem % s2
    rem = rem // s2
    c1 = rem % s1
    c0 = rem // s1

    x_off = c0 * xs0 + c1 * xs1 + c2 * xs2 + c3 * xs3
    v_off = c0 * vs0 + c1 * vs1 + c2 * vs2 + c3 * vs3

    x = tl.load(x_ptr + x_off, mask=mask, other=0)
    v = tl.load(v_ptr + v_off, mask=mask, other=0)

    out_ty = out_ptr.dtype.element_ty
    step = tl.where(x > 0, 1.0, 0.0)
    res = tl.where(x == 0, v.to(out_ty), step.to(out_ty))
    tl.store(out_ptr + idx, res, mask=mask)


def _padded_strides(t: torch.Tensor):
    st = list(t.stride())
    return [0] * (4 - len(st)) + st


def heaviside(self: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    out_dtype = torch.result_type(self, values)
    if out_dtype.is_complex:
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")

    shape = torch.broadcast_shapes(self.shape, values.shape)
    out = torch.empty(shape, dtype=out_dtype, device=self.device)
    n = out.numel()
    if n == 0:
        return out

    if len(shape) > 4:
        # rare: collapse to 1-d after materializing the broadcast
        x = self.expand(shape).contiguous().view(-1)
        v = values.expand(shape).contiguous().view(-1)
        kshape = [n]
    else:
        x = self.expand(shape)
        v = values.expand(shape)
        kshape = list(shape)
    kshape = [1] * (4 - len(kshape)) + kshape
    xs = _padded_strides(x)
    vs = _padded_strides(v)

    BLOCK = 1024
    grid = (triton.cdiv(n, BLOCK),)
    heaviside_kernel[grid](
        x, v, out, n,
        kshape[1], kshape[2], kshape[3],
        *xs, *vs,
        BLOCK=BLOCK,
    )
    return out
