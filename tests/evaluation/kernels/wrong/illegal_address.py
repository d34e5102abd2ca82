import torch
import triton
import triton.language as tl


@triton.jit
def cos_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    # The bug: an index computed in the wrong units stores about 8 TB past the output (on a GPU: an illegal
    # address; the CUDA context is lost for the rest of the process).
    far = offsets.to(tl.int64) * 0 + (1 << 43) // 4
    tl.store(out_ptr + far + offsets, tl.cos(x).to(out_ptr.dtype.element_ty), mask=mask)


def cos(x):
    out = torch.empty_like(x.contiguous())
    n = x.numel()
    cos_kernel[(triton.cdiv(max(n, 1), 256),)](x.contiguous(), out, n, BLOCK=256)
    return out


def cos_out(x, *, out):
    out.copy_(cos(x))
    return out
