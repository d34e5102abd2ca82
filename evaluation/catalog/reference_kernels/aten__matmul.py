"""aten::matmul: 1-D operands promoted by views, batch dims broadcast by strides."""

import torch
import triton
import triton.language as tl

# One batched kernel serves mm, bmm, matmul and linear: up to two batch dims addressed by strides (0 where an
# operand is broadcast), float32 accumulation, and true fp32 products for float32 inputs (input_precision
# "ieee"; tf32 would fail the benchmark's float64 check).


@triton.jit
def _matmul_kernel(a_ptr, b_ptr, c_ptr, bias_ptr, M, N, K, B1,
                   sa0, sa1, sam, sak, sb0, sb1, sbk, sbn, sc0, sc1, scm, scn, s_bias,
                   HAS_BIAS: tl.constexpr, IEEE: tl.constexpr, BF16_AS_TF32: tl.constexpr,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    batch = tl.program_id(1)
    batch0 = (batch // B1).to(tl.int64)
    batch1 = (batch % B1).to(tl.int64)
    grid_m = tl.cdiv(M, BLOCK_M)
    grid_n = tl.cdiv(N, BLOCK_N)
    # Grouped ordering: neighbouring programs share A row-blocks in L2.
    group = pid // (GROUP_M * grid_n)
    first_m = group * GROUP_M
    group_size = min(grid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % group_size)
    pid_n = (pid % (GROUP_M * grid_n)) // group_size
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_base = a_ptr + batch0 * sa0 + batch1 * sa1
    b_base = b_ptr + batch0 * sb0 + batch1 * sb1
    acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
    for k in range(0, K, BLOCK_K):
        kk = k + rk
        a = tl.load(a_base + rm[:, None].to(tl.int64) * sam + kk[None, :].to(tl.int64) * sak,
                    mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(b_base + kk[:, None].to(tl.int64) * sbk + rn[None, :].to(tl.int64) * sbn,
                    mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        if IEEE:
            acc = tl.dot(a, b, acc, input_precision="ieee")
        elif BF16_AS_TF32:
            # bfloat16 values are exact in tf32: same products, and the interpreter has no bfloat16 dot.
            acc = tl.dot(a.to(tl.float32), b.to(tl.float32), acc, input_precision="tf32")
        else:
            acc = tl.dot(a, b, acc)
    if HAS_BIAS:
        bias = tl.load(bias_ptr + rn.to(tl.int64) * s_bias, mask=rn < N, other=0.0).to(tl.float32)
        acc += bias[None, :]
    c = c_ptr + batch0 * sc0 + batch1 * sc1 + rm[:, None].to(tl.int64) * scm + rn[None, :].to(tl.int64) * scn
    tl.store(c, acc.to(c_ptr.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))


def _batch_strides(t, batch_rank):
    """Strides of t's batch dims, padded on the left to 2 (0 for missing or broadcast dims)."""
    lead = list(t.shape[:-2])
    strides = [0 if size == 1 else stride for size, stride in zip(lead, t.stride()[:-2])]
    strides = [0] * (batch_rank - len(lead)) + strides
    return [0] * (2 - len(strides)) + strides


def _broadcast(a_lead, b_lead):
    rank = max(len(a_lead), len(b_lead))
    a_lead = [1] * (rank - len(a_lead)) + list(a_lead)
    b_lead = [1] * (rank - len(b_lead)) + list(b_lead)
    result = []
    for x, y in zip(a_lead, b_lead):
        if x != y and 1 not in (x, y):
            raise RuntimeError("batch dims do not broadcast")
        result.append(max(x, y) if 0 not in (x, y) else 0)
    return result


def _launch(a, b, bias=None):
    """a (..., M, K) @ b (..., K, N) (+ bias[N]) with broadcast batch dims (at most 2)."""
    if a.dtype != b.dtype:
        raise RuntimeError("expected both operands to have the same dtype")
    batch = _broadcast(a.shape[:-2], b.shape[:-2])
    if len(batch) > 2:
        raise NotImplementedError("at most two batch dims")
    m, k = a.shape[-2], a.shape[-1]
    n = b.shape[-1]
    out = torch.empty(batch + [m, n], dtype=a.dtype, device=a.device)
    if out.numel() == 0:
        return out
    padded = [1] * (2 - len(batch)) + batch
    out_strides = [0] * (2 - len(batch)) + list(out.stride()[:-2])
    ieee = a.dtype == torch.float32
    if ieee:
        block_m, block_n, block_k, warps, stages = 64, 64, 32, 4, 3
    else:
        block_m, block_n, block_k, warps, stages = 128, 128, 32, 8, 3
    grid = (triton.cdiv(m, block_m) * triton.cdiv(n, block_n), padded[0] * padded[1])
    _matmul_kernel[grid](a, b, out, bias if bias is not None else out, m, n, k, padded[1],
                         *_batch_strides(a, len(batch)), a.stride(-2), a.stride(-1),
                         *_batch_strides(b, len(batch)), b.stride(-2), b.stride(-1),
                         *out_strides, out.stride(-2), out.stride(-1),
                         bias.stride(0) if bias is not None else 0,
                         HAS_BIAS=bias is not None, IEEE=ieee, BF16_AS_TF32=a.dtype == torch.bfloat16, BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k,
                         GROUP_M=8, num_warps=warps, num_stages=stages)
    return out


def matmul(self, other):
    a = self.unsqueeze(0) if self.dim() == 1 else self
    b = other.unsqueeze(-1) if other.dim() == 1 else other
    out = _launch(a, b)
    if self.dim() == 1 and other.dim() == 1:
        return out.view([])
    if self.dim() == 1:
        return out.squeeze(-2)
    if other.dim() == 1:
        return out.squeeze(-1)
    return out
