import torch
import triton
import triton.language as tl

# Per-device int32 scratch: [0, E) expert counts, [E, 2E) padded segment offsets.
# Kept between calls (grown when num_experts grows), zeroed by _fill_kernel on
# every call before the counting kernel accumulates into it.
_scratch = {}


def _get_scratch(num_experts, device):
    buf = _scratch.get(device)
    if buf is None or buf.numel() < 2 * num_experts:
        buf = torch.empty(max(2 * num_experts, 512), dtype=torch.int32, device=device)
        _scratch[device] = buf
    return buf


@triton.jit
def _fill_kernel(sorted_ids, n_sorted, fill_value, eids, n_eids, scratch, n_scratch,
                 BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(sorted_ids + offs, tl.full([BLOCK], 0, tl.int32) + fill_value,
             mask=offs < n_sorted)
    tl.store(eids + offs, tl.zeros([BLOCK], tl.int32), mask=offs < n_eids)
    tl.store(scratch + offs, tl.zeros([BLOCK], tl.int32), mask=offs < n_scratch)


@triton.jit
def _count_kernel(topk_ids, s_t, s_k, topk, numel, counts, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < numel
    t = i // topk
    k = i % topk
    e = tl.load(topk_ids + t.to(tl.int64) * s_t + k * s_k, mask=m, other=0)
    tl.atomic_add(counts + e, tl.full([BLOCK], 1, tl.int32), mask=m)


@triton.jit
def _scan_kernel(counts, offsets, ntpp, E, block_size, BLOCK_E: tl.constexpr):
    e = tl.arange(0, BLOCK_E)
    m = e < E
    c = tl.load(counts + e, mask=m, other=0)
    p = (c + block_size - 1) // block_size * block_size
    incl = tl.cumsum(p, axis=0)
    tl.store(offsets + e, incl - p, mask=m)
    tl.store(ntpp, tl.sum(p, axis=0))


@triton.jit
def _expert_ids_kernel(counts, offsets, eids, nblocks, E, block_size,
                       BLOCK_B: tl.constexpr, BLOCK_E: tl.constexpr):
    b = tl.program_id(0) * BLOCK_B + tl.arange(0, BLOCK_B)
    bm = b < nblocks
    e = tl.arange(0, BLOCK_E)
    em = e < E
    c = tl.load(counts + e, mask=em, other=0)
    o = tl.load(offsets + e, mask=em, other=0)
    end = o + (c + block_size - 1) // block_size * block_size
    start_tok = b * block_size
    # the owning expert is the number of experts whose segment ends at or before
    # the block start (segments are laid out in expert order)
    before = (end[None, :] <= start_tok[:, None]) & em[None, :]
    owner = tl.sum(before.to(tl.int32), axis=1)
    tl.store(eids + b, owner, mask=bm)


@triton.jit
def _scatter_kernel(topk_ids, s_t, s_k, topk, numel, offsets, sorted_ids, n_sorted,
                    BLOCK: tl.constexpr):
    ex = tl.program_id(0)
    base = tl.load(offsets + ex)
    run = base * 0
    for start in range(0, numel, BLOCK):
        i = start + tl.arange(0, BLOCK)
        m = i < numel
        t = i // topk
        k = i % topk
        e = tl.load(topk_ids + t.to(tl.int64) * s_t + k * s_k, mask=m, other=-1)
        hit = (e == ex) & m
        h = hit.to(tl.int32)
        pos = base + run + tl.cumsum(h, axis=0) - 1
        tl.store(sorted_ids + pos, i.to(tl.int32), mask=hit & (pos < n_sorted))
        run += tl.sum(h, axis=0)


def moe_align_block_size(topk_ids, num_experts, block_size, sorted_token_ids,
                         experts_ids, num_tokens_post_pad, expert_map=None):
    dev = topk_ids.device
    E = int(num_experts)
    bs = int(block_size)
    tk = topk_ids if topk_ids.dim() == 2 else topk_ids.view(-1, 1)
    T, K = tk.shape
    numel = T * K
    s_t, s_k = tk.stride()

    scratch = _get_scratch(E, dev)
    counts = scratch[:E]
    offsets = scratch[E:2 * E]

    n_sorted = sorted_token_ids.numel()
    n_eids = experts_ids.numel()
    FB = 1024
    nfill = max(n_sorted, n_eids, 2 * E, 1)
    _fill_kernel[(triton.cdiv(nfill, FB),)](sorted_token_ids, n_sorted, numel,
                                            experts_ids, n_eids, scratch, 2 * E,
                                            BLOCK=FB)
    CB = 1024
    if numel > 0:
        _count_kernel[(triton.cdiv(numel, CB),)](tk, s_t, s_k, K, numel, counts, BLOCK=CB)
    BLOCK_E = triton.next_power_of_2(max(E, 1))
    _scan_kernel[(1,)](counts, offsets, num_tokens_post_pad, E, bs, BLOCK_E=BLOCK_E)

    # one-value readback to size the expert-id grid to the blocks in use
    total = int(num_tokens_post_pad[0].item())
    nblocks = min(total // bs, n_eids)
    if nblocks > 0:
        BB = max(1, min(256, 4096 // BLOCK_E))
        _expert_ids_kernel[(triton.cdiv(nblocks, BB),)](counts, offsets, experts_ids,
                                                        nblocks, E, bs,
                                                        BLOCK_B=BB, BLOCK_E=BLOCK_E)
    if numel > 0 and E > 0:
        _scatter_kernel[(E,)](tk, s_t, s_k, K, numel, offsets, sorted_token_ids,
                              n_sorted, BLOCK=2048)
    return None
