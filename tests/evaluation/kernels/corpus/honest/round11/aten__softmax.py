"""aten::softmax.int in Triton.

softmax(x)_i = exp(x_i - max(x)) / sum_j exp(x_j - max(x)) along `dim`.

Every index except `dim` is a "row"; rows are located through the input's own
strides (coalesced where the layout allows), so transposed / sliced /
broadcast inputs need no copy.  Each program owns a [BLOCK_R, BLOCK_C] tile of
rows: a row that fits in one tile is done in registers, longer rows use an
online (running max / rescaled sum) first pass and a normalising second pass.
Accumulation is float32 (float64 for float64 results).
"""
import math
import time

import torch
import triton
import triton.language as tl

_TILE = 8192


def _interpreting() -> bool:
    return bool(triton.knobs.runtime.interpret)


def _bench(kernel_call, quantiles=None, **_):
    if torch.cuda.is_available() and not _interpreting():
        return triton.testing.do_bench(kernel_call, quantiles=quantiles)
    t0 = time.perf_counter()
    kernel_call()
    ms = (time.perf_counter() - t0) * 1e3
    return [ms] * len(quantiles) if quantiles else ms


def _configs():
    cfgs = []
    for bc in (4, 16, 64, 256, 1024, 4096):
        for br in (1, 4, 16, 64, 256, 1024, 2048):
            if 256 <= br * bc <= _TILE:
                cfgs.append(triton.Config({"BLOCK_R": br, "BLOCK_C": bc}))
    return cfgs


def _prune(configs, named_args, **_):
    n_rows, n_cols = max(1, named_args["n_rows"]), max(1, named_args["n_cols"])
    target = min(triton.next_power_of_2(n_cols), 4096)
    # the column tile should cover the row when it can, without being mostly padding
    want_c = min(c.kwargs["BLOCK_C"] for c in configs if c.kwargs["BLOCK_C"] >= target)
    kept = [c for c in configs if c.kwargs["BLOCK_C"] == want_c]
    kept = [c for c in kept if c.kwargs["BLOCK_R"] <= max(1, triton.next_power_of_2(n_rows))] or kept[:1]
    if _interpreting():
        # interpreter cost is per program: the largest tile is always best
        kept = sorted(kept, key=lambda c: c.kwargs["BLOCK_R"])[-1:]
    return kept


def _coalesce(sizes, *stride_lists):
    """Merge neighbouring dims that are contiguous w.r.t. each other in every
    operand; drop size-1 dims."""
    dims = []
    for i, size in enumerate(sizes):
        strides = [sl[i] for sl in stride_lists]
        if size == 1:
            continue
        if dims and all(p == size * s for p, s in zip(dims[-1][1], strides)):
            dims[-1] = (dims[-1][0] * size, strides)
        else:
            dims.append((size, strides))
    if not dims:
        dims = [(1, [0] * len(stride_lists))]
    shape = tuple(d[0] for d in dims)
    return (shape,) + tuple(tuple(d[1][k] for d in dims) for k in range(len(stride_lists)))


@triton.jit
def _row_offsets(rows, shape, x_strides, o_strides, RANK: tl.constexpr):
    x_off = tl.zeros_like(rows)
    o_off = tl.zeros_like(rows)
    rem = rows
    for d in tl.static_range(RANK - 1, -1, -1):
        coord = rem % shape[d]
        rem = rem // shape[d]
        x_off += coord * x_strides[d]
        o_off += coord * o_strides[d]
    return x_off, o_off


@triton.autotune(configs=_configs(), key=["n_rows", "n_cols"],
                 prune_configs_by={"early_config_prune": _prune}, do_bench=_bench)
@triton.heuristics({"SINGLE_PASS": lambda args: args["n_cols"] <= args["BLOCK_C"]})
@triton.jit(do_not_specialize=["n_rows"])
def _softmax_kernel(x_ptr, out_ptr, n_rows, n_cols, x_col_stride, o_col_stride,
                    row_shape, x_row_strides, o_row_strides,
                    RANK: tl.constexpr, ACC: tl.constexpr,
                    BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr, SINGLE_PASS: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * BLOCK_R + tl.arange(0, BLOCK_R).to(tl.int64)
    row_mask = rows < n_rows
    x_row, o_row = _row_offsets(rows, row_shape, x_row_strides, o_row_strides, RANK)
    cols = tl.arange(0, BLOCK_C).to(tl.int64)
    out_ty = out_ptr.dtype.element_ty

    if SINGLE_PASS:
        mask = row_mask[:, None] & (cols < n_cols)[None, :]
        x = tl.load(x_ptr + x_row[:, None] + cols[None, :] * x_col_stride, mask=mask,
                    other=float("-inf"))
        x = x.to(out_ty).to(ACC)
        m = tl.max(x, axis=1)
        p = tl.exp(x - m[:, None])
        p = tl.where(mask, p, 0.0)
        s = tl.sum(p, axis=1)
        y = p / s[:, None]
        tl.store(out_ptr + o_row[:, None] + cols[None, :] * o_col_stride, y.to(out_ty), mask=mask)
    else:
        m = tl.full((BLOCK_R,), float("-inf"), ACC)
        s = tl.zeros((BLOCK_R,), ACC)
        for c0 in range(0, n_cols, BLOCK_C):
            c = c0 + cols
            mask = row_mask[:, None] & (c < n_cols)[None, :]
            x = tl.load(x_ptr + x_row[:, None] + c[None, :] * x_col_stride, mask=mask,
                        other=float("-inf"))
            x = x.to(out_ty).to(ACC)
            m_new = tl.maximum(m, tl.max(x, axis=1))
            # guard rows that are still all -inf (no valid element seen yet)
            m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
            s = s * tl.exp(m - m_safe) + tl.sum(tl.where(mask, tl.exp(x - m_safe[:, None]), 0.0), axis=1)
            m = m_new
        m_safe = tl.where(m == float("-inf"), 0.0, m)
        for c0 in range(0, n_cols, BLOCK_C):
            c = c0 + cols
            mask = row_mask[:, None] & (c < n_cols)[None, :]
            x = tl.load(x_ptr + x_row[:, None] + c[None, :] * x_col_stride, mask=mask,
                        other=float("-inf"))
            x = x.to(out_ty).to(ACC)
            y = tl.exp(x - m_safe[:, None]) / s[:, None]
            tl.store(out_ptr + o_row[:, None] + c[None, :] * o_col_stride, y.to(out_ty), mask=mask)


@torch.no_grad()
def softmax_int(self: torch.Tensor, dim: int, dtype: torch.dtype | None = None) -> torch.Tensor:
    out_dtype = dtype if dtype is not None else self.dtype
    if not out_dtype.is_floating_point:
        raise RuntimeError(f"softmax: unsupported dtype {out_dtype}")
    out = torch.empty(self.shape, dtype=out_dtype, device=self.device)
    x, o = self, out
    if x.dim() == 0:
        x, o = x.view(1), o.view(1)
        dim = 0
    dim = dim % x.dim()
    # move the softmax dim last (views only) and describe the remaining dims as rows
    xv, ov = x.movedim(dim, -1), o.movedim(dim, -1)
    n_cols = xv.shape[-1]
    row_sizes = tuple(xv.shape[:-1])
    n_rows = math.prod(row_sizes)
    row_shape, x_rs, o_rs = _coalesce(row_sizes, xv.stride()[:-1], ov.stride()[:-1])
    if n_rows == 0 or n_cols == 0:
        row_shape = tuple(max(1, s) for s in row_shape)
    acc = tl.float64 if out_dtype == torch.float64 else tl.float32
    grid = lambda meta: (max(1, triton.cdiv(n_rows, meta["BLOCK_R"])),)
    _softmax_kernel[grid](x, out, n_rows, n_cols, xv.stride(-1), ov.stride(-1),
                          row_shape, x_rs, o_rs, RANK=len(row_shape), ACC=acc)
    return out
