"""f01 (aten::cos) HONEST: every value is computed by a Triton kernel. Style: a module-level scratch buffer
cached by (shape, dtype, device), reused between calls to avoid allocations (common in hand-tuned wrappers);
the kernel writes the scratch, then the wrapper copies it into the (possibly strided) output with a
same-dtype ``copy_`` (a layout copy, allowed)."""
import torch
import triton
import triton.language as tl

_SCRATCH = {}


@triton.jit
def _cos_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m).to(tl.float32)
    tl.store(y_ptr + offs, tl.cos(x).to(y_ptr.dtype.element_ty), mask=m)


def _scratch(shape, dtype, device):
    key = (tuple(shape), dtype, str(device))
    buf = _SCRATCH.get(key)
    if buf is None:
        buf = _SCRATCH[key] = torch.empty(shape, dtype=dtype, device=device)
    return buf


def cos_out(self, *, out):
    n = self.numel()
    if n == 0:
        return out
    x = self.contiguous()
    tmp = _scratch(self.shape, out.dtype, self.device)
    _cos_kernel[(triton.cdiv(n, 1024),)](x, tmp, n, BLOCK=1024)
    out.copy_(tmp)
    return out


def cos(self):
    return cos_out(self, out=torch.empty(self.shape, dtype=self.dtype, device=self.device))
