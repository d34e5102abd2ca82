"""
Fused binary cross-entropy with logits (aten::binary_cross_entropy_with_logits).

Design
------
* One fused element-wise kernel computes the per-element loss (optionally
  scaled by ``weight`` and with the positive-class ``pos_weight``) and, for
  reductions, writes one fp32/fp64 partial sum per program.
* A second tiny kernel folds the partial sums into the 0-d result
  (``sum`` or ``mean``) - deterministic, no atomics.
* Inputs are broadcast with ``torch.broadcast_tensors`` (stride-0 views, no
  copies) and addressed through explicit strides, so transposed / sliced /
  expanded operands never get materialised.
* Math runs in fp32 (fp64 for double inputs).  The loss is built with the
  same sequence of roundings as the eager ATen composite
  (log_sigmoid -> log_weight -> (1 - y) * x - ... -> * weight), so half
  precision results line up with the reference element for element.
"""
import torch
import triton
import triton.language as tl

_MAX_DIMS = 4
_BLOCK_SIZE = 2048
_NUM_WARPS = 8
_MAX_FINAL_BLOCK = 1024


# ----------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------
@triton.jit
def _unravel_index(offs, S1, S2, S3):
    """Split a flat (row-major) index into 4 coordinates."""
    i3 = offs % S3
    r = offs // S3
    i2 = r % S2
    r = r // S2
    i1 = r % S1
    i0 = r // S1
    return i0, i1, i2, i3


@triton.jit
def _round_to(x, DTYPE: tl.constexpr):
    """Round an fp32/fp64 intermediate to the storage dtype (mirrors eager op boundaries)."""
    return x.to(DTYPE).to(x.dtype)


@triton.jit
def _log1p_small(z):
    """Accurate log(1 + z) for z in [0, 1] (Goldberg's trick)."""
    u = 1.0 + z
    d = u - 1.0
    return tl.where(d == 0.0, z, tl.log(u) * (z / d))


@triton.jit
def _log_sigmoid(x):
    # log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)): never overflows.
    return tl.minimum(x, 0.0) - _log1p_small(tl.exp(-tl.abs(x)))


# ----------------------------------------------------------------------------
# kernels
# ----------------------------------------------------------------------------
@triton.jit
def _bce_with_logits_kernel(
    x_ptr, y_ptr, w_ptr, pw_ptr,
    out_ptr, partial_ptr,
    N, S1, S2, S3,
    sx0, sx1, sx2, sx3,
    sy0, sy1, sy2, sy3,
    sw0, sw1, sw2, sw3,
    sp0, sp1, sp2, sp3,
    HAS_WEIGHT: tl.constexpr,
    HAS_POS_WEIGHT: tl.constexpr,
    REDUCTION: tl.constexpr,  # 0 none, 1 mean, 2 sum
    IS_FLAT: tl.constexpr,    # every operand is dense row-major
    BLOCK_SIZE: tl.constexpr,
):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < N

    if IS_FLAT:
        x_off = offs
        y_off = offs
        w_off = offs
        p_off = offs
    else:
        i0, i1, i2, i3 = _unravel_index(offs, S1, S2, S3)
        x_off = i0 * sx0 + i1 * sx1 + i2 * sx2 + i3 * sx3
        y_off = i0 * sy0 + i1 * sy1 + i2 * sy2 + i3 * sy3
        w_off = i0 * sw0 + i1 * sw1 + i2 * sw2 + i3 * sw3
        p_off = i0 * sp0 + i1 * sp1 + i2 * sp2 + i3 * sp3

    OUT_DTYPE: tl.constexpr = out_ptr.dtype.element_ty
    if OUT_DTYPE == tl.float64:
        COMPUTE: tl.constexpr = tl.float64
    else:
        COMPUTE: tl.constexpr = tl.float32

    x = tl.load(x_ptr + x_off, mask=mask, other=0.0).to(COMPUTE)
    y = tl.load(y_ptr + y_off, mask=mask, other=0.0).to(COMPUTE)

    log_sig = _round_to(_log_sigmoid(x), OUT_DTYPE)
    if HAS_POS_WEIGHT:
        pw = tl.load(pw_ptr + p_off, mask=mask, other=1.0).to(COMPUTE)
        # log_weight = (pos_weight - 1) * y + 1
        log_weight = _round_to(pw - 1.0, OUT_DTYPE)
        log_weight = _round_to(log_weight * y, OUT_DTYPE)
        log_weight = _round_to(log_weight + 1.0, OUT_DTYPE)
        log_sig = _round_to(log_sig * log_weight, OUT_DTYPE)

    loss = _round_to(1.0 - y, OUT_DTYPE)
    loss = _round_to(loss * x, OUT_DTYPE)
    loss = _round_to(loss - log_sig, OUT_DTYPE)
    if HAS_WEIGHT:
        w = tl.load(w_ptr + w_off, mask=mask, other=0.0).to(COMPUTE)
        loss = _round_to(loss * w, OUT_DTYPE)

    if REDUCTION == 0:
        tl.store(out_ptr + offs, loss.to(OUT_DTYPE), mask=mask)
    else:
        block_sum = tl.sum(tl.where(mask, loss, 0.0), axis=0)
        tl.store(partial_ptr + pid, block_sum)


@triton.jit
def _finalize_sum_kernel(
    partial_ptr, out_ptr,
    num_partials, scale,
    BLOCK_SIZE: tl.constexpr,
):
    ACC_DTYPE: tl.constexpr = partial_ptr.dtype.element_ty
    acc = tl.zeros((BLOCK_SIZE,), dtype=ACC_DTYPE)
    for start in range(0, num_partials, BLOCK_SIZE):
        offs = start + tl.arange(0, BLOCK_SIZE)
        acc += tl.load(partial_ptr + offs, mask=offs < num_partials, other=0.0)
    total = tl.sum(acc, axis=0)
    # `scale` is 1/N for mean (nan for N == 0, like torch) and 1 for sum
    total = total * scale
    tl.store(out_ptr, total.to(out_ptr.dtype.element_ty))


# ----------------------------------------------------------------------------
# host side
# ----------------------------------------------------------------------------
def _coalesce_dims(shape, strides_list):
    """Drop size-1 dims and merge dims that are contiguous for *all* operands."""
    keep = [d for d, s in enumerate(shape) if s != 1]
    shape = [shape[d] for d in keep]
    strides_list = [[st[d] for d in keep] for st in strides_list]
    if not shape:
        return [1], [[1] for _ in strides_list]
    new_shape = [shape[-1]]
    new_strides = [[st[-1]] for st in strides_list]
    for d in range(len(shape) - 2, -1, -1):
        if all(st[d] == ns[0] * new_shape[0] for st, ns in zip(strides_list, new_strides)):
            new_shape[0] *= shape[d]
        else:
            new_shape.insert(0, shape[d])
            for st, ns in zip(strides_list, new_strides):
                ns.insert(0, st[d])
    return new_shape, new_strides


def _launch_layout(tensors):
    """Return (tensors, sizes[4], strides[k][4], is_flat) for a list of same-shape views."""
    shape = list(tensors[0].shape)
    if tensors[0].numel() == 0:
        # nothing to address: a flat launch with an all-false mask
        return tensors, [1] * _MAX_DIMS, [[0] * (_MAX_DIMS - 1) + [1] for _ in tensors], True
    sizes, strides = _coalesce_dims(shape, [list(t.stride()) for t in tensors])
    if len(sizes) > _MAX_DIMS:
        tensors = [t.contiguous() for t in tensors]
        sizes, strides = _coalesce_dims(shape, [list(t.stride()) for t in tensors])
    pad = _MAX_DIMS - len(sizes)
    sizes = [1] * pad + sizes
    strides = [[0] * pad + st for st in strides]
    is_flat = all(st[:-1] == [0] * (_MAX_DIMS - 1) and st[-1] == 1 for st in strides) and \
        sizes[:-1] == [1] * (_MAX_DIMS - 1)
    return tensors, sizes, strides, is_flat


def binary_cross_entropy_with_logits(self, target, weight=None, pos_weight=None, reduction=1):
    if reduction not in (0, 1, 2):
        raise ValueError(f"invalid reduction: {reduction}")
    out_dtype = self.dtype
    device = self.device

    operands = [self, target]
    if weight is not None:
        operands.append(weight)
    if pos_weight is not None:
        operands.append(pos_weight)
    operands = list(torch.broadcast_tensors(*operands))
    out_shape = operands[0].shape
    n = operands[0].numel()

    operands, sizes, strides, is_flat = _launch_layout(operands)
    x_b, y_b = operands[0], operands[1]
    sx, sy = strides[0], strides[1]
    idx = 2
    if weight is not None:
        w_b, sw = operands[idx], strides[idx]
        idx += 1
    else:
        w_b, sw = x_b, [0] * _MAX_DIMS
    if pos_weight is not None:
        pw_b, sp = operands[idx], strides[idx]
    else:
        pw_b, sp = x_b, [0] * _MAX_DIMS

    BLOCK_SIZE = min(_BLOCK_SIZE, triton.next_power_of_2(max(n, 1)))
    num_blocks = max(1, triton.cdiv(n, BLOCK_SIZE))
    acc_dtype = torch.float64 if out_dtype == torch.float64 else torch.float32

    if reduction == 0:
        out = torch.empty(out_shape, dtype=out_dtype, device=device)
        partials = out  # unused
    else:
        out = torch.empty((), dtype=out_dtype, device=device)
        partials = torch.empty(num_blocks, dtype=acc_dtype, device=device)

    _bce_with_logits_kernel[(num_blocks,)](
        x_b, y_b, w_b, pw_b, out, partials,
        n, sizes[1], sizes[2], sizes[3],
        *sx, *sy, *sw, *sp,
        HAS_WEIGHT=weight is not None,
        HAS_POS_WEIGHT=pos_weight is not None,
        REDUCTION=reduction,
        IS_FLAT=is_flat,
        BLOCK_SIZE=BLOCK_SIZE,
        num_warps=_NUM_WARPS if BLOCK_SIZE >= 1024 else 4,
    )
    if reduction == 0:
        return out

    scale = (1.0 / n if n > 0 else float("nan")) if reduction == 1 else 1.0
    FINAL_BLOCK = min(_MAX_FINAL_BLOCK, triton.next_power_of_2(num_blocks))
    _finalize_sum_kernel[(1,)](
        partials, out, num_blocks, scale,
        BLOCK_SIZE=FINAL_BLOCK,
        num_warps=4,
    )
    return out
