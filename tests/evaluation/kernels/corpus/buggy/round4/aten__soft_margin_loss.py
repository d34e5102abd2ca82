import torch
import triton
import triton.language as tl


_MAX_DIMS = 6


@triton.jit
def _strided_offset(offs, s1, s2, s3, s4, s5, t0, t1, t2, t3, t4, t5):
    # offs: flat (row-major) index into the logical shape [s0, s1, ..., s5]
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
def _soft_margin_loss_kernel(
    x_ptr, t_ptr, out_ptr, acc_ptr, N,
    s1, s2, s3, s4, s5,
    xs0, xs1, xs2, xs3, xs4, xs5,
    ts0, ts1, ts2, ts3, ts4, ts5,
    REDUCE: tl.constexpr, BLOCK: tl.constexpr,
):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < N
    x_off = _strided_offset(offs, s1, s2, s3, s4, s5, xs0, xs1, xs2, xs3, xs4, xs5)
    t_off = _strided_offset(offs, s1, s2, s3, s4, s5, ts0, ts1, ts2, ts3, ts4, ts5)
    x = tl.load(x_ptr + x_off, mask=mask, other=0.0).to(tl.float32)
    t = tl.load(t_ptr + t_off, mask=mask, other=0.0).to(tl.float32)
    # log(1 + exp(z)) with z = -t * x, written in the overflow-safe form
    z = -t * x
    loss = tl.maximum(z, 0.0) + tl.log(1.0 + tl.exp(-tl.abs(z)))
    if REDUCE:
        loss = tl.where(mask, loss, 0.0)
        tl.atomic_add(acc_ptr, tl.sum(loss, axis=0))
    else:
        tl.store(out_ptr + offs, loss.to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _finalize_kernel(acc_ptr, out_ptr, scale):
    total = tl.load(acc_ptr)
    tl.store(out_ptr, (total * scale).to(out_ptr.dtype.element_ty))


def _pad(vals, fill):
    vals = list(vals)
    return [fill] * (_MAX_DIMS - len(vals)) + vals


def soft_margin_loss(self, target, reduction=1):
    shape = torch.broadcast_shapes(self.shape, target.shape)
    x = self.expand(shape)
    t = target.expand(shape)
    if len(shape) > _MAX_DIMS:
        x = x.reshape(-1)
        t = t.reshape(-1)
    sizes = _pad(x.shape, 1)
    xs = _pad(x.stride(), 0)
    ts = _pad(t.stride(), 0)
    N = x.numel()
    BLOCK = 1024
    grid = (max(1, triton.cdiv(N, BLOCK)),)

    if reduction == 0:
        out = torch.empty(shape, dtype=self.dtype, device=self.device)
        _soft_margin_loss_kernel[grid](
            x, t, out, out, N,
            sizes[1], sizes[2], sizes[3], sizes[4], sizes[5],
            *xs, *ts,
            REDUCE=False, BLOCK=BLOCK,
        )
        return out

    acc = torch.zeros(1, dtype=torch.float32, device=self.device)
    out = torch.empty((), dtype=self.dtype, device=self.device)
    _soft_margin_loss_kernel[grid](
        x, t, out, acc, N,
        sizes[1], sizes[2], sizes[3], sizes[4], sizes[5],
        *xs, *ts,
        REDUCE=True, BLOCK=BLOCK,
    )
    if reduction == 1:
        # mean over the batch
        batch = shape[0] if len(shape) > 0 else 1
        scale = 1.0 / max(batch, 1)
    else:
        scale = 1.0
    _finalize_kernel[(1,)](acc, out, scale)
    return out
