"""vLLM mixture-of-experts kernels: moe_sum, top-k routing (topk_softmax, grouped_topk), shuffle_rows."""

from __future__ import annotations

import torch

from evaluation.catalog.spec import Call, Case, OperatorSpec, dtype_of
from evaluation.catalog.vllm.common import (
    FLOAT16_DTYPES,
    cases,
    product,
    randint,
    randn,
    randperm,
    record,
)

# --- moe_sum -----------------------------------------------------------------------------------------------


def moe_sum_inputs(case: Case, generator: torch.Generator) -> Call:
    params = case.params
    dtype = dtype_of(params["dtype"])
    tokens, topk, hidden = params["tokens"], params["topk"], params["hidden"]
    return Call(args=[randn((tokens, topk, hidden), dtype, generator), torch.empty((tokens, hidden), dtype=dtype)])


def moe_sum_reference(case: Case, call: Call) -> None:
    values, output = call.args
    topk = values.size(1)
    if topk in (2, 3, 4):  # vLLM's own kernel: accumulate in the tensor dtype, one rounding per add
        total = values[:, 0].clone()
        for k in range(1, topk):
            total = total + values[:, k]
        output.copy_(total)
    else:  # at::sum_out: fp32 accumulation, one rounding
        output.copy_(values.float().sum(dim=1).to(output.dtype))


def moe_sum_timed(params: dict) -> bool:
    return params["tokens"] * params["hidden"] >= 2**20


MOE_SUM = record(
    "moe_sum",
    description="Sum the top-k expert outputs of each token: output[t] = sum_k input[t, k].",
    signature="moe_sum(input: Tensor, output: Tensor) -> None",
    make_inputs=moe_sum_inputs,
    reference=moe_sum_reference,
    smoke=cases("moe_sum", product(tokens=[3], topk=[2, 4, 8], hidden=[32], dtype=FLOAT16_DTYPES), timed=moe_sum_timed),
    public=cases(
        "moe_sum",
        product(tokens=[1, 128, 1024, 5333], topk=[2, 4], hidden=[32, 512, 4096], dtype=FLOAT16_DTYPES),
        timed=moe_sum_timed,
    ),
    held_out=lambda rng: list(
        cases(
            "moe_sum",
            [
                {
                    "tokens": rng.randint(1, 3000),
                    "topk": rng.choice((2, 3, 4, 6, 8)),
                    "hidden": rng.choice((64, 96, 2048, 7168)),
                    "dtype": rng.choice(FLOAT16_DTYPES),
                }
                for _ in range(6)
            ],
            timed=moe_sum_timed,
        )
    ),
    mutates=(1,),
    compare_return=False,
    prompt_notes=(
        "input [T, topk, H] and output [T, H], fp16/bf16. output[t] = sum over k of input[t, k]. For topk in "
        "{2, 3, 4} vLLM accumulates in the tensor dtype in order k = 0, 1, ... (every add rounded); for other "
        "topk it sums in fp32 and rounds once. Both tensors are contiguous in every case (vLLM's kernel indexes "
        "them so). Returns None."
    ),
    departures=(
        "The original passes a 2-D input [T*topk, H], which the op reads as topk = H and answers by resizing "
        "`output` to the row sums [T*topk] (at::sum_out). We pass the intended 3-D input [T, topk, H]; held-out "
        "cases also use topk 3, 6 and 8 (the fp32 path)."
    ),
)


# --- topk_softmax ------------------------------------------------------------------------------------------


def topk_softmax_inputs(case: Case, generator: torch.Generator) -> Call:
    params = case.params
    tokens, experts, topk = params["tokens"], params["experts"], params["topk"]
    gating = randn((tokens, experts), torch.float32, generator)
    return Call(
        args=[
            torch.empty((tokens, topk), dtype=torch.float32),
            torch.empty((tokens, topk), dtype=torch.int32),
            torch.empty((tokens, topk), dtype=torch.int32),
            gating,
            params["renormalize"],
        ]
    )


def topk_softmax_reference(case: Case, call: Call) -> None:
    weights, ids, token_expert_indices, gating, renormalize = call.args
    tokens, topk = weights.shape
    logits = gating.float()
    exps = torch.exp(logits - logits.amax(dim=-1, keepdim=True))
    probabilities = exps * (1.0 / exps.sum(dim=-1, keepdim=True))
    order = torch.sort(probabilities, dim=-1, descending=True, stable=True).indices[:, :topk]  # ties: lower id
    chosen = torch.gather(probabilities, 1, order)
    if renormalize:
        total = chosen.sum(dim=-1, keepdim=True)
        chosen = chosen / torch.where(total > 0, total, torch.ones_like(total))
    weights.copy_(chosen)
    ids.copy_(order.to(torch.int32))
    slots = (
        torch.arange(topk, device=gating.device)[None, :] * tokens + torch.arange(tokens, device=gating.device)[:, None]
    )
    token_expert_indices.copy_(slots.to(torch.int32))


TOPK_SOFTMAX = record(
    "topk_softmax",
    description="Softmax over experts, then the top-k experts per token (weights, ids, slot indices).",
    signature=(
        "topk_softmax(topk_weights: Tensor, topk_ids: Tensor, token_expert_indices: Tensor, "
        "gating_output: Tensor, renormalize: bool = False) -> None"
    ),
    make_inputs=topk_softmax_inputs,
    reference=topk_softmax_reference,
    smoke=cases(
        "topk_softmax",
        product(tokens=[1, 7], experts=[8, 16], topk=[2], renormalize=[False, True]),
        timed=lambda p: p["tokens"] >= 1024,
    ),
    public=cases(
        "topk_softmax",
        product(tokens=[1, 7, 32, 128, 1024, 4096], experts=[8, 16, 64], topk=[1, 2, 4], renormalize=[False, True]),
        timed=lambda p: p["tokens"] >= 1024,
    ),
    held_out=lambda rng: list(
        cases(
            "topk_softmax",
            [
                {
                    "tokens": rng.randint(1, 5000),
                    "experts": rng.choice((8, 16, 32, 64, 128, 256)),
                    "topk": rng.choice((1, 2, 4, 6, 8)),
                    "renormalize": rng.random() < 0.5,
                }
                for _ in range(6)
            ],
            timed=lambda p: p["tokens"] >= 1024,
        )
    ),
    mutates=(0, 1, 2),
    compare_return=False,
    prompt_notes=(
        "gating_output fp32 [T, E]; outputs topk_weights fp32 [T, k], topk_ids int32 [T, k], token_expert_indices "
        "int32 [T, k]. Per token: softmax over E in fp32 (subtract the max, exp, multiply by 1/sum); take the k "
        "largest probabilities in descending order (ties -> lower expert id); weights = those probabilities, "
        "ids = the experts, token_expert_indices[t, j] = j*T + t. If renormalize: weights / (their sum, or 1 "
        "if the sum is 0). Returns None."
    ),
    judgement_notes="Weights with the fp32 tolerance, ids and token_expert_indices exact.",
    departures="token_expert_indices is compared too (the original ignores it).",
)


# --- grouped_topk ------------------------------------------------------------------------------------------


def grouped_topk_inputs(case: Case, generator: torch.Generator) -> Call:
    params = case.params
    dtype = dtype_of(params["dtype"])
    tokens, experts = params["shape"]
    scores = randn((tokens, experts), dtype, generator)
    bias = randn((experts,), dtype, generator)
    groups = params["groups"]
    return Call(
        args=[
            scores,
            groups,
            min(params["topk_group"], groups),
            params["topk"],
            params["renormalize"],
            params.get("scaling", 1.0),
            bias,
            params["scoring"],
        ]
    )


def grouped_topk_reference(case: Case, call: Call) -> tuple[torch.Tensor, torch.Tensor]:
    scores, groups, topk_group, topk, renormalize, scaling, bias, scoring = call.args
    tokens, experts = scores.shape
    dtype = scores.dtype
    score = torch.sigmoid(scores.float()).to(dtype) if scoring == 1 else scores
    biased = score + bias  # in the input dtype
    per_group = biased.view(tokens, groups, experts // groups)
    top_two = torch.sort(per_group, dim=-1, descending=True).values[..., :2]
    group_scores = (top_two[..., 0] + top_two[..., 1]) if top_two.size(-1) == 2 else top_two[..., 0] * 2
    group_scores = torch.where(
        torch.isfinite(group_scores),
        group_scores.float(),
        torch.full_like(group_scores, float("-inf"), dtype=torch.float32),
    )
    kept = torch.sort(group_scores, dim=-1, descending=True, stable=True).indices[:, :topk_group]
    group_mask = torch.zeros((tokens, groups), dtype=torch.bool, device=scores.device).scatter_(1, kept, True)
    expert_mask = group_mask.repeat_interleave(experts // groups, dim=1)
    candidates = torch.where(expert_mask, biased.float(), torch.full_like(biased, float("-inf"), dtype=torch.float32))
    ids = torch.sort(candidates, dim=-1, descending=True, stable=True).indices[:, :topk]
    weights = torch.gather(score.float(), 1, ids)
    denominator = weights.sum(dim=-1, keepdim=True) + 1e-20 if renormalize else 1.0
    weights = weights / denominator * scaling
    no_finite = ~torch.isfinite(group_scores).any(dim=-1)
    if bool(no_finite.any()):
        ids[no_finite] = torch.arange(topk, device=scores.device)
        weights[no_finite] = 1.0 / topk
    return weights, ids.to(torch.int32)


def grouped_topk_timed(params: dict) -> bool:
    return params["shape"][0] >= 1024


GROUPED_TOPK = record(
    "grouped_topk",
    description="DeepSeek-V3 grouped top-k expert routing (no-aux-loss, with a score-correction bias).",
    signature=(
        "grouped_topk(scores: Tensor, num_expert_group: int, topk_group: int, topk: int, renormalize: bool, "
        "routed_scaling_factor: float, bias: Tensor, scoring_func: int = 0) -> tuple[Tensor, Tensor]"
    ),
    make_inputs=grouped_topk_inputs,
    reference=grouped_topk_reference,
    smoke=cases(
        "grouped_topk",
        product(
            shape=[(3, 32)],
            groups=[1, 4],
            topk_group=[2],
            topk=[2],
            renormalize=[True],
            scoring=[0, 1],
            dtype=FLOAT16_DTYPES,
        )
        + [
            {
                "shape": [5, 64],
                "groups": 8,
                "topk_group": 4,
                "topk": 6,
                "renormalize": True,
                "scoring": 1,
                "dtype": "bfloat16",
                "scaling": 2.5,
            }
        ],
        timed=grouped_topk_timed,
    ),
    public=cases(
        "grouped_topk",
        product(
            shape=[(1, 32), (128, 256), (1024, 512)],
            groups=[1, 2, 4],
            topk_group=[1, 2],
            topk=[1, 2],
            renormalize=[False, True],
            scoring=[0, 1],
            dtype=FLOAT16_DTYPES,
        )
        + product(
            shape=[(1024, 256)],
            groups=[8],
            topk_group=[4],
            topk=[8],
            renormalize=[True],
            scoring=[1],
            dtype=FLOAT16_DTYPES,
            scaling=[2.5],
        ),
        timed=grouped_topk_timed,
    ),
    held_out=lambda rng: list(
        cases(
            "grouped_topk",
            [
                {
                    "shape": [rng.randint(1, 3000), rng.choice((64, 128, 256))],
                    "groups": rng.choice((1, 2, 4, 8)),
                    "topk_group": rng.choice((1, 2, 4)),
                    "topk": rng.choice((1, 2, 4, 8)),
                    "renormalize": True,
                    "scoring": 1,
                    "dtype": rng.choice(FLOAT16_DTYPES),
                    "scaling": rng.choice((1.0, 2.5)),
                }
                for _ in range(6)
            ],
            timed=grouped_topk_timed,
        )
    ),
    output_tolerances=(None, (0.0, 0.0)),
    prompt_notes=(
        "scores [T, E] fp16/bf16, bias [E] of the same dtype; E divisible by num_expert_group. All score math in "
        "the input dtype: s = scores (scoring_func 0) or dtype(sigmoid(float(scores))) (1); b = s + bias "
        "(rounded to the dtype). Group score = dtype(max1 + max2) of the two largest b in the group "
        "(non-finite counts as -inf). Keep the topk_group groups with the largest group scores (ties: lower "
        "group first); among their experts take the topk largest b, descending, ties -> lower expert id. "
        "Weights = float(s) of those experts; if renormalize: w / (sum(w) + 1e-20) * routed_scaling_factor, "
        "else w * routed_scaling_factor. Returns (weights fp32 [T, topk], ids int32 [T, topk])."
    ),
    judgement_notes="Weights with the fp32 tolerance, ids exact.",
    departures="Every public point also exists in the original except a DeepSeek-V3-like (8 groups, top-4 "
    "groups, top-8, scaling 2.5) shape; with topk > 2 the renormalising sum is summed in id order.",
)


# --- shuffle_rows ------------------------------------------------------------------------------------------


def shuffle_inputs(case: Case, generator: torch.Generator) -> Call:
    params = case.params
    rows, cols = params["rows"], params["cols"]
    values = randn((rows, cols), dtype_of(params["dtype"]), generator)
    if params["factor"] == 1:
        mapping = randperm(rows, generator, torch.int32)
    else:
        mapping = randint(0, rows, (rows * params["factor"],), generator, torch.int32)
    return Call(args=[values, mapping])


def shuffle_reference(case: Case, call: Call) -> torch.Tensor:
    values, mapping = call.args
    return values[mapping.to(torch.int64)]


SHUFFLE_ROWS = record(
    "shuffle_rows",
    description="Gather rows: out[i] = input[dst2src_map[i]].",
    signature="shuffle_rows(input_tensor: Tensor, dst2src_map: Tensor) -> Tensor",
    make_inputs=shuffle_inputs,
    reference=shuffle_reference,
    smoke=cases(
        "shuffle_rows",
        product(rows=[5], cols=[32], factor=[1, 2], dtype=FLOAT16_DTYPES),
        timed=lambda p: p["rows"] * p["factor"] >= 1024 and p["cols"] >= 512,
    ),
    public=cases(
        "shuffle_rows",
        product(rows=[1, 128, 1024, 5333], cols=[32, 512, 4096], factor=[1, 2], dtype=FLOAT16_DTYPES),
        timed=lambda p: p["rows"] * p["factor"] >= 1024 and p["cols"] >= 512,
    ),
    held_out=lambda rng: list(
        cases(
            "shuffle_rows",
            [
                {
                    "rows": rng.randint(1, 5000),
                    "cols": 16 * rng.randint(1, 400),
                    "factor": rng.choice((1, 2, 3)),
                    "dtype": rng.choice(FLOAT16_DTYPES),
                }
                for _ in range(5)
            ],
            timed=lambda p: p["rows"] * p["factor"] >= 1024 and p["cols"] >= 512,
        )
    ),
    tolerance_override=(0.0, 0.0),
    prompt_notes=(
        "input_tensor [R, C] fp16/bf16 (C a multiple of 16); dst2src_map int32 [D] (a permutation, or ids with "
        "repeats). Returns a new tensor [D, C] with out[i] = input_tensor[dst2src_map[i]]."
    ),
    judgement_notes="Exact (a gather has no rounding; the original's assert_close is exact in practice).",
)


OPERATORS: list[OperatorSpec] = [
    MOE_SUM,
    TOPK_SOFTMAX,
    GROUPED_TOPK,
    SHUFFLE_ROWS,
]
