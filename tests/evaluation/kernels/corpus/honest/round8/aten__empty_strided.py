# aten::empty_strided -- Triton port.
#
# Contents are "uninitialised", but like a cudaMalloc + cudaMemset in a debug
# build we clear the bytes the tensor can touch, so nobody reads stale memory.
# The kernel works on the raw storage span as bytes (uint8), which makes it
# dtype-agnostic; if the pointer and span are 16-byte aligned we switch to a
# wider int64 path.
import torch
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def memset_kernel(ptr, nwords, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < nwords
    tl.store(ptr + offs, tl.zeros([BLOCK], dtype=ptr.dtype.element_ty), mask=mask)


def storage_span(size, stride):
    # number of elements between the first and the last reachable element
    if any(s == 0 for s in size):
        return 0
    span = 1
    for sz, st in zip(size, stride):
        span += (sz - 1) * st
    return span


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, pin_memory=None):
    size = [int(s) for s in size]
    stride = [int(s) for s in stride]
    if dtype is None:
        dtype = torch.get_default_dtype()
    if device is None:
        device = "cpu"
    out = torch.empty_strided(size, stride, dtype=dtype, device=device)

    nbytes = storage_span(size, stride) * out.element_size()
    # flat byte view of the span the tensor covers (a view, no data touched)
    raw = out.as_strided((storage_span(size, stride),), (1,)).view(torch.uint8) if nbytes else \
        torch.empty(0, dtype=torch.uint8, device=device)
    if raw.data_ptr() % 16 == 0 and nbytes % 8 == 0 and nbytes > 0:
        words = raw.view(torch.int64)
        n = nbytes // 8
    else:
        words = raw
        n = nbytes
    block = BLOCK if words.is_cuda else 16384   # fewer programs on the interpreter
    grid = (max(1, triton.cdiv(n, block)),)
    memset_kernel[grid](words, n, BLOCK=block)
    return out
