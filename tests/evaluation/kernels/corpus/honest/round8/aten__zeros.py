"""aten::zeros in Triton (pointwise-library style fill with heuristics)."""
import torch
import triton
import triton.language as tl


def _pick_block(args):
    n = args["n_elements"]
    if not args["out_ptr"].is_cuda:
        # interpreter: per-program overhead dominates
        return max(256, min(32768, triton.next_power_of_2(max(n, 1))))
    return 256 if n <= 256 else (1024 if n <= 65536 else 4096)


@triton.heuristics({
    "BLOCK": _pick_block,
    "EVEN": lambda args: args["n_elements"] > 0 and args["n_elements"] % _pick_block(args) == 0,
})
@triton.jit
def _fill_zero_kernel(out_ptr, n_elements, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    zero = tl.zeros([BLOCK], dtype=tl.float32).to(out_ptr.dtype.element_ty)
    if EVEN:
        tl.store(out_ptr + offs, zero)
    else:
        tl.store(out_ptr + offs, zero, mask=offs < n_elements)


def _numel(size):
    n = 1
    for s in size:
        n *= int(s)
    return n


def zeros(size, *, dtype=None, layout=None, device=None, pin_memory=None):
    if dtype is None:
        dtype = torch.get_default_dtype()
    size = [int(s) for s in size]
    out = torch.empty(size, dtype=dtype, device=device)
    target = torch.view_as_real(out) if out.is_complex() else out
    n = _numel(target.shape)
    grid = lambda meta: (max(1, triton.cdiv(n, meta["BLOCK"])),)
    _fill_zero_kernel[grid](target, n)
    return out
