"""Reference Triton kernel for vllm13::apply_repetition_penalties_cuda (in place on logits)."""

import torch
import triton
import triton.language as tl


@triton.jit
def _penalty_kernel(logits_ptr, prompt_ptr, output_ptr, penalty_ptr, vocab, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    chunk = tl.program_id(1)
    columns = chunk * BLOCK + tl.arange(0, BLOCK)
    mask = columns < vocab
    offsets = row * vocab + columns
    logits = tl.load(logits_ptr + offsets, mask=mask, other=0.0)
    seen = (tl.load(prompt_ptr + offsets, mask=mask, other=0) != 0) | (tl.load(output_ptr + offsets, mask=mask, other=0) != 0)
    penalty = tl.load(penalty_ptr + row)
    penalised = tl.where(logits > 0, tl.math.div_rn(logits, penalty), logits * penalty)
    tl.store(logits_ptr + offsets, tl.where(seen, penalised, logits), mask=mask)


def apply_repetition_penalties_cuda(logits, prompt_mask, output_mask, repetition_penalties):
    rows, vocab = logits.shape
    block = min(1024, triton.next_power_of_2(vocab))
    _penalty_kernel[(rows, triton.cdiv(vocab, block))](logits, prompt_mask, output_mask, repetition_penalties, vocab,
                                                       BLOCK=block)
