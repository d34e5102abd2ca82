import torch
import triton
import triton.language as tl


@triton.jit
def _dequant_q8_0_kernel(
    w_ptr, out_ptr,
    n_blocks,
    stride_wm, stride_wk,
    stride_om, stride_on,
    BLOCK_B: tl.constexpr,
    QK: tl.constexpr,
    BLOCK_BYTES: tl.constexpr,
):
    row = tl.program_id(0)
    pid_b = tl.program_id(1)

    offs_b = pid_b * BLOCK_B + tl.arange(0, BLOCK_B)
    mask_b = offs_b < n_blocks
    w_row = w_ptr + row * stride_wm
    base = offs_b * BLOCK_BYTES

    # fp16 scale d: little-endian, bytes 0 and 1 of each block
    lo = tl.load(w_row + base * stride_wk, mask=mask_b, other=0).to(tl.uint16)
    hi = tl.load(w_row + (base + 1) * stride_wk, mask=mask_b, other=0).to(tl.uint16)
    d_bits = lo | (hi << 8)
    d = d_bits.to(tl.float16, bitcast=True).to(tl.float32)

    offs_q = tl.arange(0, QK)
    q_off = base[:, None] + 2 + offs_q[None, :]
    mask = mask_b[:, None]
    q_u8 = tl.load(w_row + q_off * stride_wk, mask=mask, other=0)
    q = q_u8.to(tl.int8, bitcast=True).to(tl.float32)

    # fp16 * fp16 product is exact in fp32 -> one rounding to fp16
    val = (q * d[:, None]).to(tl.float16)

    col = offs_b[:, None] * QK + offs_q[None, :]
    tl.store(out_ptr + row * stride_om + col * stride_on,
             val.to(out_ptr.dtype.element_ty), mask=mask)


def ggml_dequantize(W, quant_type, m, n, dtype=None):
    if quant_type != 8:
        raise NotImplementedError("only Q8_0 (quant_type 8) is supported")
    if dtype is None:
        dtype = torch.float16
    out = torch.empty((m, n), dtype=dtype, device=W.device)
    n_blocks = n // 32
    BLOCK_B = min(64, triton.next_power_of_2(max(n_blocks, 1)))
    grid = (m, triton.cdiv(n_blocks, BLOCK_B))
    _dequant_q8_0_kernel[grid](
        W, out, n_blocks,
        W.stride(0), W.stride(1),
        out.stride(0), out.stride(1),
        BLOCK_B=BLOCK_B, QK=32, BLOCK_BYTES=34,
    )
    return out
