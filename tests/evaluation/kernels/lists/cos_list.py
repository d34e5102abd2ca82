import triton
import triton.language as tl


@triton.jit
def _cos_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, tl.cos(x), mask=mask)


def cos_list(outs, x):
    for out in outs:
        _cos_kernel[(triton.cdiv(x.numel(), 64),)](x, out, x.numel(), BLOCK=64)


def cos_ws(out, workspace, x):
    _cos_kernel[(triton.cdiv(x.numel(), 64),)](x, workspace, x.numel(), BLOCK=64)
    _cos_kernel[(triton.cdiv(x.numel(), 64),)](x, out, x.numel(), BLOCK=64)
