# aten::scalar_tensor -- Triton port.
#
# A 0-d tensor holding s.  The scalar is passed to the kernel as an argument
# (fp32 / int64 depending on its Python type; for fp64 results we pass it as
# two fp32 halves so no precision is lost) and written by a single program.
import torch
import triton
import triton.language as tl


@triton.jit
def write_scalar_f(out, hi, lo, TWO_PART: tl.constexpr):
    # tl.cast also accepts plain Python numbers (interpreter) and scalar args
    if TWO_PART:
        v = tl.cast(hi, tl.float64) + tl.cast(lo, tl.float64)
    else:
        v = tl.cast(hi, tl.float32)
    tl.store(out, v.to(out.dtype.element_ty))


@triton.jit
def write_scalar_i(out, v):
    tl.store(out, tl.cast(v, tl.int64).to(out.dtype.element_ty))


@triton.jit
def write_scalar_bool(out, v):
    tl.store(out, tl.cast(v, tl.int32) != 0)


@triton.jit
def write_complex(out, re, im):
    # out points at the interleaved (re, im) float pair
    tl.store(out, tl.cast(re, out.dtype.element_ty))
    tl.store(out + 1, tl.cast(im, out.dtype.element_ty))


def _split_f64(x):
    import numpy as np
    hi = float(np.float32(x))
    lo = float(np.float32(x - hi))
    return hi, lo


def scalar_tensor(s, *, dtype=None, layout=None, device=None, pin_memory=None):
    if dtype is None:
        dtype = torch.complex64 if isinstance(s, complex) else torch.get_default_dtype()
    if device is None:
        device = "cpu"
    out = torch.empty((), dtype=dtype, device=device)
    grid = (1,)
    if dtype.is_complex:
        s = complex(s)
        write_complex[grid](torch.view_as_real(out), s.real, s.imag)
    elif dtype == torch.bool:
        write_scalar_bool[grid](out, 1 if bool(s) else 0)
    elif dtype.is_floating_point:
        s = float(s)
        if dtype == torch.float64:
            hi, lo = _split_f64(s)
            write_scalar_f[grid](out, hi, lo, TWO_PART=True)
        else:
            write_scalar_f[grid](out, s, 0.0, TWO_PART=False)
    else:
        write_scalar_i[grid](out, int(s))
    return out
