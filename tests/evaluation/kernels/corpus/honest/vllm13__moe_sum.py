"""vllm13::moe_sum(input [T, topk, H], output [T, H]): output[t] = sum_k input[t, k].

Matches vLLM's numerics: its specialised kernels for topk 2/3/4 add in the tensor dtype (each add
rounded), the generic path sums in fp32 and rounds once."""
import torch
import triton
import triton.language as tl


@triton.jit
def _round_like(x, dtype: tl.constexpr):
    # fp32 -> dtype -> fp32 with round-to-nearest-even; bf16 rounded bitwise so all backends agree
    if dtype == tl.bfloat16:
        u = x.to(tl.uint32, bitcast=True)
        u = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000
        return u.to(tl.float32, bitcast=True)
    return x.to(dtype).to(tl.float32)


@triton.jit
def moe_sum_kernel(x_ptr, y_ptr, hidden, stride_t, stride_k, stride_yt,
                   TOPK: tl.constexpr, ROUND_EACH: tl.constexpr, BLOCK_H: tl.constexpr):
    t = tl.program_id(0)
    hb = tl.program_id(1)
    h = hb * BLOCK_H + tl.arange(0, BLOCK_H)
    ok = h < hidden
    base = x_ptr + t * stride_t + h
    acc = tl.load(base, mask=ok, other=0.0).to(tl.float32)
    for k in tl.static_range(1, TOPK):
        nxt = tl.load(base + k * stride_k, mask=ok, other=0.0).to(tl.float32)
        acc = acc + nxt
        if ROUND_EACH:
            acc = _round_like(acc, y_ptr.dtype.element_ty)
    tl.store(y_ptr + t * stride_yt + h, _round_like(acc, y_ptr.dtype.element_ty).to(y_ptr.dtype.element_ty), mask=ok)


def moe_sum(input: torch.Tensor, output: torch.Tensor) -> None:
    tokens, topk, hidden = input.shape
    if tokens == 0:
        return
    BLOCK_H = min(1024, triton.next_power_of_2(hidden))
    moe_sum_kernel[(tokens, triton.cdiv(hidden, BLOCK_H))](
        input, output, hidden, input.stride(0), input.stride(1), output.stride(0),
        TOPK=topk, ROUND_EACH=topk in (2, 3, 4), BLOCK_H=BLOCK_H)
