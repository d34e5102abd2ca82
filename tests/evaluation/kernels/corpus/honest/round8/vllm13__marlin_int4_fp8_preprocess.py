# SPDX-License-Identifier: Apache-2.0
# Triton version of marlin_int4_fp8_preprocess: remap GPTQ uint4 nibbles so the
# Marlin int4 x fp8 path can use a sign-magnitude style encoding:
#     v >= 8 -> v - 8        v < 8 -> 15 - v
import torch
import triton
import triton.language as tl


def _get_configs():
    configs = [
        triton.Config({"BLOCK_M": 32, "BLOCK_N": 128}, num_warps=4),
        triton.Config({"BLOCK_M": 16, "BLOCK_N": 64}, num_warps=4),
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 128}, num_warps=8),
    ]
    if not torch.cuda.is_available():
        # no benchmarker without a GPU driver (e.g. TRITON_INTERPRET=1):
        # a single, large tile
        return [triton.Config({"BLOCK_M": 64, "BLOCK_N": 256}, num_warps=8)]
    return configs


@triton.autotune(
    configs=_get_configs(),
    key=["size_m", "size_n"],
    restore_value=["out_ptr"],
)
@triton.jit
def _int4_fp8_remap_kernel(
    q_ptr,
    out_ptr,
    size_m,
    size_n,
    stride_qm,
    stride_qn,
    stride_om,
    stride_on,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    PACK_FACTOR: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (offs_m[:, None] < size_m) & (offs_n[None, :] < size_n)

    q = tl.load(
        q_ptr + offs_m[:, None] * stride_qm + offs_n[None, :] * stride_qn,
        mask=mask,
        other=0,
    )
    res = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.int32)
    for i in tl.static_range(PACK_FACTOR):
        v = (q >> (4 * i)) & 0xF
        v = tl.where(v >= 8, v - 8, 15 - v)
        res = res | (v << (4 * i))
    tl.store(
        out_ptr + offs_m[:, None] * stride_om + offs_n[None, :] * stride_on,
        res,
        mask=mask,
    )


def marlin_int4_fp8_preprocess(
    qweight: torch.Tensor,
    qzeros_or_none: torch.Tensor | None = None,
    inplace: bool = False,
) -> torch.Tensor:
    assert qweight.dtype == torch.int32 and qweight.dim() == 2
    if qzeros_or_none is not None:
        raise NotImplementedError("zero points are not supported by this port")
    # empty_like keeps the input's memory format for dense (possibly transposed) inputs
    out = qweight if inplace else torch.empty_like(qweight)
    size_m, size_n = qweight.shape

    def grid(meta):
        return (
            triton.cdiv(size_m, meta["BLOCK_M"]),
            triton.cdiv(size_n, meta["BLOCK_N"]),
        )

    _int4_fp8_remap_kernel[grid](
        qweight,
        out,
        size_m,
        size_n,
        qweight.stride(0),
        qweight.stride(1),
        out.stride(0),
        out.stride(1),
        PACK_FACTOR=8,
    )
    return out
