# cublasSgemvBatched -> Triton.  Column-major float32 pointer-array batched GEMV.
#   y_b = alpha * op(A_b) * x_b + beta * y_b ,  A_b m x n (lda)
# Aarray / xarray / yarray are lists of tensors (the C API's device-pointer arrays).
# They are turned into int64 pointer tables; each program gathers its batch
# entry's base pointers from the tables (program_id(2) = batch index).
import torch
import triton
import triton.language as tl

_OP = {"N": 0, "n": 0, "T": 1, "t": 1, "C": 1, "c": 1, 0: 0, 1: 1, 2: 1}  # real: 'C' == 'T'


def _ptr_table(arr, device):
    return torch.tensor([t.data_ptr() for t in arr], dtype=torch.int64, device=device)


@triton.jit
def _sgemv_batched_kernel(a_tab, x_tab, y_tab, m, n, lda, incx, incy, alpha, beta,
                          TRANS: tl.constexpr, BETA_ZERO: tl.constexpr, ALPHA_ZERO: tl.constexpr,
                          BY: tl.constexpr, BR: tl.constexpr):
    pid = tl.program_id(0)
    bid = tl.program_id(2)
    a_ptr = tl.load(a_tab + bid).to(tl.pointer_type(tl.float32))
    x_ptr = tl.load(x_tab + bid).to(tl.pointer_type(tl.float32))
    y_ptr = tl.load(y_tab + bid).to(tl.pointer_type(tl.float32))

    if TRANS == 0:
        ny = m
        nr = n
    else:
        ny = n
        nr = m
    ry = pid * BY + tl.arange(0, BY)
    mask_y = ry < ny
    acc = tl.zeros((BY,), dtype=tl.float32)
    if not ALPHA_ZERO:
        for r0 in range(0, nr, BR):
            rr = r0 + tl.arange(0, BR)
            mask_r = rr < nr
            xv = tl.load(x_ptr + rr.to(tl.int64) * incx, mask=mask_r, other=0.0)
            if TRANS == 0:
                a_off = ry[:, None].to(tl.int64) + rr[None, :].to(tl.int64) * lda
            else:
                a_off = rr[None, :].to(tl.int64) + ry[:, None].to(tl.int64) * lda
            a = tl.load(a_ptr + a_off, mask=mask_y[:, None] & mask_r[None, :], other=0.0)
            acc += tl.sum(a * xv[None, :], axis=1)
    out = alpha * acc
    y_off = ry.to(tl.int64) * incy
    if not BETA_ZERO:
        out += beta * tl.load(y_ptr + y_off, mask=mask_y, other=0.0)
    tl.store(y_ptr + y_off, out, mask=mask_y)


def cublasSgemvBatched(trans, m, n, alpha, Aarray, lda, xarray, incx, beta, yarray, incy, batchCount):
    t = _OP[trans]
    m, n, batch = int(m), int(n), int(batchCount)
    alpha = float(alpha)
    beta = float(beta)
    if batch <= 0:
        return yarray
    dev = yarray[0].device
    a_tab = _ptr_table(Aarray[:batch], dev)
    x_tab = _ptr_table(xarray[:batch], dev)
    y_tab = _ptr_table(yarray[:batch], dev)
    ny = m if t == 0 else n
    BY = 32
    BR = 64
    grid = (max(1, triton.cdiv(ny, BY)), 1, batch)
    _sgemv_batched_kernel[grid](a_tab, x_tab, y_tab, m, n, int(lda), int(incx), int(incy), alpha, beta,
                                TRANS=t, BETA_ZERO=(beta == 0.0), ALPHA_ZERO=(alpha == 0.0),
                                BY=BY, BR=BR)
    return yarray
