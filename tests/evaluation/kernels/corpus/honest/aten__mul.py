import torch
import triton
import triton.language as tl


# @triton.heuristics picks the specialisations from the arguments themselves: whether the block
# divides the problem (no masking needed) and whether the second operand is a Python number.
@triton.heuristics(
    {
        "EVEN": lambda args: args["n"] % args["BLOCK"] == 0,
        "SCALAR_RHS": lambda args: args["rhs_is_scalar"] != 0,
    }
)
@triton.jit
def _mul_kernel(lhs, rhs, out, rhs_value, n, rhs_is_scalar, HALF: tl.constexpr, BLOCK: tl.constexpr,
                EVEN: tl.constexpr, SCALAR_RHS: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        a = tl.load(lhs + offs)
    else:
        a = tl.load(lhs + offs, mask=offs < n)
    if SCALAR_RHS:
        b = rhs_value
    elif EVEN:
        b = tl.load(rhs + offs)
    else:
        b = tl.load(rhs + offs, mask=offs < n)
    if HALF:
        prod = a.to(tl.float32) * b
    else:
        prod = a * b
    if EVEN:
        tl.store(out + offs, prod.to(out.dtype.element_ty))
    else:
        tl.store(out + offs, prod.to(out.dtype.element_ty), mask=offs < n)


def _bshape(a, b):
    out = []
    for i in range(1, max(len(a), len(b)) + 1):
        x = a[-i] if i <= len(a) else 1
        y = b[-i] if i <= len(b) else 1
        out.append(y if x == 1 else x)
    return tuple(reversed(out))


def _run(a, b):
    scalar = not isinstance(b, torch.Tensor)
    shape = tuple(a.shape) if scalar else _bshape(tuple(a.shape), tuple(b.shape))
    a_c = a.expand(shape).contiguous()
    b_c = a_c if scalar else b.expand(shape).contiguous()
    out = torch.empty(shape, dtype=a.dtype, device=a.device)
    n = out.numel()
    if n:
        BLOCK = 128
        _mul_kernel[(triton.cdiv(n, BLOCK),)](
            a_c, b_c, out, b if scalar else 0, n, int(scalar),
            HALF=a.dtype in (torch.float16, torch.bfloat16), BLOCK=BLOCK)
    return out


def mul_Tensor(self, other):
    return _run(self, other)


def mul_Scalar(self, other):
    return _run(self, other)
