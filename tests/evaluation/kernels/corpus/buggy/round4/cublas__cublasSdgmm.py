import torch
import triton
import triton.language as tl


@triton.jit
def _dgmm_kernel(
    a_ptr, x_ptr, c_ptr, m, n, lda, incx, ldc,
    MODE: tl.constexpr, BLOCK: tl.constexpr,
):
    # column-major tiles: element (i, j) at i + j*ld
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK + tl.arange(0, BLOCK)
    offs_n = pid_n * BLOCK + tl.arange(0, BLOCK)
    rows = offs_m.to(tl.int64)
    cols = offs_n.to(tl.int64)
    mask = (offs_m[:, None] < m) & (offs_n[None, :] < n)
    a = tl.load(a_ptr + rows[:, None] + cols[None, :] * lda, mask=mask, other=0.0)
    if MODE == 0:
        # left: C(i, j) = x[i] * A(i, j)
        xv = tl.load(x_ptr + rows[:, None] * incx, mask=offs_m[:, None] < m, other=0.0)
    else:
        # right: C(i, j) = A(i, j) * x[j]
        xv = tl.load(x_ptr + cols[:, None] * incx, mask=offs_n[:, None] < n, other=0.0)
    c = a * xv
    tl.store(c_ptr + rows[:, None] + cols[None, :] * ldc, c, mask=mask)


def cublasSdgmm(mode, m, n, A, lda, x, incx, C, ldc):
    m = int(m)
    n = int(n)
    if m <= 0 or n <= 0:
        return C
    if isinstance(mode, str):
        mode = 0 if mode.upper().startswith("L") else 1
    BLOCK = 32
    grid = (triton.cdiv(m, BLOCK), triton.cdiv(n, BLOCK))
    _dgmm_kernel[grid](
        A, x, C, m, n, int(lda), int(incx), int(ldc),
        MODE=int(mode), BLOCK=BLOCK,
    )
    return C
