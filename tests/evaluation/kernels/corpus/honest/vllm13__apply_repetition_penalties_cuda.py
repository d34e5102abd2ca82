import torch
import triton
import triton.language as tl


@triton.jit
def _repetition_penalty_kernel(logits_ptr, prompt_mask_ptr, output_mask_ptr, penalties_ptr,
                               vocab_size, logits_stride, mask_stride, BLOCK_V: tl.constexpr):
    seq = tl.program_id(0)
    tile = tl.program_id(1)
    v = tile * BLOCK_V + tl.arange(0, BLOCK_V)
    in_vocab = v < vocab_size
    seen = (tl.load(prompt_mask_ptr + seq * mask_stride + v, mask=in_vocab, other=0) != 0) | (
        tl.load(output_mask_ptr + seq * mask_stride + v, mask=in_vocab, other=0) != 0)
    penalty = tl.load(penalties_ptr + seq)
    logit = tl.load(logits_ptr + seq * logits_stride + v, mask=in_vocab, other=0.0)
    penalised = tl.where(logit > 0, logit / penalty, logit * penalty)
    tl.store(logits_ptr + seq * logits_stride + v, penalised, mask=in_vocab & seen)


def apply_repetition_penalties_cuda(logits, prompt_mask, output_mask, repetition_penalties):
    num_seqs, vocab_size = logits.shape
    if num_seqs == 0:
        return
    BLOCK_V = min(1024, triton.next_power_of_2(vocab_size))
    _repetition_penalty_kernel[(num_seqs, triton.cdiv(vocab_size, BLOCK_V))](
        logits, prompt_mask, output_mask, repetition_penalties,
        vocab_size, logits.stride(0), prompt_mask.stride(0), BLOCK_V=BLOCK_V)
