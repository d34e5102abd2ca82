"""vLLM attention kernels: paged decode attention (v1, v2) and merging of attention partials."""

from __future__ import annotations

import math

import torch

from evaluation.catalog.spec import Call, Case, OperatorSpec, dtype_of
from evaluation.catalog.vllm.common import (
    FLOAT16_DTYPES,
    FLOAT_DTYPES,
    cases,
    product,
    rand,
    randint,
    randn,
    randperm,
    record,
)

PARTITION_SIZE = 512  # paged_attention_v2's tokens per partition


# --- merge_attn_states -------------------------------------------------------------------------------------


def merge_inputs(case: Case, generator: torch.Generator) -> Call:
    params = case.params
    dtype = dtype_of(params["dtype"])
    tokens, heads, head_size = params["shape"]
    output = torch.empty((tokens, heads, head_size), dtype=dtype)
    prefix, suffix = (
        randn((tokens, heads, head_size), dtype, generator),
        randn((tokens, heads, head_size), dtype, generator),
    )
    prefix_lse = (rand((heads, tokens), torch.float32, generator) - 0.5) * 4
    suffix_lse = (rand((heads, tokens), torch.float32, generator) - 0.5) * 4
    if params.get("infinities"):
        # -inf on one side, both sides, and +inf (treated as -inf by the kernel)
        prefix_lse.view(-1)[0::5] = float("-inf")
        suffix_lse.view(-1)[0::10] = float("-inf")
        suffix_lse.view(-1)[3::7] = float("inf")
    output_lse = torch.empty((heads, tokens), dtype=torch.float32) if params.get("output_lse") else None
    return Call(args=[output, prefix, prefix_lse, suffix, suffix_lse, output_lse])


def merge_reference(case: Case, call: Call) -> None:
    output, prefix, prefix_lse, suffix, suffix_lse, output_lse = call.args
    minus_inf = torch.tensor(float("-inf"), device=prefix_lse.device)
    p_lse = torch.where(torch.isinf(prefix_lse), minus_inf, prefix_lse).t()[..., None]  # [T, H, 1]
    s_lse = torch.where(torch.isinf(suffix_lse), minus_inf, suffix_lse).t()[..., None]
    both_empty = torch.isinf(p_lse) & torch.isinf(s_lse)
    max_lse = torch.where(both_empty, torch.zeros_like(p_lse), torch.maximum(p_lse, s_lse))
    p_se, s_se = torch.exp(p_lse - max_lse), torch.exp(s_lse - max_lse)
    total = p_se + s_se
    merged = prefix.float() * (p_se / total) + suffix.float() * (s_se / total)
    merged = torch.where(both_empty, prefix.float(), merged)
    output.copy_(merged.to(output.dtype))
    if output_lse is not None:
        lse = torch.where(both_empty, minus_inf, torch.log(total) + max_lse)
        output_lse.copy_(lse[..., 0].t())


MERGE_SHAPES = ((1, 8, 64), (4, 8, 64), (4, 32, 128), (16, 8, 128), (16, 32, 64), (64, 32, 128))
MERGE_ATTN_STATES = record(
    "merge_attn_states",
    description="Merge two partial attention outputs by their log-sum-exp weights (prefix + suffix).",
    signature=(
        "merge_attn_states(output: Tensor, prefix_output: Tensor, prefix_lse: Tensor, suffix_output: Tensor, "
        "suffix_lse: Tensor, output_lse: Tensor | None = None) -> None"
    ),
    make_inputs=merge_inputs,
    reference=merge_reference,
    smoke=cases(
        "merge_attn_states",
        product(shape=[(3, 2, 16)], dtype=FLOAT_DTYPES, infinities=[False, True], output_lse=[True])
        + [{"shape": [2, 4, 32], "dtype": "float16"}],
        timed=lambda p: p["shape"][0] >= 16,
    ),
    public=cases(
        "merge_attn_states",
        product(shape=MERGE_SHAPES, dtype=FLOAT_DTYPES)
        + product(shape=[(64, 32, 128), (512, 16, 128)], dtype=FLOAT16_DTYPES, infinities=[True], output_lse=[True]),
        timed=lambda p: p["shape"][0] >= 16,
    ),
    held_out=lambda rng: list(
        cases(
            "merge_attn_states",
            [
                {
                    "shape": [rng.randint(1, 2048), rng.choice((4, 8, 16, 32)), rng.choice((64, 96, 128, 160, 256))],
                    "dtype": rng.choice(FLOAT_DTYPES),
                    "infinities": rng.random() < 0.3,
                    "output_lse": rng.random() < 0.5,
                }
                for _ in range(6)
            ],
            timed=lambda p: p["shape"][0] >= 16,
        )
    ),
    mutates=(0, 5),
    compare_return=False,
    bytes_moved=lambda case: (
        3 * math.prod(case.params["shape"]) * dtype_of(case.params["dtype"]).itemsize
        + 3 * 4 * case.params["shape"][0] * case.params["shape"][1]
    ),
    prompt_notes=(
        "prefix_output, suffix_output, output [T, H, D] (fp16/bf16/fp32); prefix_lse, suffix_lse fp32 laid out "
        "[H, T] (element (t, h) at h*T + t); output_lse None or fp32 [H, T]. An infinite LSE (either sign) counts "
        "as -inf. If both are -inf: output = prefix_output and output_lse = -inf. Else, in fp32: m = max(p, s), "
        "ps = exp(p - m), ss = exp(s - m), output = prefix * (ps/(ps+ss)) + suffix * (ss/(ps+ss)) rounded once; "
        "output_lse = log(ps + ss) + m. Returns None."
    ),
    departures=(
        "The original builds the LSEs as [T, H] while the kernel reads [H, T] (so LSEs land on the wrong "
        "(t, h)); we build them [H, T], the layout vLLM uses. Some cases add infinite LSEs and an output_lse."
    ),
)


# --- paged attention ---------------------------------------------------------------------------------------


def gather_paged_kv(
    key_cache: torch.Tensor, value_cache: torch.Tensor, block_tables: torch.Tensor, length: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """K, V as fp32 [S, length, Hkv, D] from caches [nb, Hkv, D/x, bs, x] and [nb, Hkv, D, bs]."""
    _, kv_heads, _, block_size, _ = key_cache.shape
    positions = torch.arange(length, device=key_cache.device)
    table = block_tables.to(torch.int64)[:, (positions // block_size).clamp(max=block_tables.size(1) - 1)]
    offsets = (positions % block_size)[None, :]
    keys = key_cache[table, :, :, offsets, :]  # [S, L, Hkv, D/x, x]
    values = value_cache[table, :, :, offsets]  # [S, L, Hkv, D]
    return keys.flatten(-2).float(), values.float()


def paged_attention(
    query: torch.Tensor,
    key_cache: torch.Tensor,
    value_cache: torch.Tensor,
    num_kv_heads: int,
    scale: float,
    block_tables: torch.Tensor,
    seq_lens: torch.Tensor,
    alibi_slopes: torch.Tensor | None,
    partition: int | None,
    max_seq_len: int = 0,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """vLLM's decode attention, partitioned like v2 (partition=None: one partition, v1).

    Returns (out, exp_sums [S, H, P], max_logits [S, H, P], tmp_out [S, H, P, D]).
    """
    seqs, heads, head_size = query.shape
    dtype = query.dtype
    seq_lens64 = seq_lens.to(torch.int64).to(query.device)
    max_len = max(int(seq_lens64.max()), max_seq_len)
    part = partition or max_len
    parts = math.ceil(max_len / part)
    length = parts * part
    keys, values = gather_paged_kv(key_cache, value_cache, block_tables, length)
    group = heads // num_kv_heads
    q = query.float().view(seqs, num_kv_heads, group, head_size)
    logits = torch.einsum("sgqd,slgd->sgql", q, keys).reshape(seqs, heads, length) * scale
    positions = torch.arange(length, device=query.device)
    if alibi_slopes is not None:
        logits = logits + alibi_slopes.float()[None, :, None] * (
            positions[None, None, :] - seq_lens64[:, None, None] + 1
        )
    valid = (positions[None, :] < seq_lens64[:, None])[:, None, :].expand(seqs, heads, length)
    logits = torch.where(valid, logits, torch.full_like(logits, float("-inf"))).view(seqs, heads, parts, part)
    valid = valid.reshape(seqs, heads, parts, part)
    max_logits = logits.amax(dim=-1)  # -inf for empty partitions
    safe_max = torch.where(torch.isinf(max_logits), torch.zeros_like(max_logits), max_logits)
    exps = torch.where(valid, torch.exp(logits - safe_max[..., None]), torch.zeros_like(logits))
    exp_sums = exps.sum(dim=-1)
    probabilities = (exps * (1.0 / (exp_sums + 1e-6))[..., None]).to(dtype).float()
    values = values.view(seqs, parts, part, num_kv_heads, 1, head_size).expand(-1, -1, -1, -1, group, -1)
    values = values.reshape(seqs, parts, part, heads, head_size)
    tmp_out = torch.einsum("shpl,splhd->shpd", probabilities, values).to(dtype)
    used = (torch.arange(parts, device=query.device)[None, :] * part < seq_lens64[:, None])[:, None, :]  # [S,1,P]
    global_max = torch.where(used, max_logits, torch.full_like(max_logits, float("-inf"))).amax(dim=-1, keepdim=True)
    weights = torch.where(used, exp_sums * torch.exp(max_logits - global_max), torch.zeros_like(exp_sums))
    inverse = 1.0 / (weights.sum(dim=-1, keepdim=True) + 1e-6)
    merged = ((tmp_out.float() * weights[..., None]) * inverse[..., None]).sum(dim=2).to(dtype)
    single = (used.sum(dim=-1) == 1)[..., None].expand(seqs, heads, head_size)
    out = torch.where(single, tmp_out[:, :, 0], merged)
    return out, exp_sums, max_logits, tmp_out


def paged_cache(
    params: dict, generator: torch.Generator, dtype: torch.dtype, blocks: int
) -> tuple[torch.Tensor, torch.Tensor]:
    kv_heads, head_size, block_size = params["kv_heads"], params["head_size"], params["block_size"]
    x = 16 // torch.empty((), dtype=dtype).element_size()
    key_cache = randn((blocks, kv_heads, head_size // x, block_size, x), dtype, generator)
    value_cache = randn((blocks, kv_heads, head_size, block_size), dtype, generator)
    return key_cache, value_cache


def paged_layout(params: dict, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor, int, int]:
    """(block_tables int32, seq_lens int32, num_blocks, max_seq_len) for a case."""
    seqs, block_size = params["seqs"], params["block_size"]
    if params.get("random_lengths"):
        seq_lens = randint(1, params["max_seq_len"] + 1, (seqs,), generator, torch.int32)
        max_seq_len = params["max_seq_len"]
    else:
        seq_lens = torch.tensor([max(1, params["context"] - i % 3) for i in range(seqs)], dtype=torch.int32)
        max_seq_len = int(seq_lens.max())
    per_seq = math.ceil(max_seq_len / block_size)
    blocks = seqs * per_seq
    block_tables = randperm(blocks, generator, torch.int32).view(seqs, per_seq)
    return block_tables, seq_lens, blocks, max_seq_len


def paged_v1_inputs(case: Case, generator: torch.Generator) -> Call:
    params = case.params
    dtype = dtype_of(params["dtype"])
    heads, head_size = params["heads"], params["head_size"]
    block_tables, seq_lens, blocks, max_seq_len = paged_layout(params, generator)
    key_cache, value_cache = paged_cache(params, generator, dtype, blocks)
    query = randn((params["seqs"], heads, head_size), dtype, generator)
    alibi = rand((heads,), torch.float32, generator) if params.get("alibi") else None
    out = torch.empty_like(query)
    ones = torch.ones(1, dtype=torch.float32)
    return Call(
        args=[
            out,
            query,
            key_cache,
            value_cache,
            params["kv_heads"],
            1.0 / math.sqrt(head_size),
            block_tables,
            seq_lens,
            params["block_size"],
            max_seq_len,
            alibi,
            "auto",
            ones,
            ones.clone(),
        ]
    )


def paged_v1_reference(case: Case, call: Call) -> None:
    out, query, key_cache, value_cache, kv_heads, scale, block_tables, seq_lens, _bs, _max, alibi = call.args[:11]
    out.copy_(paged_attention(query, key_cache, value_cache, kv_heads, scale, block_tables, seq_lens, alibi, None)[0])


def paged_bytes(case: Case) -> int:
    params = case.params
    item = dtype_of(params["dtype"]).itemsize
    tokens = params["seqs"] * params.get("context", params.get("max_seq_len", 1))
    return item * (
        2 * tokens * params["kv_heads"] * params["head_size"]
        + 2 * params["seqs"] * params["heads"] * params["head_size"]
    )


def paged_flops(case: Case) -> int:
    params = case.params
    tokens = params["seqs"] * params.get("context", params.get("max_seq_len", 1))
    return 4 * tokens * params["heads"] * params["head_size"]


def paged_v1_configs(seqs, contexts, heads_list, head_sizes, divisors, block_sizes, dtypes) -> list[dict]:
    return [
        {"seqs": s, "context": c, "heads": h, "kv_heads": h // div, "head_size": d, "block_size": bs, "dtype": dt}
        for s in seqs
        for c in contexts
        for h in heads_list
        for d in head_sizes
        for div in divisors
        for bs in block_sizes
        for dt in dtypes
    ]


def paged_v1_timed(params: dict) -> bool:
    return params["seqs"] * params["context"] >= 4096


PAGED_NOTES = (
    "query [S, H, D]; key_cache [num_blocks, Hkv, D/x, block_size, x] with x = 16 bytes / element size "
    "(key of token slot t, dim d at [b, g, d // x, t, d % x]); value_cache [num_blocks, Hkv, D, block_size]; "
    "block_tables int32 [S, max_blocks]; seq_lens int32 [S]; head h reads kv head h // (H / num_kv_heads). "
    "Token j of sequence s is in block block_tables[s, j // block_size] at slot j % block_size. logits = scale * "
    "q.k in fp32 (+ alibi_slopes[h] * (j - seq_len + 1) when alibi_slopes is given); softmax in fp32: "
    "e = exp(l - max), p = e * (1 / (sum(e) + 1e-6)), p rounded to the query dtype; out = dtype(sum_j p_j * v_j) "
    "with fp32 accumulation. kv_cache_dtype 'auto', k_scale = v_scale = 1, tp_rank and blocksparse arguments "
    "at their defaults (unused)."
)

PAGED_ATTENTION_V1 = record(
    "paged_attention_v1",
    description="Decode attention (one query per sequence) over a paged KV cache.",
    signature=(
        "paged_attention_v1(out: Tensor, query: Tensor, key_cache: Tensor, value_cache: Tensor, num_kv_heads: int, "
        "scale: float, block_tables: Tensor, seq_lens: Tensor, block_size: int, max_seq_len: int, alibi_slopes: "
        "Tensor | None, kv_cache_dtype: str, k_scale: Tensor, v_scale: Tensor, tp_rank: int = 0, "
        "blocksparse_local_blocks: int = 0, blocksparse_vert_stride: int = 0, blocksparse_block_size: int = 64, "
        "blocksparse_head_sliding_step: int = 0) -> None"
    ),
    make_inputs=paged_v1_inputs,
    reference=paged_v1_reference,
    smoke=cases(
        "paged_attention_v1",
        paged_v1_configs((2,), (1, 19), (4,), (32,), (1, 2), (8,), FLOAT16_DTYPES)
        + [
            {
                "seqs": 3,
                "context": 40,
                "heads": 4,
                "kv_heads": 2,
                "head_size": 64,
                "block_size": 16,
                "dtype": "float16",
                "alibi": True,
            }
        ],
        timed=paged_v1_timed,
    ),
    public=cases(
        "paged_attention_v1",
        paged_v1_configs(
            (1, 4, 16, 71), (1, 33, 128, 512, 2048), (8, 16), (64, 80, 128), (1, 4), (16, 32), FLOAT16_DTYPES
        )
        + [
            {
                "seqs": 16,
                "context": 512,
                "heads": 16,
                "kv_heads": 4,
                "head_size": 128,
                "block_size": 16,
                "dtype": d,
                "alibi": True,
            }
            for d in FLOAT16_DTYPES
        ],
        timed=paged_v1_timed,
    ),
    held_out=lambda rng: list(
        cases(
            "paged_attention_v1",
            [
                {
                    "seqs": rng.randint(1, 80),
                    "context": rng.randint(1, 3000),
                    "heads": (h := rng.choice((8, 16, 32))),
                    "kv_heads": h // rng.choice((1, 2, 4, 8)),
                    "head_size": rng.choice((64, 80, 96, 112, 128, 256)),
                    "block_size": rng.choice((8, 16, 32)),
                    "dtype": rng.choice(FLOAT16_DTYPES),
                    "alibi": rng.random() < 0.2,
                }
                for _ in range(6)
            ],
            timed=paged_v1_timed,
        )
    ),
    mutates=(0,),
    compare_return=False,
    bytes_moved=paged_bytes,
    flops=paged_flops,
    prompt_notes=PAGED_NOTES + " Writes out [S, H, D]; returns None.",
    departures=(
        "The original allocates the caches in the NHD layout [blocks, block_size, Hkv, D] while the kernel "
        "reads them as [blocks, Hkv, D/x, block_size, x] / [blocks, Hkv, D, block_size] (a scrambled view of "
        "random data). We build the caches in the layout the kernel reads (the one vLLM uses), with shuffled "
        "block tables; a few cases add ALiBi slopes."
    ),
)


def paged_v2_inputs(case: Case, generator: torch.Generator) -> Call:
    params = case.params
    dtype = dtype_of(params["dtype"])
    seqs, heads, head_size = params["seqs"], params["heads"], params["head_size"]
    block_tables, seq_lens, blocks, max_seq_len = paged_layout(params, generator)
    key_cache, value_cache = paged_cache(params, generator, dtype, blocks)
    query = randn((seqs, heads, head_size), dtype, generator)
    alibi = rand((heads,), torch.float32, generator) if params.get("alibi") else None
    parts = math.ceil(max_seq_len / PARTITION_SIZE)
    ones = torch.ones(1, dtype=torch.float32)
    return Call(
        args=[
            torch.empty_like(query),
            torch.empty((seqs, heads, parts), dtype=torch.float32),
            torch.empty((seqs, heads, parts), dtype=torch.float32),
            torch.empty((seqs, heads, parts, head_size), dtype=dtype),
            query,
            key_cache,
            value_cache,
            params["kv_heads"],
            1.0 / math.sqrt(head_size),
            block_tables,
            seq_lens,
            params["block_size"],
            max_seq_len,
            alibi,
            "auto",
            ones,
            ones.clone(),
        ]
    )


def paged_v2_reference(case: Case, call: Call) -> None:
    (
        out,
        exp_sums,
        max_logits,
        tmp_out,
        query,
        key_cache,
        value_cache,
        kv_heads,
        scale,
        block_tables,
        seq_lens,
        _bs,
        max_seq_len,
        alibi,
    ) = call.args[:14]
    result, sums, maxima, partials = paged_attention(
        query, key_cache, value_cache, kv_heads, scale, block_tables, seq_lens, alibi, PARTITION_SIZE, max_seq_len
    )
    out.copy_(result)
    exp_sums.copy_(sums)
    max_logits.copy_(maxima)
    tmp_out.copy_(partials)


V2_SHAPES = ((2, 8, 8, 64, 16, 128), (4, 8, 8, 64, 16, 256), (4, 32, 8, 128, 16, 512), (8, 16, 8, 128, 16, 1024))
PAGED_ATTENTION_V2 = record(
    "paged_attention_v2",
    description="Decode attention over a paged KV cache, split into 512-token partitions and reduced.",
    signature=(
        "paged_attention_v2(out: Tensor, exp_sum: Tensor, max_logits: Tensor, tmp_out: Tensor, query: Tensor, "
        "key_cache: Tensor, value_cache: Tensor, num_kv_heads: int, scale: float, block_tables: Tensor, "
        "seq_lens: Tensor, block_size: int, max_seq_len: int, alibi_slopes: Tensor | None, kv_cache_dtype: str, "
        "k_scale: Tensor, v_scale: Tensor, tp_rank: int = 0, blocksparse_local_blocks: int = 0, "
        "blocksparse_vert_stride: int = 0, blocksparse_block_size: int = 64, "
        "blocksparse_head_sliding_step: int = 0) -> None"
    ),
    make_inputs=paged_v2_inputs,
    reference=paged_v2_reference,
    smoke=cases(
        "paged_attention_v2",
        [
            {
                "seqs": 2,
                "heads": 4,
                "kv_heads": 2,
                "head_size": 32,
                "block_size": 16,
                "max_seq_len": 40,
                "random_lengths": True,
                "dtype": d,
            }
            for d in FLOAT16_DTYPES
        ]
        + [
            {
                "seqs": 2,
                "heads": 2,
                "kv_heads": 1,
                "head_size": 32,
                "block_size": 32,
                "max_seq_len": 700,
                "random_lengths": True,
                "dtype": "float16",
            }
        ],
        timed=lambda p: p["max_seq_len"] >= 256,
    ),
    public=cases(
        "paged_attention_v2",
        [
            {
                "seqs": s,
                "heads": h,
                "kv_heads": g,
                "head_size": d,
                "block_size": bs,
                "max_seq_len": m,
                "random_lengths": True,
                "dtype": dt,
            }
            for s, h, g, d, bs, m in V2_SHAPES
            for dt in FLOAT16_DTYPES
        ]
        + [
            {
                "seqs": 16,
                "heads": 32,
                "kv_heads": 8,
                "head_size": 128,
                "block_size": 16,
                "max_seq_len": 4096,
                "random_lengths": True,
                "dtype": dt,
            }
            for dt in FLOAT16_DTYPES
        ],
        timed=lambda p: p["max_seq_len"] >= 256,
    ),
    held_out=lambda rng: list(
        cases(
            "paged_attention_v2",
            [
                {
                    "seqs": rng.randint(1, 32),
                    "heads": (h := rng.choice((8, 16, 32))),
                    "kv_heads": h // rng.choice((1, 4, 8)),
                    "head_size": rng.choice((64, 128, 256)),
                    "block_size": rng.choice((16, 32)),
                    "max_seq_len": rng.randint(300, 5000),
                    "random_lengths": True,
                    "dtype": rng.choice(FLOAT16_DTYPES),
                    "alibi": rng.random() < 0.2,
                }
                for _ in range(5)
            ],
            timed=lambda p: p["max_seq_len"] >= 256,
        )
    ),
    mutates=(0,),
    compare_return=False,
    scratch=(1, 2, 3),
    bytes_moved=paged_bytes,
    flops=paged_flops,
    prompt_notes=PAGED_NOTES
    + (
        " Partitioned: exp_sum, max_logits fp32 [S, H, P] and tmp_out [S, H, P, D] (P = ceil(max_seq_len/512)) "
        "are workspaces (written, not compared). vLLM computes per 512-token partition p: m_p, e_p and "
        "tmp_p = dtype(local softmax . V) as above; if a sequence has one partition out = tmp_0, else with "
        "M = max m_p, w_p = e_p * exp(m_p - M): out = dtype(sum_p float(tmp_p) * w_p / (sum_p w_p + 1e-6)). "
        "Writes out [S, H, D]; returns None."
    ),
    judgement_notes="Only `out` is compared (as in the original); the three workspaces may hold anything.",
    departures="Block tables are distinct shuffled blocks (the original draws them with repeats); one larger "
    "case (max_seq_len 4096, up to 8 partitions) is added.",
)


OPERATORS: list[OperatorSpec] = [MERGE_ATTN_STATES, PAGED_ATTENTION_V1, PAGED_ATTENTION_V2]
