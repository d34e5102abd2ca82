"""aten::scatter.src / aten::scatter.value (out of place) in Triton.

out = self.clone(); out[..., index[p], ...] = src[p] for every position p of
index (the `dim` coordinate of p replaced by index[p]).  src may be larger than
index in every dim: only its index-shaped corner is read.  scatter.value is
scatter.src with a one-element, stride-0 source.

Everything here moves bits, so the tensors are reinterpreted with
``.view(<same-width integer dtype>)`` and the kernels copy integers.

The out = self copy is attached to the scatter kernel's autotune configs as a
``pre_hook``: it runs before every launch of the scatter kernel (including the
autotuner's own benchmark launches), so the scatter always lands on a fresh
copy of self.
"""
import functools
import math
import time

import torch
import triton
import triton.language as tl

_BITS_AS = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def _interpreting() -> bool:
    return bool(triton.knobs.runtime.interpret)


def _bench(kernel_call, quantiles=None, **_):
    if torch.cuda.is_available() and not _interpreting():
        return triton.testing.do_bench(kernel_call, quantiles=quantiles)
    t0 = time.perf_counter()
    kernel_call()
    ms = (time.perf_counter() - t0) * 1e3
    return [ms] * len(quantiles) if quantiles else ms


@triton.jit
def _unravel(lin, shape, strides, RANK: tl.constexpr):
    off = tl.zeros_like(lin)
    rem = lin
    for d in tl.static_range(RANK - 1, -1, -1):
        off += (rem % shape[d]) * strides[d]
        rem = rem // shape[d]
    return off


# ----------------------------------------------------------------------------- copy
@triton.heuristics({"BLOCK": lambda args: min(8192, triton.next_power_of_2(max(1, args["n_elements"])))})
@triton.jit(do_not_specialize=["n_elements"])
def _strided_copy_kernel(src_ptr, dst_ptr, n_elements, shape, src_strides,
                         RANK: tl.constexpr, BLOCK: tl.constexpr):
    lin = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    mask = lin < n_elements
    vals = tl.load(src_ptr + _unravel(lin, shape, src_strides, RANK), mask=mask)
    tl.store(dst_ptr + lin, vals, mask=mask)


def _strided_copy(src: torch.Tensor, dst: torch.Tensor, *, max_block: int) -> None:
    """dst (dense, row-major) <- src (any strides), same shape."""
    n = dst.numel()
    shape = tuple(max(1, s) for s in src.shape) or (1,)
    strides = tuple(src.stride()) or (0,)
    grid = (max(1, triton.cdiv(n, max_block)),)
    _strided_copy_kernel[grid](src, dst, n, shape, strides, RANK=len(shape))


_copy_into = functools.partial(_strided_copy, max_block=8192)


def _init_out_from_self(nargs):
    """Config pre_hook: out <- self before the scatter kernel runs."""
    _copy_into(nargs["self_ptr"], nargs["out_ptr"])


# -------------------------------------------------------------------------- scatter
def _prune(configs, named_args, **_):
    n = max(1, named_args["n_index"])
    kept = [c for c in configs if c.kwargs["BLOCK"] <= max(1024, triton.next_power_of_2(n))]
    return kept[-1:] if _interpreting() else kept


@triton.autotune(
    configs=[triton.Config({"BLOCK": b}, pre_hook=_init_out_from_self) for b in (1024, 4096, 8192)],
    key=["n_index"],
    prune_configs_by={"early_config_prune": _prune},
    do_bench=_bench,
)
@triton.jit(do_not_specialize=["n_index", "dim_size"])
def _scatter_kernel(self_ptr, out_ptr, idx_ptr, src_ptr, n_index, dim_size,
                    shape, idx_strides, src_strides, out_strides,
                    RANK: tl.constexpr, DIM: tl.constexpr, BLOCK: tl.constexpr):
    # self_ptr is only read by the config pre_hook (out <- self)
    lin = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    mask = lin < n_index
    idx_off = tl.zeros_like(lin)
    src_off = tl.zeros_like(lin)
    out_off = tl.zeros_like(lin)
    rem = lin
    for d in tl.static_range(RANK - 1, -1, -1):
        coord = rem % shape[d]
        rem = rem // shape[d]
        idx_off += coord * idx_strides[d]
        src_off += coord * src_strides[d]
        if d != DIM:
            out_off += coord * out_strides[d]
    target = tl.load(idx_ptr + idx_off, mask=mask, other=0).to(tl.int64)
    tl.device_assert((target >= 0) & (target < dim_size), "scatter: index out of range")
    out_off += target * out_strides[DIM]
    vals = tl.load(src_ptr + src_off, mask=mask)
    tl.store(out_ptr + out_off, vals, mask=mask)


def _scatter(self: torch.Tensor, dim: int, index: torch.Tensor, src: torch.Tensor) -> torch.Tensor:
    if index.dim() != self.dim() and not (index.dim() <= 1 and self.dim() <= 1):
        raise RuntimeError("scatter(): Index tensor must have the same number of dimensions as self tensor")
    out = torch.empty(self.shape, dtype=self.dtype, device=self.device)
    bits = _BITS_AS[self.element_size()]
    # 0-d tensors are handled as 1-element 1-d tensors
    self_v, out_v = self.reshape(-1) if self.dim() == 0 else self, out.view(-1) if out.dim() == 0 else out
    idx_v = index.reshape(-1) if index.dim() == 0 else index
    src_v = src.reshape(-1) if src.dim() == 0 else src
    if src_v.dim() != idx_v.dim():
        src_v = src_v.reshape(-1)[:1].expand(idx_v.shape) if src_v.numel() == 1 else src_v
    dim = dim % max(1, out_v.dim())

    shape = tuple(idx_v.shape)
    n_index = math.prod(shape)
    k_shape = tuple(max(1, s) for s in shape)
    # src may be larger than index: its strides address the index-shaped corner
    src_strides = tuple(src_v.stride()) if src_v.dim() == len(shape) else (0,) * len(shape)
    _scatter_kernel[lambda meta: (max(1, triton.cdiv(n_index, meta["BLOCK"])),)](
        self_v.view(bits), out_v.view(bits), idx_v, src_v.view(bits), n_index, out_v.shape[dim],
        k_shape, tuple(idx_v.stride()), src_strides, tuple(out_v.stride()),
        RANK=len(k_shape), DIM=dim)
    return out


@torch.no_grad()
def scatter_src(self: torch.Tensor, dim: int, index: torch.Tensor, src: torch.Tensor) -> torch.Tensor:
    if src.dtype != self.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    return _scatter(self, dim, index, src)


@torch.no_grad()
def scatter_value(self: torch.Tensor, dim: int, index: torch.Tensor, value) -> torch.Tensor:
    # the scalar, converted to self.dtype exactly as torch converts it, read with stride 0
    holder = torch.full((), value, dtype=self.dtype, device=self.device)
    return _scatter(self, dim, index, holder.expand(index.shape))
