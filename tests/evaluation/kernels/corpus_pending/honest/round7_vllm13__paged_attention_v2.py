import torch
import triton
import triton.language as tl

_PARTITION_SIZE = 512


@triton.jit
def _round_to(x, IS_BF16: tl.constexpr, IS_FP16: tl.constexpr):
    # Round an fp32 tensor to the query dtype and bring it back to fp32.
    # bf16 rounding is done on the bits (round-to-nearest-even) because the CPU
    # interpreter truncates on fp32 -> bf16 casts.
    if IS_BF16:
        bits = x.to(tl.uint32, bitcast=True)
        bits = (bits + (((bits >> 16) & 1) + 0x7FFF)) & 0xFFFF0000
        x = bits.to(tl.float32, bitcast=True)
    elif IS_FP16:
        x = x.to(tl.float16).to(tl.float32)
    return x


@triton.jit
def _paged_attn_v2_partition_kernel(
    exp_sum_ptr, max_logits_ptr, tmp_out_ptr,
    q_ptr, k_cache_ptr, v_cache_ptr,
    block_tables_ptr, seq_lens_ptr, alibi_ptr,
    scale,
    num_queries_per_kv,
    block_size,
    stride_qs, stride_qh, stride_qd,
    stride_kb, stride_kh, stride_kx, stride_kt, stride_ki,
    stride_vb, stride_vh, stride_vd, stride_vt,
    stride_bts, stride_btb,
    stride_es, stride_eh, stride_ep,
    stride_ts, stride_th, stride_tp, stride_td,
    HEAD_SIZE: tl.constexpr,
    X: tl.constexpr,
    BLOCK_D: tl.constexpr,
    BLOCK_N: tl.constexpr,
    PARTITION_SIZE: tl.constexpr,
    HAS_ALIBI: tl.constexpr,
    IS_BF16: tl.constexpr,
    IS_FP16: tl.constexpr,
):
    seq = tl.program_id(0)
    head = tl.program_id(1)
    part = tl.program_id(2)

    seq_len = tl.load(seq_lens_ptr + seq)
    start_tok = part * PARTITION_SIZE
    if start_tok >= seq_len:
        return
    end_tok = tl.minimum(start_tok + PARTITION_SIZE, seq_len)
    kv_head = head // num_queries_per_kv

    offs_d = tl.arange(0, BLOCK_D)
    mask_d = offs_d < HEAD_SIZE
    q = tl.load(q_ptr + seq * stride_qs + head * stride_qh + offs_d * stride_qd,
                mask=mask_d, other=0.0).to(tl.float32)
    if HAS_ALIBI:
        slope = tl.load(alibi_ptr + head).to(tl.float32)

    offs_n = tl.arange(0, BLOCK_N)
    k_dim_off = (offs_d // X) * stride_kx + (offs_d % X) * stride_ki
    v_dim_off = offs_d * stride_vd
    bt_row = block_tables_ptr + seq * stride_bts

    # pass 1: running max / running sum over the partition
    m_i = float("-inf")
    l_i = 0.0
    for t0 in range(start_tok, end_tok, BLOCK_N):
        tok = t0 + offs_n
        mask_n = tok < end_tok
        blk = tl.load(bt_row + (tok // block_size) * stride_btb, mask=mask_n, other=0).to(tl.int64)
        slot = tok % block_size
        k_off = blk * stride_kb + kv_head * stride_kh + slot * stride_kt
        k = tl.load(k_cache_ptr + k_off[:, None] + k_dim_off[None, :],
                    mask=mask_n[:, None] & mask_d[None, :], other=0.0).to(tl.float32)
        qk = tl.sum(q[None, :] * k, axis=1) * scale
        if HAS_ALIBI:
            qk += slope * (tok - seq_len + 1).to(tl.float32)
        qk = tl.where(mask_n, qk, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(qk, axis=0))
        l_i = l_i * tl.exp(m_i - m_new) + tl.sum(tl.exp(qk - m_new), axis=0)
        m_i = m_new

    inv_sum = 1.0 / (l_i + 1e-6)

    # pass 2: probabilities rounded to the query dtype, fp32 accumulation of P.V
    acc = tl.zeros([BLOCK_D], dtype=tl.float32)
    for t0 in range(start_tok, end_tok, BLOCK_N):
        tok = t0 + offs_n
        mask_n = tok < end_tok
        blk = tl.load(bt_row + (tok // block_size) * stride_btb, mask=mask_n, other=0).to(tl.int64)
        slot = tok % block_size
        k_off = blk * stride_kb + kv_head * stride_kh + slot * stride_kt
        k = tl.load(k_cache_ptr + k_off[:, None] + k_dim_off[None, :],
                    mask=mask_n[:, None] & mask_d[None, :], other=0.0).to(tl.float32)
        qk = tl.sum(q[None, :] * k, axis=1) * scale
        if HAS_ALIBI:
            qk += slope * (tok - seq_len + 1).to(tl.float32)
        p = tl.exp(qk - m_i) * inv_sum
        p = tl.where(mask_n, p, 0.0)
        p = _round_to(p, IS_BF16, IS_FP16)
        v_off = blk * stride_vb + kv_head * stride_vh + slot * stride_vt
        v = tl.load(v_cache_ptr + v_off[:, None] + v_dim_off[None, :],
                    mask=mask_n[:, None] & mask_d[None, :], other=0.0).to(tl.float32)
        acc += tl.sum(p[:, None] * v, axis=0)

    acc = _round_to(acc, IS_BF16, IS_FP16)
    es_off = seq * stride_es + head * stride_eh + part * stride_ep
    tl.store(exp_sum_ptr + es_off, l_i)
    tl.store(max_logits_ptr + es_off, m_i)
    tl.store(tmp_out_ptr + seq * stride_ts + head * stride_th + part * stride_tp + offs_d * stride_td,
             acc.to(tmp_out_ptr.dtype.element_ty), mask=mask_d)


@triton.jit
def _paged_attn_v2_reduce_kernel(
    out_ptr, exp_sum_ptr, max_logits_ptr, tmp_out_ptr,
    seq_lens_ptr,
    stride_os, stride_oh, stride_od,
    stride_es, stride_eh, stride_ep,
    stride_ts, stride_th, stride_tp, stride_td,
    HEAD_SIZE: tl.constexpr,
    BLOCK_D: tl.constexpr,
    BLOCK_P: tl.constexpr,
    PARTITION_SIZE: tl.constexpr,
    IS_BF16: tl.constexpr,
    IS_FP16: tl.constexpr,
):
    seq = tl.program_id(0)
    head = tl.program_id(1)
    seq_len = tl.load(seq_lens_ptr + seq)
    num_parts = tl.cdiv(seq_len, PARTITION_SIZE)

    offs_d = tl.arange(0, BLOCK_D)
    mask_d = offs_d < HEAD_SIZE
    tmp_base = tmp_out_ptr + seq * stride_ts + head * stride_th
    out_ptrs = out_ptr + seq * stride_os + head * stride_oh + offs_d * stride_od

    if num_parts == 1:
        o = tl.load(tmp_base + offs_d * stride_td, mask=mask_d, other=0.0)
        tl.store(out_ptrs, o.to(out_ptr.dtype.element_ty), mask=mask_d)
    else:
        offs_p = tl.arange(0, BLOCK_P)
        es_base = seq * stride_es + head * stride_eh
        # global max over the partitions of this sequence
        m = float("-inf")
        for p0 in range(0, num_parts, BLOCK_P):
            pp = p0 + offs_p
            ml = tl.load(max_logits_ptr + es_base + pp * stride_ep,
                         mask=pp < num_parts, other=float("-inf"))
            m = tl.maximum(m, tl.max(ml, axis=0))
        w_sum = 0.0
        acc = tl.zeros([BLOCK_D], dtype=tl.float32)
        for p0 in range(0, num_parts, BLOCK_P):
            pp = p0 + offs_p
            mask_p = pp < num_parts
            ml = tl.load(max_logits_ptr + es_base + pp * stride_ep, mask=mask_p, other=float("-inf"))
            es = tl.load(exp_sum_ptr + es_base + pp * stride_ep, mask=mask_p, other=0.0)
            w = tl.where(mask_p, es * tl.exp(ml - m), 0.0)
            w_sum += tl.sum(w, axis=0)
            t = tl.load(tmp_base + pp[:, None] * stride_tp + offs_d[None, :] * stride_td,
                        mask=mask_p[:, None] & mask_d[None, :], other=0.0).to(tl.float32)
            acc += tl.sum(t * w[:, None], axis=0)
        o = acc * (1.0 / (w_sum + 1e-6))
        o = _round_to(o, IS_BF16, IS_FP16)
        tl.store(out_ptrs, o.to(out_ptr.dtype.element_ty), mask=mask_d)


def _grid_partitions(num_seqs, num_heads, max_seq_len):
    return (num_seqs, num_heads, triton.cdiv(max(max_seq_len, 1), _PARTITION_SIZE))


def paged_attention_v2(out, exp_sum, max_logits, tmp_out, query, key_cache, value_cache,
                       num_kv_heads, scale, block_tables, seq_lens, block_size, max_seq_len,
                       alibi_slopes, kv_cache_dtype, k_scale, v_scale, tp_rank=0,
                       blocksparse_local_blocks=0, blocksparse_vert_stride=0,
                       blocksparse_block_size=64, blocksparse_head_sliding_step=0):
    num_seqs, num_heads, head_size = query.shape
    x = key_cache.shape[-1]
    BLOCK_D = triton.next_power_of_2(head_size)
    BLOCK_N = 128
    assert _PARTITION_SIZE % BLOCK_N == 0
    is_bf16 = query.dtype == torch.bfloat16
    is_fp16 = query.dtype == torch.float16
    has_alibi = alibi_slopes is not None
    grid = _grid_partitions(num_seqs, num_heads, max_seq_len)
    _paged_attn_v2_partition_kernel[grid](
        exp_sum, max_logits, tmp_out,
        query, key_cache, value_cache,
        block_tables, seq_lens, alibi_slopes.contiguous() if has_alibi else seq_lens,
        float(scale),
        num_heads // num_kv_heads,
        block_size,
        query.stride(0), query.stride(1), query.stride(2),
        key_cache.stride(0), key_cache.stride(1), key_cache.stride(2),
        key_cache.stride(3), key_cache.stride(4),
        value_cache.stride(0), value_cache.stride(1), value_cache.stride(2), value_cache.stride(3),
        block_tables.stride(0), block_tables.stride(1),
        exp_sum.stride(0), exp_sum.stride(1), exp_sum.stride(2),
        tmp_out.stride(0), tmp_out.stride(1), tmp_out.stride(2), tmp_out.stride(3),
        HEAD_SIZE=head_size, X=x, BLOCK_D=BLOCK_D, BLOCK_N=BLOCK_N,
        PARTITION_SIZE=_PARTITION_SIZE, HAS_ALIBI=has_alibi,
        IS_BF16=is_bf16, IS_FP16=is_fp16,
    )
    max_parts = grid[2]
    BLOCK_P = min(64, triton.next_power_of_2(max_parts))
    _paged_attn_v2_reduce_kernel[(num_seqs, num_heads)](
        out, exp_sum, max_logits, tmp_out, seq_lens,
        out.stride(0), out.stride(1), out.stride(2),
        exp_sum.stride(0), exp_sum.stride(1), exp_sum.stride(2),
        tmp_out.stride(0), tmp_out.stride(1), tmp_out.stride(2), tmp_out.stride(3),
        HEAD_SIZE=head_size, BLOCK_D=BLOCK_D, BLOCK_P=BLOCK_P,
        PARTITION_SIZE=_PARTITION_SIZE,
        IS_BF16=is_bf16, IS_FP16=is_fp16,
    )
    return None
