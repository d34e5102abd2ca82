"""aten::huber_loss, reduction 0 (none) / 1 (mean) / 2 (sum).

For mean and sum, two launches: the first writes one fp32 partial per block, the second adds the
partials (and divides for mean). No atomics, so the result is deterministic."""
import enum

import torch
import triton
import triton.language as tl


class Reduction(enum.IntEnum):
    NONE = 0
    MEAN = 1
    SUM = 2


@triton.jit
def _huber(d, delta):
    a = tl.abs(d)
    return tl.where(a < delta, 0.5 * d * d, delta * (a - 0.5 * delta))


@triton.jit
def huber_elementwise(x_ptr, t_ptr, out_ptr, partial_ptr, n, delta,
                      REDUCE: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    keep = offs < n
    x = tl.load(x_ptr + offs, mask=keep, other=0.0).to(tl.float32)
    t = tl.load(t_ptr + offs, mask=keep, other=0.0).to(tl.float32)
    loss = _huber(x - t, delta)
    if REDUCE:
        tl.store(partial_ptr + pid, tl.sum(tl.where(keep, loss, 0.0), axis=0))
    else:
        tl.store(out_ptr + offs, loss.to(out_ptr.dtype.element_ty), mask=keep)


@triton.jit
def finish_reduction(partial_ptr, out_ptr, count, scale, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, count, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(partial_ptr + offs, mask=offs < count, other=0.0)
    tl.store(out_ptr, (tl.sum(acc, axis=0) * scale).to(out_ptr.dtype.element_ty))


def huber_loss(self, target, reduction=Reduction.MEAN, delta=1.0):
    reduction = Reduction(reduction)
    x = self.contiguous()
    t = target.expand(self.shape).contiguous()
    n = x.numel()
    BLOCK = 1024
    blocks = max(1, triton.cdiv(n, BLOCK))
    if reduction == Reduction.NONE:
        out = torch.empty(self.shape, dtype=self.dtype, device=self.device)
        if n:
            huber_elementwise[(blocks,)](x, t, out, out, n, float(delta), REDUCE=False, BLOCK=BLOCK)
        return out
    partials = torch.empty(blocks, dtype=torch.float32, device=self.device)
    out = torch.empty((), dtype=self.dtype, device=self.device)
    huber_elementwise[(blocks,)](x, t, out, partials, n, float(delta), REDUCE=True, BLOCK=BLOCK)
    scale = 1.0 / n if (reduction == Reduction.MEAN and n) else 1.0
    if reduction == Reduction.MEAN and n == 0:
        scale = float("nan")
    finish_reduction[(1,)](partials, out, blocks, scale, BLOCK=min(1024, triton.next_power_of_2(blocks)))
    return out
