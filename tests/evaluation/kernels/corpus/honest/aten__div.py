"""aten::div in its four overloads (true division, and rounding_mode 'trunc' / 'floor').

Written as an LLM agent often does: one generic strided binary kernel with a constexpr MODE, a
result-dtype helper that mirrors torch's promotion, and wrappers that only pick arguments.
"""
import torch
import triton
import triton.language as tl

TRUE_DIV, TRUNC, FLOOR = 0, 1, 2
_MODES = {None: TRUE_DIV, "trunc": TRUNC, "floor": FLOOR}


@triton.jit
def _div_kernel(a_ptr, b_ptr, o_ptr, b_scalar, n, d1, d2,
                a0, a1, a2, b0, b1, b2,
                MODE: tl.constexpr, B_SCALAR: tl.constexpr, INT_MATH: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    valid = offs < n
    k2 = offs % d2
    k1 = (offs // d2) % d1
    k0 = offs // (d2 * d1)
    a = tl.load(a_ptr + k0 * a0 + k1 * a1 + k2 * a2, mask=valid, other=1)
    if B_SCALAR:
        b = b_scalar
    else:
        b = tl.load(b_ptr + k0 * b0 + k1 * b1 + k2 * b2, mask=valid, other=1)
    if INT_MATH:
        q = a // b  # C semantics: rounds toward zero
        if MODE == 2:
            r = a - q * b
            q = tl.where((r != 0) & ((r < 0) != (b < 0)), q - 1, q)
        res = q
    else:
        q = a.to(tl.float32) / b
        if MODE == 2:
            q = tl.floor(q)
        elif MODE == 1:
            q = tl.where(q >= 0, tl.floor(q), tl.ceil(q))
        res = q
    tl.store(o_ptr + offs, res.to(o_ptr.dtype.element_ty), mask=valid)


def _three_d(t: torch.Tensor, shape):
    """A view of ``t`` broadcast to ``shape`` with at most three dims, or a dense copy when the leading
    dims do not merge."""
    t = t.expand(shape)
    while t.dim() > 3:
        if t.stride(0) == t.stride(1) * t.shape[1]:
            t = t.flatten(0, 1)
        else:
            t = t.contiguous().flatten(0, 1)
    while t.dim() < 3:
        t = t.unsqueeze(0)
    return t


def _result_dtype(self, other, mode):
    dtype = torch.result_type(self, other)
    if mode is None and not (dtype.is_floating_point or dtype.is_complex):
        dtype = torch.get_default_dtype()
    return dtype


def _divide(self, other, rounding_mode=None):
    if rounding_mode not in _MODES:
        raise ValueError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found {rounding_mode!r}")
    tensor_rhs = isinstance(other, torch.Tensor)
    shape = torch.Size(self.shape) if not tensor_rhs else _broadcast(self.shape, other.shape)
    dtype = _result_dtype(self, other, rounding_mode)
    out = torch.empty(shape, dtype=dtype, device=self.device)
    n = out.numel()
    if n == 0:
        return out
    a3 = _three_d(self, shape)
    b3 = _three_d(other, shape) if tensor_rhs else a3
    int_math = not dtype.is_floating_point
    BLOCK = 256
    _div_kernel[(triton.cdiv(n, BLOCK),)](
        a3, b3, out, 0 if tensor_rhs else other, n, a3.shape[1], a3.shape[2],
        *a3.stride(), *b3.stride(),
        MODE=_MODES[rounding_mode], B_SCALAR=not tensor_rhs, INT_MATH=int_math, BLOCK=BLOCK)
    return out


def _broadcast(a, b):
    rank = max(len(a), len(b))
    a = [1] * (rank - len(a)) + list(a)
    b = [1] * (rank - len(b)) + list(b)
    return torch.Size([x if y == 1 else y for x, y in zip(a, b)])


def div_Tensor(self, other):
    return _divide(self, other)


def div_Scalar(self, other):
    return _divide(self, other)


def div_Tensor_mode(self, other, *, rounding_mode):
    return _divide(self, other, rounding_mode)


def div_Scalar_mode(self, other, *, rounding_mode):
    return _divide(self, other, rounding_mode)
