import torch
import triton
import triton.language as tl


@triton.jit
def _copy_blocks_mla_kernel(
    cache_ptr, mapping_ptr,
    num_pairs,
    stride_map_p, stride_map_c,
    stride_blk, stride_pos, stride_w,
    WIDTH: tl.constexpr,
    BLOCK_W: tl.constexpr,
):
    # one program per (pair, position inside the block)
    pair = tl.program_id(0)
    pos = tl.program_id(1)
    if pair < num_pairs:
        src_blk = tl.load(mapping_ptr + pair * stride_map_p).to(tl.int64)
        dst_blk = tl.load(mapping_ptr + pair * stride_map_p + stride_map_c).to(tl.int64)
        src_row = cache_ptr + src_blk * stride_blk + pos * stride_pos
        dst_row = cache_ptr + dst_blk * stride_blk + pos * stride_pos
        for w0 in range(0, WIDTH, BLOCK_W):
            offs = w0 + tl.arange(0, BLOCK_W)
            mask = offs < WIDTH
            x = tl.load(src_row + offs * stride_w, mask=mask)
            tl.store(dst_row + offs * stride_w, x, mask=mask)


def copy_blocks_mla(kv_caches, block_mapping):
    num_pairs = block_mapping.shape[0]
    for cache in kv_caches:
        block_size = cache.shape[1]
        width = cache.shape[2]
        c = cache
        # fp8 caches: move raw bytes (pure copy, avoids fp8 load paths)
        if c.dtype in (torch.float8_e4m3fn, torch.float8_e5m2):
            c = c.view(torch.uint8)
        BLOCK_W = min(triton.next_power_of_2(max(width, 1)), 1024)
        grid = (max(num_pairs, 1), max(block_size, 1))
        _copy_blocks_mla_kernel[grid](
            c, block_mapping,
            num_pairs,
            block_mapping.stride(0), block_mapping.stride(1),
            c.stride(0), c.stride(1), c.stride(2),
            WIDTH=width, BLOCK_W=BLOCK_W,
        )
    return None
