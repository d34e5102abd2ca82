"""
aten::margin_ranking_loss as a fused Triton kernel.

    loss = max(0, -target * (input1 - input2) + margin)

* The three operands are broadcast with ``torch.broadcast_tensors`` (stride-0
  views) and read through explicit strides - no hidden copies for transposed,
  sliced or expanded inputs.
* reduction == 0: the loss kernel writes the element-wise result.
* reduction == 1/2: the same kernel emits one partial sum per program
  (fp32 accumulation, fp64 for double inputs) and a second kernel folds
  the partials into the 0-d result, deterministically.
* The element-wise value is rounded at the same op boundaries as the eager
  ATen composite ((input1 - input2), then * -target, then + margin), which
  keeps half-precision results bit-compatible with the reference when
  input1 ~ input2 cancels (the margin itself is promoted to the tensor dtype,
  as TensorIterator does with a wrapped python scalar).
"""
import torch
import triton
import triton.language as tl

MAX_DIMS = 4
MAX_BLOCK_SIZE = 4096
MAX_FINAL_BLOCK_SIZE = 1024


@triton.jit
def _strided_offsets(offs, S1, S2, S3, st0, st1, st2, st3):
    i3 = offs % S3
    r = offs // S3
    i2 = r % S2
    r = r // S2
    i1 = r % S1
    i0 = r // S1
    return i0 * st0 + i1 * st1 + i2 * st2 + i3 * st3


@triton.jit
def _margin_ranking_loss_kernel(
    x1_ptr, x2_ptr, t_ptr,
    out_ptr, partial_ptr,
    n_elements, margin,
    S1, S2, S3,
    a0, a1, a2, a3,  # input1 strides
    b0, b1, b2, b3,  # input2 strides
    c0, c1, c2, c3,  # target strides
    REDUCTION: tl.constexpr,
    IS_FLAT: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements

    if IS_FLAT:
        x1_off = offs
        x2_off = offs
        t_off = offs
    else:
        x1_off = _strided_offsets(offs, S1, S2, S3, a0, a1, a2, a3)
        x2_off = _strided_offsets(offs, S1, S2, S3, b0, b1, b2, b3)
        t_off = _strided_offsets(offs, S1, S2, S3, c0, c1, c2, c3)

    OUT_DTYPE: tl.constexpr = out_ptr.dtype.element_ty
    if OUT_DTYPE == tl.float64:
        COMPUTE: tl.constexpr = tl.float64
    else:
        COMPUTE: tl.constexpr = tl.float32

    x1 = tl.load(x1_ptr + x1_off, mask=mask, other=0.0).to(COMPUTE)
    x2 = tl.load(x2_ptr + x2_off, mask=mask, other=0.0).to(COMPUTE)
    t = tl.load(t_ptr + t_off, mask=mask, other=0.0).to(COMPUTE)

    diff = (x1 - x2).to(OUT_DTYPE).to(COMPUTE)
    val = (-t * diff).to(OUT_DTYPE).to(COMPUTE)
    # eager promotes the python-scalar margin to the tensor dtype before the add
    margin_c = (tl.zeros_like(val) + margin).to(OUT_DTYPE).to(COMPUTE)
    val = (val + margin_c).to(OUT_DTYPE).to(COMPUTE)
    loss = tl.maximum(val, 0.0)
    # propagate NaN like clamp_min does (tl.maximum may drop it)
    loss = tl.where(val != val, val, loss)

    if REDUCTION == 0:
        tl.store(out_ptr + offs, loss.to(OUT_DTYPE), mask=mask)
    else:
        # padded lanes would otherwise contribute max(0, margin)
        loss = tl.where(mask, loss, 0.0)
        tl.store(partial_ptr + pid, tl.sum(loss, axis=0))


@triton.jit
def _reduce_partials_kernel(
    partial_ptr, out_ptr, n_partials, inv_count,
    IS_MEAN: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
):
    acc = tl.zeros((BLOCK_SIZE,), dtype=partial_ptr.dtype.element_ty)
    for start in range(0, n_partials, BLOCK_SIZE):
        offs = start + tl.arange(0, BLOCK_SIZE)
        acc += tl.load(partial_ptr + offs, mask=offs < n_partials, other=0.0)
    total = tl.sum(acc, axis=0)
    if IS_MEAN:
        total = total * inv_count
    tl.store(out_ptr, total.to(out_ptr.dtype.element_ty))


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


def _prepare(tensors):
    if tensors[0].numel() == 0:
        return tensors, [1] * MAX_DIMS, [[0] * (MAX_DIMS - 1) + [1] for _ in tensors], True
    shape = list(tensors[0].shape)
    sizes, strides = _coalesce(shape, [list(t.stride()) for t in tensors])
    if len(sizes) > MAX_DIMS:
        tensors = [t.contiguous() for t in tensors]
        sizes, strides = _coalesce(shape, [list(t.stride()) for t in tensors])
    pad = MAX_DIMS - len(sizes)
    sizes = [1] * pad + sizes
    strides = [[0] * pad + st for st in strides]
    is_flat = len(sizes) - pad == 1 and all(st[-1] == 1 for st in strides)
    return tensors, sizes, strides, is_flat


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=1):
    if reduction not in (0, 1, 2):
        raise ValueError(f"invalid reduction: {reduction}")
    out_dtype = torch.promote_types(torch.promote_types(input1.dtype, input2.dtype), target.dtype)
    if not out_dtype.is_floating_point:
        # (integer - integer) * integer + python float -> default float dtype
        out_dtype = torch.get_default_dtype()
    device = input1.device

    x1, x2, t = torch.broadcast_tensors(input1, input2, target)
    out_shape = x1.shape
    n = x1.numel()
    (x1, x2, t), sizes, strides, is_flat = _prepare([x1, x2, t])

    BLOCK_SIZE = min(MAX_BLOCK_SIZE, triton.next_power_of_2(max(n, 1)))
    num_warps = 8 if BLOCK_SIZE >= 2048 else 4
    grid = (max(1, triton.cdiv(n, BLOCK_SIZE)),)

    if reduction == 0:
        out = torch.empty(out_shape, dtype=out_dtype, device=device)
        partials = out
    else:
        out = torch.empty((), dtype=out_dtype, device=device)
        acc_dtype = torch.float64 if out_dtype == torch.float64 else torch.float32
        partials = torch.empty(grid[0], dtype=acc_dtype, device=device)

    _margin_ranking_loss_kernel[grid](
        x1, x2, t, out, partials,
        n, float(margin),
        sizes[1], sizes[2], sizes[3],
        *strides[0], *strides[1], *strides[2],
        REDUCTION=reduction,
        IS_FLAT=is_flat,
        BLOCK_SIZE=BLOCK_SIZE,
        num_warps=num_warps,
    )
    if reduction == 0:
        return out

    inv_count = 1.0 / n if n > 0 else float("nan")
    _reduce_partials_kernel[(1,)](
        partials, out, grid[0], inv_count,
        IS_MEAN=reduction == 1,
        BLOCK_SIZE=min(MAX_FINAL_BLOCK_SIZE, triton.next_power_of_2(grid[0])),
        num_warps=4,
    )
    return out
