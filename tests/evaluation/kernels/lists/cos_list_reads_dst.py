import triton
import triton.language as tl


@triton.jit
def _cos_acc_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    # Reads the destination (0 * old + cos x): right only when the old contents are not poisoned (NaN).
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    old = tl.load(out_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, old * 0.0 + tl.cos(x), mask=mask)


def cos_list(outs, x):
    for out in outs:
        _cos_acc_kernel[(triton.cdiv(x.numel(), 64),)](x, out, x.numel(), BLOCK=64)
