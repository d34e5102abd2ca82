"""vLLM rotary position embedding: rotary_embedding (pos_encoding_kernels.cu) and fused_qk_norm_rope."""

from __future__ import annotations

import random

import torch

from evaluation.catalog.rounding import unit_roundoff
from evaluation.catalog.spec import Call, Case, OperatorSpec, dtype_of
from evaluation.catalog.vllm.common import FLOAT16_DTYPES, FLOAT_DTYPES, cases, product, randint, randn, record


def real_cos_sin_cache(cache_len: int, rot_dim: int, dtype: torch.dtype, base: float = 10000.0) -> torch.Tensor:
    """vLLM's cache [cache_len, rot_dim]: cos(pos * f_i) in [:rot_dim/2], sin in [rot_dim/2:]."""
    inv_freq = 1.0 / (base ** (torch.arange(0, rot_dim, 2, dtype=torch.float64) / rot_dim))
    angles = torch.arange(cache_len, dtype=torch.float64)[:, None] * inv_freq[None, :]
    return torch.cat([angles.cos(), angles.sin()], dim=-1).to(dtype)


def rotate_staged(head: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, rot_dim: int, is_neox: bool) -> None:
    """Rotate the first rot_dim elements of every head in place, each product and sum rounded in the dtype.

    head [T, H, D]; cos, sin [T, 1, rot_dim/2] of the same dtype.
    """
    embed = rot_dim // 2
    if is_neox:
        x_part, y_part = head[..., :embed], head[..., embed:rot_dim]
    else:
        x_part, y_part = head[..., 0:rot_dim:2], head[..., 1:rot_dim:2]
    x_new = x_part * cos - y_part * sin
    y_new = y_part * cos + x_part * sin
    x_part.copy_(x_new)
    y_part.copy_(y_new)


# --- rotary_embedding --------------------------------------------------------------------------------------


def rotary_inputs(case: Case, generator: torch.Generator) -> Call:
    params = case.params
    dtype = dtype_of(params["dtype"])
    tokens, cache_len, heads, head_size = params["tokens"], params["cache_len"], params["heads"], params["head_size"]
    rot_dim = params.get("rot_dim", head_size)
    positions = randint(0, cache_len, (tokens,), generator)
    query = randn((tokens, heads, head_size), dtype, generator)
    key = randn((tokens, params.get("kv_heads", heads), head_size), dtype, generator) if params["key"] else None
    cache = real_cos_sin_cache(cache_len, rot_dim, dtype)
    return Call(args=[positions, query, key, head_size, cache, params["is_neox"]])


def rotary_reference(case: Case, call: Call) -> None:
    positions, query, key, head_size, cache, is_neox = call.args
    rot_dim = cache.size(1)
    rows = cache[positions]
    cos = rows[:, None, : rot_dim // 2]
    sin = rows[:, None, rot_dim // 2 :]
    for tensor in (query, key):
        if tensor is not None:
            view = tensor.view(tensor.size(0), -1, head_size)
            rotate_staged(view, cos, sin, rot_dim, is_neox)


def rotary_exact(case: Case, call: Call):
    """Per rotated tensor, the (lowest, highest) values a rotation rounding each product and each sum once in
    the dtype can give (the judge's ``exact_formula``): the float64 rotation, widened by a unit roundoff of
    each product and of the result. After cancellation (x c - y s near 0) the answer hinges on how the
    products round, and staged half arithmetic, fused multiply-adds and float32 math all land apart."""
    positions, query, key, head_size, cache, is_neox = call.args
    rot_dim = cache.size(1)
    rows = cache[positions].double()
    cos, sin = rows[:, None, : rot_dim // 2], rows[:, None, rot_dim // 2 :]
    bounds = []
    for tensor in (query, key):
        if tensor is None:
            bounds.append(None)
            continue
        unit = unit_roundoff(tensor.dtype)
        wide = tensor.double().reshape(tensor.size(0), -1, head_size)
        low, high = wide.clone(), wide.clone()
        half = rot_dim // 2
        x_part = wide[..., :half] if is_neox else wide[..., 0:rot_dim:2]
        y_part = wide[..., half:rot_dim] if is_neox else wide[..., 1:rot_dim:2]
        x_new, y_new = x_part * cos - y_part * sin, y_part * cos + x_part * sin
        x_spread = unit * ((x_part * cos).abs() + (y_part * sin).abs() + x_new.abs())
        y_spread = unit * ((y_part * cos).abs() + (x_part * sin).abs() + y_new.abs())
        for target, new, spread in ((low, x_new, -x_spread), (high, x_new, x_spread)):
            (target[..., :half] if is_neox else target[..., 0:rot_dim:2]).copy_(new + spread)
        for target, new, spread in ((low, y_new, -y_spread), (high, y_new, y_spread)):
            (target[..., half:rot_dim] if is_neox else target[..., 1:rot_dim:2]).copy_(new + spread)
        bounds.append((low.reshape(tensor.shape), high.reshape(tensor.shape)))
    return tuple(bounds)


def rotary_timed(params: dict) -> bool:
    return params["tokens"] >= 1024


def rotary_held_out(rng: random.Random) -> list[Case]:
    configs = []
    for _ in range(8):
        head_size = rng.choice((32, 64, 80, 128, 256))
        configs.append(
            {
                "tokens": rng.randint(1, 3000),
                "cache_len": rng.randint(16, 8192),
                "heads": rng.choice((1, 2, 4, 8, 12, 16)),
                "head_size": head_size,
                "rot_dim": rng.choice((head_size, head_size // 2)),
                "dtype": rng.choice(FLOAT_DTYPES),
                "key": rng.random() < 0.8,
                "is_neox": rng.random() < 0.5,
            }
        )
    return list(cases("rotary_embedding", configs, timed=rotary_timed))


ROTARY_SMOKE = product(
    tokens=[3], cache_len=[16], heads=[2], head_size=[32], dtype=FLOAT_DTYPES, key=[True], is_neox=[True, False]
) + [
    {
        "tokens": 5,
        "cache_len": 32,
        "heads": 2,
        "head_size": 64,
        "rot_dim": 32,
        "dtype": "float16",
        "key": False,
        "is_neox": True,
    },
]
ROTARY_PUBLIC = [
    {"tokens": tokens, "cache_len": cache_len, **rest}
    for tokens, cache_len in ((1, 32), (71, 497), (128, 512), (1024, 4096), (5333, 8192))
    for rest in product(
        heads=[1, 4, 16], head_size=[32, 64], dtype=FLOAT_DTYPES, key=[False, True], is_neox=[True, False]
    )
]

ROTARY_EMBEDDING = record(
    "rotary_embedding",
    description="Rotary position embedding (RoPE) applied in place to query and key, NeoX or GPT-J style.",
    signature=(
        "rotary_embedding(positions: Tensor, query: Tensor, key: Tensor | None, head_size: int, "
        "cos_sin_cache: Tensor, is_neox: bool) -> None"
    ),
    make_inputs=rotary_inputs,
    reference=rotary_reference,
    smoke=cases("rotary_embedding", ROTARY_SMOKE, timed=rotary_timed),
    public=cases("rotary_embedding", ROTARY_PUBLIC, timed=rotary_timed),
    held_out=rotary_held_out,
    mutates=(1, 2),
    compare_return=False,
    exact_formula=rotary_exact,
    exact_formula_why=(
        "after cancellation (x c - y s near 0) the answer hinges on how the products round: a value within a "
        "unit roundoff of each product and of the result from the float64 rotation passes (an honest kernel "
        "was 0.000244 off the reference's staged half rounding on the H200)"
    ),
    prompt_notes=(
        "positions int64 [T]; query [T, H, head_size], key [T, Hk, head_size] or None; cos_sin_cache "
        "[max_pos, rot_dim] of the query dtype with cos in [:rot_dim/2] and sin in [rot_dim/2:] "
        "(rot_dim = cos_sin_cache.size(1) may be smaller than head_size; elements >= rot_dim are untouched). "
        "For token t, c_i = cache[positions[t], i], s_i = cache[positions[t], rot_dim/2 + i]. NeoX: pairs "
        "(i, i + rot_dim/2); GPT-J (is_neox False): pairs (2i, 2i+1). x' = x*c - y*s, y' = y*c + x*s, every "
        "product and sum rounded in the tensor dtype (half arithmetic, as vLLM's kernel). In place; returns None."
    ),
    departures=(
        "The original builds cos_sin_cache as a 3-D [cache_len, 2, head_size] tensor, which the kernel reads "
        "as rot_dim = 2 (only elements 0 and 1 of each head rotate, NeoX and GPT-J coincide). We pass the "
        "intended 2-D [cache_len, rot_dim] cache of real cos/sin values, so the whole rotation is exercised; "
        "some cases use rot_dim = head_size/2 (partial rotary)."
    ),
)


# --- fused_qk_norm_rope ------------------------------------------------------------------------------------


def qk_norm_rope_inputs(case: Case, generator: torch.Generator) -> Call:
    params = case.params
    dtype = dtype_of(params["dtype"])
    tokens, head_dim = params["tokens"], params["head_dim"]
    heads_q, heads_k, heads_v = params["heads"]
    qkv = randn((tokens, (heads_q + heads_k + heads_v) * head_dim), dtype, generator)
    q_weight = randn((head_dim,), dtype, generator)
    k_weight = randn((head_dim,), dtype, generator)
    cache = randn((max(tokens, 4096), head_dim), dtype, generator)
    positions = (
        randint(0, max(tokens, 4096), (tokens,), generator)
        if params.get("random_positions")
        else torch.arange(tokens, dtype=torch.int64)
    )
    return Call(
        args=[
            qkv,
            heads_q,
            heads_k,
            heads_v,
            head_dim,
            params["eps"],
            q_weight,
            k_weight,
            cache,
            params["is_neox"],
            positions,
        ]
    )


def qk_norm_rope_reference(case: Case, call: Call) -> None:
    qkv, heads_q, heads_k, heads_v, head_dim, eps, q_weight, k_weight, cache, is_neox, positions = call.args
    tokens = qkv.size(0)
    heads = qkv.view(tokens, heads_q + heads_k + heads_v, head_dim)
    half = head_dim // 2
    rows = cache[positions].float()
    cos, sin = rows[:, None, :half], rows[:, None, half:]
    for first, count, weight in ((0, heads_q, q_weight), (heads_q, heads_k, k_weight)):
        x = heads[:, first : first + count].float()
        x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight.float()
        if is_neox:
            a, b = x[..., :half], x[..., half:]
            rotated = torch.cat([a * cos - b * sin, b * cos + a * sin], dim=-1)
        else:
            a, b = x[..., 0::2], x[..., 1::2]
            rotated = torch.stack([a * cos - b * sin, b * cos + a * sin], dim=-1).flatten(-2)
        heads[:, first : first + count] = rotated.to(qkv.dtype)


def qk_norm_rope_timed(params: dict) -> bool:
    return params["tokens"] >= 1024 and sum(params["heads"]) * params["head_dim"] >= 4096


def qk_norm_rope_held_out(rng: random.Random) -> list[Case]:
    configs = []
    for _ in range(6):
        heads_k = rng.choice((1, 2, 4, 8))
        configs.append(
            {
                "tokens": rng.randint(1, 3000),
                "heads": [heads_k * rng.choice((1, 2, 4)), heads_k, heads_k],
                "head_dim": rng.choice((64, 128, 256)),
                "dtype": rng.choice(FLOAT16_DTYPES),
                "is_neox": rng.random() < 0.5,
                "eps": 1e-5,
                "random_positions": True,
            }
        )
    return list(cases("fused_qk_norm_rope", configs, timed=qk_norm_rope_timed))


FUSED_QK_NORM_ROPE = record(
    "fused_qk_norm_rope",
    description="Per-head RMSNorm of the q and k heads of a packed qkv tensor followed by RoPE, in place.",
    signature=(
        "fused_qk_norm_rope(qkv: Tensor, num_heads_q: int, num_heads_k: int, num_heads_v: int, "
        "head_dim: int, eps: float, q_weight: Tensor, k_weight: Tensor, cos_sin_cache: Tensor, "
        "is_neox: bool, position_ids: Tensor) -> None"
    ),
    make_inputs=qk_norm_rope_inputs,
    reference=qk_norm_rope_reference,
    smoke=cases(
        "fused_qk_norm_rope",
        product(tokens=[3], heads=[(2, 1, 1)], head_dim=[64], dtype=FLOAT16_DTYPES, is_neox=[True, False], eps=[1e-5]),
        timed=qk_norm_rope_timed,
    ),
    public=cases(
        "fused_qk_norm_rope",
        product(
            tokens=[1, 71, 128, 1024, 5333],
            heads=[(4, 4, 4), (16, 16, 16), (32, 16, 8)],
            head_dim=[64, 128],
            dtype=FLOAT16_DTYPES,
            is_neox=[False, True],
            eps=[1e-5],
        ),
        timed=qk_norm_rope_timed,
    ),
    held_out=qk_norm_rope_held_out,
    mutates=(0,),
    compare_return=False,
    prompt_notes=(
        "qkv [T, (Hq+Hk+Hv)*D] contiguous fp16/bf16, heads laid out q then k then v; q_weight, k_weight [D]; "
        "cos_sin_cache [max_pos, D] (qkv dtype) with cos in [:D/2] and sin in [D/2:]; position_ids int64 [T]. "
        "For every q and k head (v untouched), all in fp32: x <- x * rsqrt(mean(x^2) + eps) * w, then RoPE "
        "with c_i = cache[pos, i], s_i = cache[pos, D/2 + i]: NeoX pairs (i, i + D/2), GPT-J pairs "
        "(2i, 2i+1); x' = x*c - y*s, y' = y*c + x*s. One final rounding to the dtype. In place; returns None."
    ),
    departures="Held-out cases also use random (not arange) positions.",
)


OPERATORS: list[OperatorSpec] = [ROTARY_EMBEDDING, FUSED_QK_NORM_ROPE]
