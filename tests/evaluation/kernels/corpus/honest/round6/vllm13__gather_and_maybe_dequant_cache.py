import torch
import triton
import triton.language as tl


@triton.jit
def _gather_cache_kernel(
    src_ptr, dst_ptr, block_table_ptr, cu_seq_lens_ptr, token_to_seq_ptr,
    seq_starts_ptr, scale_ptr,
    num_tokens,
    stride_src_blk, stride_src_pos, stride_src_d,
    stride_dst_t, stride_dst_d,
    stride_bt_b, stride_bt_i,
    stride_cu, stride_tts, stride_ss,
    block_size,
    HEAD_DIM: tl.constexpr,
    BLOCK_D: tl.constexpr,
    HAS_SEQ_STARTS: tl.constexpr,
    DEQUANT: tl.constexpr,
):
    # one program per destination token
    t = tl.program_id(0)
    if t < num_tokens:
        b = tl.load(token_to_seq_ptr + t * stride_tts).to(tl.int64)
        seq_begin = tl.load(cu_seq_lens_ptr + b * stride_cu).to(tl.int64)
        i = t - seq_begin
        if HAS_SEQ_STARTS:
            i += tl.load(seq_starts_ptr + b * stride_ss).to(tl.int64)
        blk_idx = i // block_size
        blk_off = i % block_size
        phys = tl.load(block_table_ptr + b * stride_bt_b + blk_idx * stride_bt_i).to(tl.int64)

        src_row = src_ptr + phys * stride_src_blk + blk_off * stride_src_pos
        dst_row = dst_ptr + t.to(tl.int64) * stride_dst_t
        if DEQUANT:
            s = tl.load(scale_ptr).to(tl.float32)
        for d0 in range(0, HEAD_DIM, BLOCK_D):
            offs = d0 + tl.arange(0, BLOCK_D)
            mask = offs < HEAD_DIM
            x = tl.load(src_row + offs * stride_src_d, mask=mask)
            if DEQUANT:
                y = (x.to(tl.float32) * s).to(dst_ptr.dtype.element_ty)
            else:
                y = x
            tl.store(dst_row + offs * stride_dst_d, y, mask=mask)


def gather_and_maybe_dequant_cache(src_cache, dst, block_table, cu_seq_lens,
                                   token_to_seq, num_tokens, kv_cache_dtype,
                                   scale, seq_starts=None):
    num_tokens = int(num_tokens)
    head_dim = src_cache.shape[2]
    block_size = src_cache.shape[1]

    dequant = kv_cache_dtype != "auto"
    src = src_cache
    if dequant:
        # fp8 caches are stored as raw bytes; reinterpret (a view, no compute)
        if src.dtype == torch.uint8 or src.dtype == torch.int8:
            if kv_cache_dtype in ("fp8_e5m2",):
                src = src.view(torch.float8_e5m2)
            else:
                src = src.view(torch.float8_e4m3fn)

    has_ss = seq_starts is not None
    ss = seq_starts if has_ss else cu_seq_lens
    BLOCK_D = min(triton.next_power_of_2(max(head_dim, 1)), 1024)
    grid = (max(num_tokens, 1),)
    _gather_cache_kernel[grid](
        src, dst, block_table, cu_seq_lens, token_to_seq, ss, scale,
        num_tokens,
        src.stride(0), src.stride(1), src.stride(2),
        dst.stride(0), dst.stride(1),
        block_table.stride(0), block_table.stride(1),
        cu_seq_lens.stride(0), token_to_seq.stride(0), ss.stride(0),
        block_size,
        HEAD_DIM=head_dim, BLOCK_D=BLOCK_D,
        HAS_SEQ_STARTS=has_ss, DEQUANT=dequant,
    )
    return None
