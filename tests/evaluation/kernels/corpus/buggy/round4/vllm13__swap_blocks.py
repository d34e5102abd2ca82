import torch
import triton
import triton.language as tl


@triton.jit
def _swap_blocks_kernel(
    src_ptr, dst_ptr, map_ptr, num_pairs,
    block_elems, src_block_stride, dst_block_stride,
    BLOCK: tl.constexpr,
):
    # one program per (src, dst) pair of block_mapping
    pid = tl.program_id(0)
    active = pid < num_pairs   # the grid has at least one program even for an empty mapping
    src_blk = tl.load(map_ptr + pid * 2, mask=active, other=0).to(tl.int64)
    dst_blk = tl.load(map_ptr + pid * 2 + 1, mask=active, other=0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = (offs < block_elems) & active
    v = tl.load(src_ptr + src_blk * src_block_stride + offs, mask=mask)
    tl.store(dst_ptr + dst_blk * dst_block_stride + offs, v, mask=mask)


_MAX_TILE = 2048  # keep the per-program tile small enough to stay in registers


def swap_blocks(src, dst, block_mapping):
    mapping = block_mapping.to(device=src.device, dtype=torch.int64).reshape(-1, 2).contiguous()
    num_pairs = mapping.shape[0]
    # raw copy of src.stride(0) elements per block
    block_elems = src.stride(0)
    BLOCK = min(triton.next_power_of_2(block_elems), _MAX_TILE)
    _swap_blocks_kernel[(max(num_pairs, 1),)](
        src, dst, mapping, num_pairs,
        block_elems, src.stride(0), dst.stride(0),
        BLOCK=BLOCK,
    )
    return None
