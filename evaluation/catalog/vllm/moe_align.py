"""vLLM MoE token alignment (csrc/moe/moe_align_sum_kernels.cu): plain, batched and per-LoRA variants."""

from __future__ import annotations

import math

import torch

from evaluation.catalog.spec import Call, Case, OperatorSpec
from evaluation.catalog.vllm.common import (
    cases,
    product,
    randint,
    record,
)

# --- moe_align_block_size ----------------------------------------------------------------------------------


def align_sizes(numel: int, experts: int, block_size: int) -> tuple[int, int]:
    """(len(sorted_token_ids), len(experts_ids)) as vLLM's callers allocate them, experts_ids rounded up."""
    max_padded = numel + experts * (block_size - 1)
    return max_padded, math.ceil(max_padded / block_size)


def moe_align_inputs(case: Case, generator: torch.Generator) -> Call:
    params = case.params
    experts, block_size = params["experts"], params["block_size"]
    topk_ids = randint(0, experts, (params["tokens"], params["topk"]), generator, torch.int32)
    sorted_len, blocks_len = align_sizes(topk_ids.numel(), experts, block_size)
    return Call(
        args=[
            topk_ids,
            experts,
            block_size,
            torch.empty(sorted_len, dtype=torch.int32),
            torch.empty(blocks_len, dtype=torch.int32),
            torch.empty(1, dtype=torch.int32),
        ]
    )


def moe_align_reference(case: Case, call: Call) -> None:
    topk_ids, experts, block_size, sorted_ids, expert_ids, post_pad = call.args
    flat = topk_ids.reshape(-1).to(torch.int64)
    numel = flat.numel()
    counts = torch.bincount(flat[flat < experts], minlength=experts)[:experts]
    padded = (counts + block_size - 1) // block_size * block_size
    offsets = torch.cumsum(padded, 0) - padded
    sorted_ids.fill_(numel)
    expert_ids.fill_(0)
    order = torch.sort(flat, stable=True).indices  # flat indices grouped by expert, ascending within one
    ranks = torch.arange(numel, device=flat.device) - (torch.cumsum(counts, 0) - counts)[flat[order]]
    keep = flat[order] < experts
    sorted_ids[(offsets[flat[order]] + ranks)[keep]] = order[keep].to(torch.int32)
    block_expert = torch.repeat_interleave(torch.arange(experts, device=flat.device), padded // block_size)
    expert_ids[: block_expert.numel()] = block_expert.to(torch.int32)
    post_pad[0] = int(padded.sum())


def moe_align_check(case: Case, call: Call, outputs: tuple[torch.Tensor, ...]) -> str | None:
    """Exact check, except that token ids may appear in any order within one expert's segment."""
    topk_ids, experts, block_size = call.args[:3]
    sorted_ids, expert_ids, post_pad = (tensor.cpu() for tensor in outputs)
    expected = Call(
        args=[
            topk_ids.cpu(),
            experts,
            block_size,
            torch.empty_like(sorted_ids),
            torch.empty_like(expert_ids),
            torch.empty_like(post_pad),
        ]
    )
    moe_align_reference(case, expected)
    want_sorted, want_experts, want_post = expected.args[3:]
    if not torch.equal(post_pad, want_post):
        return f"num_tokens_post_pad {post_pad.tolist()} != {want_post.tolist()}"
    if not torch.equal(expert_ids, want_experts):
        return "experts_ids differ"
    segment = torch.full_like(want_sorted, experts, dtype=torch.int64)  # tail beyond the segments: own segment
    flat = topk_ids.cpu().reshape(-1).to(torch.int64)
    counts = torch.bincount(flat[flat < experts], minlength=experts)[:experts]
    padded = (counts + block_size - 1) // block_size * block_size
    segment[: int(padded.sum())] = torch.repeat_interleave(torch.arange(experts), padded)
    scale = want_sorted.numel() + flat.numel() + 1

    def canonical(ids: torch.Tensor) -> torch.Tensor:
        return torch.sort(segment * scale + ids.to(torch.int64)).values

    if not torch.equal(canonical(sorted_ids), canonical(want_sorted)):
        return "sorted_token_ids differ (as a multiset per expert segment)"
    return None


def moe_align_timed(params: dict) -> bool:
    return params["tokens"] >= 1024


MOE_ALIGN_BLOCK_SIZE = record(
    "moe_align_block_size",
    description="Group token slots by expert and pad each expert's group to a multiple of block_size.",
    signature=(
        "moe_align_block_size(topk_ids: Tensor, num_experts: int, block_size: int, sorted_token_ids: Tensor, "
        "experts_ids: Tensor, num_tokens_post_pad: Tensor, expert_map: Tensor | None = None) -> None"
    ),
    make_inputs=moe_align_inputs,
    reference=moe_align_reference,
    smoke=cases(
        "moe_align_block_size",
        product(tokens=[5, 16], experts=[4], block_size=[4, 8], topk=[2])
        # A decode step: one token routed to 2 of 16 experts, so most experts get no token and no block (a
        # draw of the cases above leaves an expert empty only now and then).
        + [{"tokens": 1, "experts": 16, "block_size": 4, "topk": 2}],
        timed=moe_align_timed,
    ),
    public=cases(
        "moe_align_block_size",
        product(
            tokens=[128, 1024, 4096, 6152, 11575, 16384],
            experts=[4, 8, 16, 32, 64],
            block_size=[8, 16, 32, 64],
            topk=[2, 4, 10],
        ),
        timed=moe_align_timed,
    ),
    held_out=lambda rng: list(
        cases(
            "moe_align_block_size",
            [
                {
                    "tokens": rng.randint(1, 20000),
                    "experts": rng.choice((4, 8, 16, 32, 64, 128, 256)),
                    "block_size": rng.choice((8, 16, 32, 64, 128)),
                    "topk": rng.choice((1, 2, 4, 6, 8)),
                }
                for _ in range(6)
            ],
            timed=moe_align_timed,
        )
    ),
    mutates=(3, 4, 5),
    compare_return=False,
    judgement="statistical",
    stat_check=moe_align_check,
    answer_is_deterministic=True,
    judgement_notes=(
        "A deterministic check (run through stat_check): num_tokens_post_pad and experts_ids exact; "
        "sorted_token_ids compared as a multiset within each expert's padded segment (the original's rule: "
        "vLLM's atomics leave the order inside a segment unspecified). The reference lists ids ascending."
    ),
    prompt_notes=(
        "topk_ids int32 [T, topk] with ids in [0, num_experts); numel = T*topk. Outputs (all int32, contents "
        "arbitrary on entry): sorted_token_ids [numel + E*(block_size-1)], experts_ids "
        "[ceil(len(sorted_token_ids)/block_size)], num_tokens_post_pad [1]. Let c_e = count of expert e, "
        "p_e = ceil(c_e/block_size)*block_size, o_e = sum of p over experts < e. Fill sorted_token_ids with "
        "numel, then write every flat index i with expert e into the segment [o_e, o_e + c_e) (any order "
        "inside a segment); experts_ids[o_e/bs .. (o_e+p_e)/bs) = e and every later entry 0; "
        "num_tokens_post_pad[0] = sum of p_e. expert_map is None. Returns None."
    ),
    departures="experts_ids is allocated with ceil(len/bs) entries (the original allocates floor(len/bs), "
    "which vLLM's kernel overruns by one element whenever the division is inexact).",
)


# --- batched_moe_align_block_size --------------------------------------------------------------------------


def batched_align_inputs(case: Case, generator: torch.Generator) -> Call:
    params = case.params
    batches, block_size, max_tokens = params["batches"], params["block_size"], params["max_tokens"]
    counts = randint(1, max(2, max_tokens // 2), (batches,), generator, torch.int32)
    padded_max = math.ceil(max_tokens / block_size) * block_size
    return Call(
        args=[
            max_tokens,
            block_size,
            counts,
            torch.zeros(batches * padded_max, dtype=torch.int32),
            torch.zeros(batches * padded_max // block_size, dtype=torch.int32),
            torch.zeros(1, dtype=torch.int32),
        ]
    )


def batched_align_reference(case: Case, call: Call) -> None:
    max_tokens, block_size, counts, sorted_ids, expert_ids, post_pad = call.args
    batches = counts.numel()
    counts64 = counts.to(torch.int64)
    padded = (counts64 + block_size - 1) // block_size * block_size
    offsets = torch.cumsum(padded, 0) - padded
    sorted_ids.fill_(batches * max_tokens)
    expert_ids.fill_(-1)
    batch_of = torch.repeat_interleave(torch.arange(batches, device=counts.device), counts64)
    rank = torch.arange(batch_of.numel(), device=counts.device) - (torch.cumsum(counts64, 0) - counts64)[batch_of]
    sorted_ids[offsets[batch_of] + rank] = (batch_of * max_tokens + rank).to(torch.int32)
    blocks = torch.repeat_interleave(torch.arange(batches, device=counts.device), padded // block_size)
    expert_ids[: blocks.numel()] = blocks.to(torch.int32)
    post_pad[0] = int(padded.sum())


BATCHED_CONFIGS = (
    (4, 4, 32),
    (8, 8, 64),
    (16, 4, 128),
    (8, 4, 256),
    (32, 8, 128),
    (32, 8, 64),
    (64, 8, 128),
    (64, 16, 256),
    (128, 16, 256),
)
BATCHED_MOE_ALIGN_BLOCK_SIZE = record(
    "batched_moe_align_block_size",
    description="Per-batch padded token slots and block -> batch ids for batched MoE.",
    signature=(
        "batched_moe_align_block_size(max_tokens_per_batch: int, block_size: int, expert_num_tokens: Tensor, "
        "sorted_ids: Tensor, expert_ids: Tensor, num_tokens_post_pad: Tensor) -> None"
    ),
    make_inputs=batched_align_inputs,
    reference=batched_align_reference,
    smoke=cases(
        "batched_moe_align_block_size",
        [{"batches": 3, "block_size": 4, "max_tokens": 16}, {"batches": 5, "block_size": 8, "max_tokens": 32}],
        timed=lambda p: p["batches"] >= 16 and p["max_tokens"] >= 128,
    ),
    public=cases(
        "batched_moe_align_block_size",
        [{"batches": b, "block_size": bs, "max_tokens": m} for b, bs, m in BATCHED_CONFIGS],
        timed=lambda p: p["batches"] >= 16 and p["max_tokens"] >= 128,
    ),
    held_out=lambda rng: list(
        cases(
            "batched_moe_align_block_size",
            [
                {
                    "batches": rng.randint(1, 256),
                    "block_size": rng.choice((4, 8, 16, 32)),
                    "max_tokens": rng.randint(8, 512),
                }
                for _ in range(5)
            ],
            timed=lambda p: p["batches"] >= 16 and p["max_tokens"] >= 128,
        )
    ),
    mutates=(3, 4, 5),
    compare_return=False,
    prompt_notes=(
        "expert_num_tokens int32 [B] (n_b in [1, max/2)); sorted_ids int32 [B*ceil(max/bs)*bs], expert_ids int32 "
        "[B*ceil(max/bs)], num_tokens_post_pad int32 [1]. c_b = ceil(n_b/bs)*bs, o_b = exclusive cumsum of c_b. "
        "sorted_ids: every entry B*max_tokens_per_batch, then sorted_ids[o_b + i] = b*max_tokens_per_batch + i "
        "for i < n_b; expert_ids: every entry -1, then expert_ids[o_b/bs + j] = b for j < c_b/bs; "
        "num_tokens_post_pad[0] = sum of c_b. Returns None."
    ),
    judgement_notes="All three outputs exact (the original's torch.equal).",
)


# --- moe_lora_align_block_size -----------------------------------------------------------------------------


def align_slice(
    flat: torch.Tensor,
    keep: torch.Tensor,
    experts: int,
    block_size: int,
    sorted_ids: torch.Tensor,
    expert_ids: torch.Tensor,
    inactive: int,
) -> int:
    """moe_align of the flat slots where ``keep`` holds, into one slice; returns the padded total.

    Ids ascending within an expert's segment (vLLM's order is unspecified there)."""
    numel = flat.numel()
    selected = keep & (flat < experts)
    counts = torch.bincount(flat[selected], minlength=experts)[:experts]
    padded = (counts + block_size - 1) // block_size * block_size
    offsets = torch.cumsum(padded, 0) - padded
    sorted_ids.fill_(numel)
    slots = selected.nonzero().flatten()
    order = slots[torch.sort(flat[slots], stable=True).indices]
    ranks = torch.arange(order.numel(), device=flat.device) - (torch.cumsum(counts, 0) - counts)[flat[order]]
    sorted_ids[offsets[flat[order]] + ranks] = order.to(torch.int32)
    block_expert = torch.repeat_interleave(torch.arange(experts, device=flat.device), padded // block_size)
    expert_ids.fill_(inactive)
    expert_ids[: block_expert.numel()] = block_expert.to(torch.int32)
    return int(padded.sum())


def lora_inputs(case: Case, generator: torch.Generator) -> Call:
    params = case.params
    tokens, topk, experts, block_size, max_loras = (
        params[key] for key in ("tokens", "topk", "experts", "block_size", "max_loras")
    )
    topk_ids = randint(0, experts, (tokens, topk), generator, torch.int32)
    mapping = randint(0, max_loras, (tokens,), generator, torch.int32)
    padded_len, blocks_len = align_sizes(topk_ids.numel(), experts, block_size)
    lora_ids = torch.arange(max_loras, dtype=torch.int32).flip(0)
    adapter_enabled = torch.ones(max_loras + 1, dtype=torch.int32)
    if max_loras > 1:
        lora_ids[-1] = -1  # one empty slot
        adapter_enabled[int(randint(0, max_loras, (), generator))] = 0  # one disabled adapter
    return Call(
        args=[
            topk_ids,
            mapping,
            experts,
            block_size,
            max_loras,
            padded_len,
            blocks_len,
            torch.zeros(max_loras * padded_len, dtype=torch.int32),
            torch.zeros(max_loras * blocks_len, dtype=torch.int32),
            torch.zeros(max_loras, dtype=torch.int32),
            adapter_enabled,
            lora_ids,
        ]
    )


def lora_reference(case: Case, call: Call) -> None:
    (
        topk_ids,
        mapping,
        experts,
        block_size,
        _max_loras,
        padded_len,
        blocks_len,
        sorted_ids,
        expert_ids,
        post_pad,
        adapter_enabled,
        lora_ids,
    ) = call.args[:12]
    flat = topk_ids.reshape(-1).to(torch.int64)
    topk = topk_ids.size(1)
    token_of_slot = torch.arange(flat.numel(), device=flat.device) // topk
    for lora_id in lora_ids.tolist():
        if lora_id == -1 or int(adapter_enabled[lora_id]) == 0:
            continue
        keep = mapping.to(torch.int64)[token_of_slot] == lora_id
        post_pad[lora_id] = align_slice(
            flat,
            keep,
            experts,
            block_size,
            sorted_ids[lora_id * padded_len : (lora_id + 1) * padded_len],
            expert_ids[lora_id * blocks_len : (lora_id + 1) * blocks_len],
            -1,
        )


def lora_check(case: Case, call: Call, outputs: tuple[torch.Tensor, ...]) -> str | None:
    """Exact, except that ids may appear in any order within one expert's segment of a slice."""
    args = [arg.cpu() if isinstance(arg, torch.Tensor) else arg for arg in call.args]
    sorted_ids, expert_ids, post_pad = (tensor.cpu() for tensor in outputs)
    expected = Call(
        args=args[:7]
        + [torch.zeros_like(sorted_ids), torch.zeros_like(expert_ids), torch.zeros_like(post_pad)]
        + args[10:]
    )
    lora_reference(case, expected)
    want_sorted, want_experts, want_post = expected.args[7:10]
    if not torch.equal(post_pad, want_post):
        return f"num_tokens_post_pad {post_pad.tolist()} != {want_post.tolist()}"
    if not torch.equal(expert_ids, want_experts):
        return "experts_ids differ"
    padded_len, blocks_len, block_size = args[5], args[6], args[3]
    # segment key of every position: its slice and the expert of its block there (-1 + 1 = 0 past the end)
    keys = []
    for slice_index in range(want_post.numel()):
        block_experts = want_experts[slice_index * blocks_len : (slice_index + 1) * blocks_len].to(torch.int64) + 1
        segment = torch.repeat_interleave(block_experts, block_size)[:padded_len]
        keys.append(slice_index * (args[2] + 2) + segment)
    key = torch.cat(keys)
    scale = int(want_sorted.max()) + int(sorted_ids.max().clamp(min=0)) + 2

    def canonical(ids: torch.Tensor) -> torch.Tensor:
        return torch.sort(key * scale + ids.to(torch.int64)).values

    if not torch.equal(canonical(sorted_ids), canonical(want_sorted)):
        return "sorted_token_ids differ (as a multiset per slice and expert segment)"
    return None


def lora_timed(params: dict) -> bool:
    return params["tokens"] >= 128 and params["experts"] >= 16


LORA_CONFIGS = (
    (16, 2, 8, 4, 2),
    (32, 2, 8, 8, 4),
    (64, 4, 16, 4, 2),
    (128, 2, 16, 8, 4),
    (128, 4, 16, 4, 2),
    (32, 4, 8, 4, 2),
    (256, 4, 16, 8, 4),
    (256, 2, 16, 4, 2),
    (128, 2, 32, 8, 4),
    (64, 2, 8, 4, 2),
)
MOE_LORA_ALIGN_BLOCK_SIZE = record(
    "moe_lora_align_block_size",
    description="Per-LoRA-adapter version of moe_align_block_size (one aligned slice per active adapter).",
    signature=(
        "moe_lora_align_block_size(topk_ids: Tensor, token_lora_mapping: Tensor, num_experts: int, "
        "block_size: int, max_loras: int, max_num_tokens_padded: int, max_num_m_blocks: int, "
        "sorted_token_ids: Tensor, experts_ids: Tensor, num_tokens_post_pad: Tensor, adapter_enabled: Tensor, "
        "lora_ids: Tensor, expert_map: Tensor | None = None) -> None"
    ),
    make_inputs=lora_inputs,
    reference=lora_reference,
    smoke=cases(
        "moe_lora_align_block_size",
        [
            {"tokens": 6, "topk": 2, "experts": 4, "block_size": 4, "max_loras": 3},
            {"tokens": 5, "topk": 2, "experts": 4, "block_size": 8, "max_loras": 1},
        ],
        timed=lora_timed,
    ),
    public=cases(
        "moe_lora_align_block_size",
        [{"tokens": t, "topk": k, "experts": e, "block_size": b, "max_loras": m} for t, k, e, b, m in LORA_CONFIGS]
        + [{"tokens": 2048, "topk": 8, "experts": 64, "block_size": 16, "max_loras": 4}],
        timed=lora_timed,
    ),
    held_out=lambda rng: list(
        cases(
            "moe_lora_align_block_size",
            [
                {
                    "tokens": rng.randint(1, 4096),
                    "topk": rng.choice((1, 2, 4, 8)),
                    "experts": rng.choice((8, 16, 32, 64)),
                    "block_size": rng.choice((4, 8, 16, 32)),
                    "max_loras": rng.randint(1, 8),
                }
                for _ in range(4)
            ],
            timed=lora_timed,
        )
    ),
    mutates=(7, 8, 9),
    compare_return=False,
    judgement="statistical",
    stat_check=lora_check,
    answer_is_deterministic=True,
    judgement_notes=(
        "A deterministic check (run through stat_check): num_tokens_post_pad and experts_ids exact; "
        "sorted_token_ids compared as a multiset within each slice's expert segments; slices of empty or "
        "disabled slots must keep their initial zeros."
    ),
    prompt_notes=(
        "topk_ids int32 [T, topk]; token_lora_mapping int32 [T] (the adapter of each token); outputs int32, "
        "zero on entry: sorted_token_ids [max_loras * max_num_tokens_padded], experts_ids [max_loras * "
        "max_num_m_blocks], num_tokens_post_pad [max_loras]; adapter_enabled int32 [max_loras + 1]; lora_ids "
        "int32 [max_loras] (-1 = empty slot); expert_map None. For every lora_id in lora_ids that is not -1 "
        "and has adapter_enabled[lora_id] != 0, run moe_align_block_size on the flat slots i whose token "
        "i // topk maps to lora_id, into the lora_id-th slices: sorted slice filled with numel = T*topk, then "
        "slot ids grouped by expert (any order inside a segment), each expert padded to block_size; "
        "experts_ids slice: the expert of each block, then -1 up to max_num_m_blocks; "
        "num_tokens_post_pad[lora_id] = padded total. Other slices stay untouched. Returns None."
    ),
    departures=(
        "The original enables no adapter (adapter_enabled all zero), so the op is a no-op in 9 of its 10 cases "
        "and reads an uninitialised mask in the 10th. We enable the adapters (except one disabled and one "
        "empty slot when max_loras > 1) and map tokens to random adapters, so the per-adapter alignment is "
        "exercised; one larger case is added. Semantics from vLLM's moe_align_sum_kernels.cu "
        "(_moe_align_block_size with model_offset = lora_id, inactive expert id -1)."
    ),
)


OPERATORS: list[OperatorSpec] = [
    MOE_ALIGN_BLOCK_SIZE,
    BATCHED_MOE_ALIGN_BLOCK_SIZE,
    MOE_LORA_ALIGN_BLOCK_SIZE,
]
