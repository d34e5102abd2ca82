import torch
import triton
import triton.language as tl


@triton.jit
def dasum_partials(x_ptr, partial_ptr, n, incx, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    i = pid * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x_ptr + i * incx, mask=i < n, other=0.0)
    tl.store(partial_ptr + pid, tl.sum(tl.abs(v), axis=0))


@triton.jit
def dasum_finish(partial_ptr, result_ptr, count, BLOCK: tl.constexpr):
    j = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float64)
    for s in range(0, count, BLOCK):
        acc += tl.load(partial_ptr + s + j, mask=s + j < count, other=0.0)
    tl.store(result_ptr, tl.sum(acc, axis=0))


def cublasDasum_v2(n, x, incx, result):
    """result[0] = sum |x[i*incx]| in float64; two launches (block partials, then their sum)."""
    BLOCK = 1024
    blocks = max(1, triton.cdiv(max(n, 0), BLOCK))
    partials = torch.empty(blocks, dtype=torch.float64, device=x.device)
    dasum_partials[(blocks,)](x, partials, max(n, 0), incx, BLOCK=BLOCK)
    dasum_finish[(1,)](partials, result, blocks, BLOCK=min(1024, triton.next_power_of_2(blocks)))
    return result
