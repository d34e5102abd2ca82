"""cublasDsyr2_v2 in Triton: A := alpha * (x * y^T + y * x^T) + A on one triangle, float64.

Port notes
----------
* A is n x n, column-major with leading dimension lda; only the uplo triangle
  (0 = lower, 1 = upper, diagonal included) is read and written.  The other
  triangle and the lda padding rows are never addressed.
* Raw BLAS addressing: A(i, j) at flat offset i + j * lda, x(i) at i * incx,
  y(i) at i * incy, relative to each tensor's data pointer.  The declared
  torch shapes/strides are ignored (flat aliases of the storage are used).
* The update is tiled over (i, j) with i the fast (contiguous) axis; tiles that
  lie entirely in the unreferenced triangle exit immediately.
* Same association as the reference BLAS: temp1 = alpha * y(j),
  temp2 = alpha * x(j), A(i, j) += x(i) * temp1 + y(i) * temp2.
* alpha is carried in a 1-element float64 device tensor: a Python float kernel
  argument would be narrowed to fp32.  alpha == 0 is the BLAS quick return
  (A is not touched, x and y are not read).
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _dsyr2_kernel(
    x_ptr,
    y_ptr,
    a_ptr,
    alpha_ptr,        # float64 [1]
    n,
    lda,
    incx,
    incy,
    UPLO: tl.constexpr,        # 0 = lower, 1 = upper
    ALPHA_ZERO: tl.constexpr,  # quick return: leave A untouched
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    if not ALPHA_ZERO:
        pid_m = tl.program_id(0)
        pid_n = tl.program_id(1)
        row0 = pid_m * BLOCK_M
        col0 = pid_n * BLOCK_N
        if UPLO == 0:
            touches = row0 + BLOCK_M - 1 >= col0      # some i >= j in the tile
        else:
            touches = row0 <= col0 + BLOCK_N - 1      # some i <= j in the tile
        if touches:
            offs_i = row0 + tl.arange(0, BLOCK_M)
            offs_j = col0 + tl.arange(0, BLOCK_N)
            mask_i = offs_i < n
            mask_j = offs_j < n
            offs_i64 = offs_i.to(tl.int64)
            offs_j64 = offs_j.to(tl.int64)

            alpha = tl.load(alpha_ptr)
            x_i = tl.load(x_ptr + offs_i64 * incx, mask=mask_i, other=0.0)
            y_i = tl.load(y_ptr + offs_i64 * incy, mask=mask_i, other=0.0)
            x_j = tl.load(x_ptr + offs_j64 * incx, mask=mask_j, other=0.0)
            y_j = tl.load(y_ptr + offs_j64 * incy, mask=mask_j, other=0.0)
            temp1 = alpha * y_j
            temp2 = alpha * x_j

            if UPLO == 0:
                tri = offs_i[:, None] >= offs_j[None, :]
            else:
                tri = offs_i[:, None] <= offs_j[None, :]
            mask = mask_i[:, None] & mask_j[None, :] & tri

            a_off = offs_i64[:, None] + offs_j64[None, :] * lda
            a = tl.load(a_ptr + a_off, mask=mask, other=0.0)
            a = a + (x_i[:, None] * temp1[None, :] + y_i[:, None] * temp2[None, :])
            tl.store(a_ptr + a_off, a, mask=mask)


def _fill_mode(uplo):
    if isinstance(uplo, (bytes, bytearray)):
        uplo = uplo.decode()
    if isinstance(uplo, str):
        key = uplo.strip().upper()[:1]
        if key == "L":
            return 0
        if key == "U":
            return 1
        raise ValueError(f"cublasDsyr2_v2: invalid uplo {uplo!r}")
    if hasattr(uplo, "value"):
        uplo = uplo.value
    code = int(uplo)
    if code not in (0, 1):
        raise ValueError(f"cublasDsyr2_v2: invalid uplo {uplo!r}")
    return code


def _raw(t, n_elems):
    """Flat float64 alias of the caller's storage starting at t's data pointer."""
    if t.dtype != torch.float64:
        raise TypeError(f"cublasDsyr2_v2: expected float64, got {t.dtype}")
    return t.as_strided((n_elems,), (1,), t.storage_offset())


def _as_float(v):
    if isinstance(v, torch.Tensor):
        return float(v.reshape(-1)[0].item())
    if isinstance(v, (list, tuple)):
        return float(v[0])
    return float(v)


def cublasDsyr2_v2(uplo, n, alpha, x, incx, y, incy, A, lda):
    fill = _fill_mode(uplo)
    n = int(n)
    lda = int(lda)
    incx = int(incx)
    incy = int(incy)
    alpha = _as_float(alpha)

    quick = n <= 0 or alpha == 0.0
    BLOCK_M, BLOCK_N = 64, 32
    if quick:
        # BLAS quick return: one no-op launch, nothing is read or written.
        empty = A.as_strided((0,), (1,), A.storage_offset())
        _dsyr2_kernel[(1, 1)](
            empty, empty, empty, empty, 0, 1, 1, 1,
            UPLO=fill, ALPHA_ZERO=True, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N,
        )
        return A

    a_raw = _raw(A, (n - 1) * lda + n)
    x_raw = _raw(x, 1 + (n - 1) * incx)
    y_raw = _raw(y, 1 + (n - 1) * incy)
    alpha_t = torch.full((1,), alpha, dtype=torch.float64, device=A.device)

    grid = (triton.cdiv(n, BLOCK_M), triton.cdiv(n, BLOCK_N))
    _dsyr2_kernel[grid](
        x_raw, y_raw, a_raw, alpha_t, n, lda, incx, incy,
        UPLO=fill, ALPHA_ZERO=False, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N,
        num_warps=4,
    )
    return A
