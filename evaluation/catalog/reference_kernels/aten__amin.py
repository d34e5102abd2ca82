"""aten::amin: minimum over dims (all dims when dim is empty)."""

import torch
import triton
import triton.language as tl

# Kept dims (up to 3) index one output each; reduced dims (up to 3) are walked as one flat range, split over
# several programs when there are few outputs (stage 1 writes float32 partials, stage 2 combines them).
BLOCK_SIZE = 1024
TARGET_PROGRAMS = 1024
OP_SUM, OP_MIN, OP_ARGMAX = 0, 1, 2


@triton.jit
def _partial_kernel(x_ptr, part_ptr, part_idx_ptr, K1, K2, ks0, ks1, ks2, R, R1, R2, rs0, rs1, rs2, chunk, n_split,
                    OP: tl.constexpr, BLOCK: tl.constexpr):
    kept = tl.program_id(0)
    split = tl.program_id(1)
    k2 = kept % K2
    rest = kept // K2
    k1 = rest % K1
    k0 = rest // K1
    base = k0.to(tl.int64) * ks0 + k1.to(tl.int64) * ks1 + k2.to(tl.int64) * ks2
    start = split.to(tl.int64) * chunk
    if OP == 0:
        acc = tl.zeros([BLOCK], tl.float32)
    elif OP == 1:
        acc = tl.full([BLOCK], float("inf"), tl.float32)
    else:
        acc = tl.full([BLOCK], float("-inf"), tl.float32)
    best = tl.zeros([BLOCK], tl.int64)
    for offset in range(0, chunk, BLOCK):
        r = start + offset + tl.arange(0, BLOCK)
        mask = (r < R) & (r < start + chunk)
        r2 = r % R2
        t = r // R2
        r1 = t % R1
        r0 = t // R1
        values = tl.load(x_ptr + base + r0 * rs0 + r1 * rs1 + r2 * rs2, mask=mask, other=0.0).to(tl.float32)
        if OP == 0:
            acc += tl.where(mask, values, 0.0)
        elif OP == 1:
            acc = tl.minimum(acc, tl.where(mask, values, float("inf")))
        else:
            better = mask & (values > acc)
            acc = tl.where(better, values, acc)
            best = tl.where(better, r, best)
    slot = kept.to(tl.int64) * n_split + split
    if OP == 0:
        tl.store(part_ptr + slot, tl.sum(acc, axis=0))
    elif OP == 1:
        tl.store(part_ptr + slot, tl.min(acc, axis=0))
    else:
        top = tl.max(acc, axis=0)
        tl.store(part_ptr + slot, top)
        tl.store(part_idx_ptr + slot, tl.min(tl.where(acc == top, best, 9223372036854775807), axis=0))


@triton.jit
def _final_kernel(part_ptr, part_idx_ptr, out_ptr, n_split, scale, OP: tl.constexpr, BLOCK_S: tl.constexpr):
    kept = tl.program_id(0)
    s = tl.arange(0, BLOCK_S)
    mask = s < n_split
    slots = kept.to(tl.int64) * n_split + s
    if OP == 0:
        total = tl.sum(tl.load(part_ptr + slots, mask=mask, other=0.0), axis=0) * scale
        tl.store(out_ptr + kept, total.to(out_ptr.dtype.element_ty))
    elif OP == 1:
        low = tl.min(tl.load(part_ptr + slots, mask=mask, other=float("inf")), axis=0)
        tl.store(out_ptr + kept, low.to(out_ptr.dtype.element_ty))
    else:
        values = tl.load(part_ptr + slots, mask=mask, other=float("-inf"))
        indices = tl.load(part_idx_ptr + slots, mask=mask, other=9223372036854775807)
        top = tl.max(values, axis=0)
        tl.store(out_ptr + kept, tl.min(tl.where(values == top, indices, 9223372036854775807), axis=0))


def _pad3(sizes, strides):
    if len(sizes) > 3:
        raise NotImplementedError("at most 3 kept and 3 reduced dims")
    pad = 3 - len(sizes)
    return [1] * pad + list(sizes), [0] * pad + list(strides)


def _reduce(x, dims, keepdim, op, out_dtype):
    """Reduce x over dims (None or empty: all dims) with op; mean is OP_SUM with scale 1 / count."""
    ndim = x.dim()
    if isinstance(dims, int):
        dims = [dims]
    if dims is None or len(dims) == 0:
        dims = list(range(ndim))
    dims = sorted({d % ndim for d in dims}) if ndim else []
    kept = [d for d in range(ndim) if d not in dims]
    out_shape = [x.shape[d] for d in kept]
    keep_shape = [1 if d in dims else x.shape[d] for d in range(ndim)]
    out = torch.empty(out_shape, dtype=out_dtype, device=x.device)
    kept_sizes, kept_strides = _pad3([x.shape[d] for d in kept], [x.stride(d) for d in kept])
    red_sizes, red_strides = _pad3([x.shape[d] for d in dims], [x.stride(d) for d in dims])
    num_kept = kept_sizes[0] * kept_sizes[1] * kept_sizes[2]
    count = red_sizes[0] * red_sizes[1] * red_sizes[2]
    if num_kept == 0:
        return out.view(keep_shape) if keepdim else out
    n_split = max(1, min(triton.cdiv(TARGET_PROGRAMS, num_kept), triton.cdiv(count, BLOCK_SIZE), 1024))
    chunk = triton.cdiv(triton.cdiv(max(count, 1), n_split), BLOCK_SIZE) * BLOCK_SIZE
    n_split = max(1, triton.cdiv(count, chunk))
    partial = torch.empty(num_kept * n_split, dtype=torch.float32, device=x.device)
    partial_idx = torch.empty(num_kept * n_split if op == OP_ARGMAX else 1, dtype=torch.int64, device=x.device)
    _partial_kernel[(num_kept, n_split)](x, partial, partial_idx, kept_sizes[1], kept_sizes[2], *kept_strides,
                                         count, red_sizes[1], red_sizes[2], *red_strides, chunk, n_split,
                                         OP=op, BLOCK=BLOCK_SIZE)
    return out, partial, partial_idx, n_split, count, keep_shape


def _finish(out, partial, partial_idx, n_split, op, scale, keep_shape, keepdim):
    num_kept = out.numel()
    _final_kernel[(num_kept,)](partial, partial_idx, out, n_split, scale, OP=op,
                               BLOCK_S=triton.next_power_of_2(n_split))
    return out.view(keep_shape) if keepdim else out


def _run(x, dims, keepdim, op, out_dtype, mean=False):
    result = _reduce(x, dims, keepdim, op, out_dtype)
    if not isinstance(result, tuple):
        return result
    out, partial, partial_idx, n_split, count, keep_shape = result
    return _finish(out, partial, partial_idx, n_split, op, (1.0 / count) if mean else 1.0, keep_shape, keepdim)


def amin(self, dim=(), keepdim=False):
    return _run(self, list(dim), keepdim, OP_MIN, self.dtype)
