"""aten::mm in Triton: tiled GEMM with a per-problem plan cache.

State kept between calls: a plan cache keyed by (M, N, K, self strides, mat2
strides, dtype, device). A plan holds the tile sizes, the launch grid and the
strides the kernel is launched with; it is rebuilt only when the key changes.
Every call allocates a fresh output (mm is out-of-place).
"""
import torch
import triton
import triton.language as tl


@triton.jit
def _mm_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
               sam, sak, sbk, sbn, scm, scn,
               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
               GROUP_M: tl.constexpr, USE_DOT: tl.constexpr, IEEE: tl.constexpr,
               UPCAST: tl.constexpr, ACC: tl.constexpr):
    pid = tl.program_id(0)
    num_m = tl.cdiv(M, BLOCK_M)
    num_n = tl.cdiv(N, BLOCK_N)
    width = GROUP_M * tl.maximum(num_n, 1)
    group = pid // width
    first_m = group * GROUP_M
    gsize = tl.maximum(tl.minimum(num_m - first_m, GROUP_M), 1)
    pid_m = first_m + (pid % width) % gsize
    pid_n = (pid % width) // gsize

    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    mmask = rm < M
    nmask = rn < N
    a_ptrs = a_ptr + rm.to(tl.int64)[:, None] * sam + rk.to(tl.int64)[None, :] * sak
    b_ptrs = b_ptr + rk.to(tl.int64)[:, None] * sbk + rn.to(tl.int64)[None, :] * sbn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=ACC)
    for k0 in range(0, K, BLOCK_K):
        kmask = (k0 + rk) < K
        a = tl.load(a_ptrs, mask=mmask[:, None] & kmask[None, :], other=0.0)
        b = tl.load(b_ptrs, mask=kmask[:, None] & nmask[None, :], other=0.0)
        if UPCAST:
            # bf16 -> fp32 is exact and products of bf16 values are exact in fp32
            a = a.to(tl.float32)
            b = b.to(tl.float32)
        if USE_DOT:
            if IEEE:
                acc = tl.dot(a, b, acc, input_precision="ieee", out_dtype=ACC)
            else:
                acc = tl.dot(a, b, acc, out_dtype=ACC)
        else:
            acc += tl.sum(a.to(ACC)[:, :, None] * b.to(ACC)[None, :, :], axis=1)
        a_ptrs += BLOCK_K * sak
        b_ptrs += BLOCK_K * sbk
    c_ptrs = c_ptr + rm.to(tl.int64)[:, None] * scm + rn.to(tl.int64)[None, :] * scn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=mmask[:, None] & nmask[None, :])


_PLANS = {}


def _build_plan(M, N, K, dtype):
    use_dot = dtype in (torch.float16, torch.bfloat16, torch.float32)
    if use_dot:
        bm = min(256, max(16, triton.next_power_of_2(max(M, 1))))
        bn = min(256, max(16, triton.next_power_of_2(max(N, 1))))
        bk = min(128, max(16, triton.next_power_of_2(max(K, 1))))
    else:
        # broadcast-multiply path (fp64 / integer): keep the 3-d temporary small
        bm = min(32, max(2, triton.next_power_of_2(max(M, 1))))
        bn = min(32, max(2, triton.next_power_of_2(max(N, 1))))
        bk = min(16, max(2, triton.next_power_of_2(max(K, 1))))
    grid = (max(1, triton.cdiv(M, bm) * triton.cdiv(N, bn)),)
    if dtype == torch.float64:
        acc = tl.float64
    elif dtype.is_floating_point:
        acc = tl.float32
    else:
        acc = tl.int64
    return dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8, grid=grid,
                USE_DOT=use_dot, IEEE=dtype in (torch.float32, torch.bfloat16),
                UPCAST=dtype == torch.bfloat16, ACC=acc)


def mm(self, mat2):
    a, b = self, mat2
    if a.dim() != 2 or b.dim() != 2:
        raise RuntimeError("mm: both arguments must be 2-D")
    M, K = a.shape
    K2, N = b.shape
    if K != K2:
        raise RuntimeError(f"mm: shapes {tuple(a.shape)} and {tuple(b.shape)} cannot be multiplied")
    if a.dtype != b.dtype:
        raise RuntimeError("mm: expected both arguments to have the same dtype")
    key = (M, N, K, tuple(a.stride()), tuple(b.stride()), a.dtype, str(a.device))
    plan = _PLANS.get(key)
    if plan is None:
        plan = _build_plan(M, N, K, a.dtype)
        _PLANS[key] = plan
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    _mm_kernel[plan["grid"]](
        a, b, c, M, N, K,
        a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
        BLOCK_M=plan["BLOCK_M"], BLOCK_N=plan["BLOCK_N"], BLOCK_K=plan["BLOCK_K"],
        GROUP_M=plan["GROUP_M"], USE_DOT=plan["USE_DOT"], IEEE=plan["IEEE"],
        UPCAST=plan["UPCAST"], ACC=plan["ACC"],
    )
    return c
