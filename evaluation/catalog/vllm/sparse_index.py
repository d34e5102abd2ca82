"""vLLM's MInference index conversion: convert_vertical_slash_indexes (csrc/attention/vertical_slash_index.cu).

The reference is a line-by-line port of the kernel's per-row merge loop (one thread per (batch, head, row
block) on the GPU); the kernel is its own specification.
"""

from __future__ import annotations

import math

import torch

from evaluation.catalog.spec import Call, Case, OperatorSpec
from evaluation.catalog.vllm.common import cases, record

MAX_DRAWS = 50


class _Overflow(Exception):
    """A row would write more entries than its slice of block_offset / column_index holds."""


def convert_row(
    q_len: int, kv_len: int, vertical: list[int], slash: list[int], start_m: int, size_m: int, size_n: int, causal: bool
) -> tuple[list[int], list[int]]:
    """(block offsets, column indices) of one row block, exactly as the CUDA thread computes them."""
    end_m = start_m + size_m
    shift = kv_len - q_len if causal else kv_len
    nnz_v, nnz_s = len(vertical), len(slash)
    blocks: list[int] = []
    columns: list[int] = []

    def save(range_start: int, range_end: int) -> None:
        if range_start >= kv_len:
            return
        blocks.extend(range(range_start, min(range_end, kv_len), size_n))

    has_slash = True
    s = v = 0
    v_idx = vertical[v]
    v += 1
    s_idx = slash[s]
    s += 1
    while s_idx >= end_m + shift and s < nnz_s:
        s_idx = slash[s]
        s += 1
    if s_idx > end_m + shift:
        has_slash = False
    s_idx = max(shift + end_m - s_idx, size_m)
    range_start, range_end = s_idx - size_m, s_idx
    if not has_slash:
        range_start, range_end = (shift + end_m, shift + end_m + size_n) if causal else (kv_len, kv_len + size_n)
    slash_finished = False
    while True:
        if v_idx < range_end:
            if v_idx < range_start:
                columns.append(v_idx)
            if v < nnz_v:
                v_idx = vertical[v]
                v += 1
            else:
                v_idx = end_m + size_n + shift
        else:
            if s < nnz_s and (causal or slash[s] >= start_m):
                s_idx = max(shift + end_m - slash[s], size_m)
                s += 1
            else:
                if v == nnz_v or (v_idx > range_start and causal):
                    if v == nnz_v and not causal and v_idx < kv_len:
                        columns.append(v_idx)
                    save(range_start, range_end)
                    break
                if causal:
                    range_start, range_end = shift + end_m, shift + end_m + size_n
                else:
                    save(range_start, range_end)
                    range_start, range_end = kv_len, kv_len + size_n
                slash_finished = True
            if not slash_finished:
                if s_idx > range_end + size_m:
                    save(range_start, range_end)
                    range_start, range_end = s_idx - size_m, s_idx
                elif s_idx > range_end:
                    range_end += size_m
    if len(blocks) > nnz_s or len(columns) > nnz_v:
        raise _Overflow
    return blocks, columns


def convert_all(
    q_seqlens: list[int],
    kv_seqlens: list[int],
    vertical: list[list[list[int]]],
    slash: list[list[list[int]]],
    context_size: int,
    size_m: int,
    size_n: int,
    causal: bool,
) -> tuple[torch.Tensor, ...]:
    batch, heads, nnz_s, nnz_v = len(slash), len(slash[0]), len(slash[0][0]), len(vertical[0][0])
    rows = math.ceil(context_size / size_m)
    block_count = torch.zeros((batch, heads, rows), dtype=torch.int32)
    block_offset = torch.zeros((batch, heads, rows, nnz_s), dtype=torch.int32)
    column_count = torch.zeros((batch, heads, rows), dtype=torch.int32)
    column_index = torch.zeros((batch, heads, rows, nnz_v), dtype=torch.int32)
    for b in range(batch):
        for h in range(heads):
            for m in range(rows):
                if m * size_m >= q_seqlens[b]:
                    continue
                blocks, columns = convert_row(
                    q_seqlens[b], kv_seqlens[b], vertical[b][h], slash[b][h], m * size_m, size_m, size_n, causal
                )
                block_count[b, h, m] = len(blocks)
                column_count[b, h, m] = len(columns)
                block_offset[b, h, m, : len(blocks)] = torch.tensor(blocks, dtype=torch.int32)
                column_index[b, h, m, : len(columns)] = torch.tensor(columns, dtype=torch.int32)
    return block_count, block_offset, column_count, column_index


def sorted_lists(
    batch: int, heads: int, count: int, limit: int, generator: torch.Generator, descending: bool
) -> torch.Tensor:
    """[batch, heads, count] distinct indices in [0, limit), sorted per (batch, head)."""
    keys = torch.rand((batch, heads, limit), generator=generator)
    chosen = keys.argsort(dim=-1)[..., :count]
    return chosen.sort(dim=-1, descending=descending).values.to(torch.int32)


def vs_inputs(case: Case, generator: torch.Generator) -> Call:
    params = case.params
    batch, heads, q_len, kv_len = params["batch"], params["heads"], params["q_len"], params["kv_len"]
    size_m, size_n, causal = params["block_m"], params["block_n"], params.get("causal", True)
    for _ in range(MAX_DRAWS):  # redraw until no row overflows its output slice (the kernel would spill)
        vertical = sorted_lists(batch, heads, params["nnz_v"], kv_len, generator, descending=False)
        slash = sorted_lists(batch, heads, params["nnz_s"], kv_len, generator, descending=True)
        call = Call(
            args=[
                torch.full((batch,), q_len, dtype=torch.int32),
                torch.full((batch,), kv_len, dtype=torch.int32),
                vertical,
                slash,
                kv_len,
                size_m,
                size_n,
                causal,
            ]
        )
        try:
            vs_reference(case, call)
        except _Overflow:
            continue
        return call
    raise RuntimeError(f"could not draw overflow-free index lists for {case.case_id}")


def vs_reference(case: Case, call: Call) -> tuple[torch.Tensor, ...]:
    q_seqlens, kv_seqlens, vertical, slash, context_size, size_m, size_n, causal = call.args
    device = q_seqlens.device
    outputs = convert_all(
        q_seqlens.tolist(), kv_seqlens.tolist(), vertical.tolist(), slash.tolist(), context_size, size_m, size_n, causal
    )
    return tuple(tensor.to(device) for tensor in outputs)


def vs_timed(params: dict) -> bool:
    return params["batch"] >= 4 and params["q_len"] >= 16 and params["kv_len"] >= 32


VS_CONFIGS = (
    (2, 4, 8, 4, 4),
    (4, 8, 16, 4, 4),
    (2, 8, 16, 8, 8),
    (4, 16, 32, 8, 8),
    (2, 4, 16, 4, 4),
    (4, 32, 64, 8, 8),
    (8, 16, 32, 8, 8),
    (8, 32, 64, 16, 16),
    (8, 32, 64, 8, 8),
    (8, 64, 128, 8, 8),
    (16, 32, 64, 8, 8),
    (16, 64, 128, 16, 16),
)


def vs_config(batch: int, q_len: int, kv_len: int, size_m: int, size_n: int, causal: bool = True) -> dict:
    # as the original: H = q_len heads; list lengths chosen so that the outputs have room (see departures)
    return {
        "batch": batch,
        "heads": min(q_len, 8),
        "q_len": q_len,
        "kv_len": kv_len,
        "block_m": size_m,
        "block_n": size_n,
        "nnz_v": max(2, kv_len // 4),
        "nnz_s": max(2, kv_len // 8),
        "causal": causal,
    }


CONVERT_VERTICAL_SLASH_INDEXES = record(
    "convert_vertical_slash_indexes",
    description="MInference: turn per-head vertical and slash index lists into block / column sparse lists.",
    signature=(
        "convert_vertical_slash_indexes(q_seqlens: Tensor, kv_seqlens: Tensor, vertical_indexes: Tensor, "
        "slash_indexes: Tensor, context_size: int, block_size_M: int, block_size_N: int, causal: bool = True"
        ") -> tuple[Tensor, Tensor, Tensor, Tensor]"
    ),
    make_inputs=vs_inputs,
    reference=vs_reference,
    smoke=cases(
        "convert_vertical_slash_indexes",
        [vs_config(2, 4, 8, 4, 4), vs_config(2, 8, 16, 4, 4), vs_config(2, 8, 16, 4, 4, causal=False)],
        timed=vs_timed,
    ),
    public=cases(
        "convert_vertical_slash_indexes",
        [vs_config(*config) for config in VS_CONFIGS] + [vs_config(4, 32, 64, 8, 8, causal=False)],
        timed=vs_timed,
    ),
    held_out=lambda rng: list(
        cases(
            "convert_vertical_slash_indexes",
            [
                vs_config(
                    rng.randint(1, 8),
                    (q := rng.choice((8, 16, 32, 64))),
                    q * rng.choice((1, 2)),
                    (bm := rng.choice((4, 8, 16))),
                    bm,
                    causal=rng.random() < 0.8,
                )
                for _ in range(4)
            ],
            timed=vs_timed,
        )
    ),
    prompt_notes=(
        "q_seqlens, kv_seqlens int32 [B]; vertical_indexes int32 [B, H, NNZ_V] ascending; slash_indexes int32 "
        "[B, H, NNZ_S] descending. Returns zero-initialised int32 tensors block_count [B, H, R], block_offset "
        "[B, H, R, NNZ_S], column_count [B, H, R], column_index [B, H, R, NNZ_V], R = ceil(context_size / "
        "block_size_M). For every row block m with m*block_size_M < q_seqlen, run vLLM's per-row merge of the "
        "vertical list (kept columns left of the current slash range go to column_index) and the slash list "
        "(each slash s becomes the diagonal range ending at max(kv-q+end_m-s, block_size_M) (causal) or "
        "max(kv+end_m-s, block_size_M); overlapping ranges merge; each finished range [a, b) is saved as block "
        "starts a, a+block_size_N, ... < min(b, kv_seqlen)). Port of vLLM's vertical_slash_index.cu."
    ),
    judgement_notes="All four outputs exact (the original's torch.equal).",
    departures=(
        "The original feeds unsorted random lists with repeats (H = NNZ = q_len), which the algorithm does not "
        "support: ranges can overlap and rows can write more block offsets than their slice holds, spilling "
        "into the next row's slots in an order that depends on thread scheduling. We draw distinct sorted "
        "lists (vertical ascending, slash descending, as MInference produces them), at most 8 heads, and "
        "redraw any input where a row would overflow its slice; a few cases use causal=False."
    ),
)


OPERATORS: list[OperatorSpec] = [CONVERT_VERTICAL_SLASH_INDEXES]
