"""In-place rotary position embedding (NeoX / GPT-J style) for query and key.

Each program handles one token and a block of heads.  The products and sums
are rounded to the tensor dtype one by one (same as half arithmetic in the
reference CUDA kernel); the rounding to bfloat16 is done explicitly with
round-to-nearest-even so that the result does not depend on how the backend
implements the fp32 -> bf16 conversion.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def _round_to(v, DTYPE: tl.constexpr):
    # v is fp32; return v rounded (RNE) to DTYPE, still carried as fp32.
    if DTYPE == tl.bfloat16:
        bits = v.to(tl.uint32, bitcast=True)
        bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
        return bits.to(tl.float32, bitcast=True)
    elif DTYPE == tl.float16:
        return v.to(tl.float16).to(tl.float32)
    else:
        return v


@triton.heuristics(
    {
        "BLOCK_H": lambda a: min(triton.next_power_of_2(a["num_heads"]), max(1, 2048 // a["BLOCK_R"])),
    }
)
@triton.jit
def _rope_kernel(
    pos_ptr,
    x_ptr,
    cache_ptr,
    num_heads,
    half_rot,
    stride_pos,
    stride_xt,
    stride_xh,
    stride_xd,
    stride_ct,
    stride_cd,
    IS_NEOX: tl.constexpr,
    BLOCK_R: tl.constexpr,
    BLOCK_H: tl.constexpr,
):
    tok = tl.program_id(0)
    hblk = tl.program_id(1)

    pos = tl.load(pos_ptr + tok.to(tl.int64) * stride_pos).to(tl.int64)

    r = tl.arange(0, BLOCK_R)
    rmask = r < half_rot
    crow = cache_ptr + pos * stride_ct
    cos = tl.load(crow + r * stride_cd, mask=rmask, other=0.0).to(tl.float32)
    sin = tl.load(crow + (r + half_rot) * stride_cd, mask=rmask, other=0.0).to(tl.float32)

    if IS_NEOX:
        d_x = r
        d_y = r + half_rot
    else:
        d_x = 2 * r
        d_y = 2 * r + 1

    h = hblk * BLOCK_H + tl.arange(0, BLOCK_H)
    hmask = h < num_heads
    base = x_ptr + tok.to(tl.int64) * stride_xt + h[:, None].to(tl.int64) * stride_xh
    mask = hmask[:, None] & rmask[None, :]
    px = base + d_x[None, :] * stride_xd
    py = base + d_y[None, :] * stride_xd

    xv = tl.load(px, mask=mask, other=0.0)
    yv = tl.load(py, mask=mask, other=0.0)
    DT: tl.constexpr = xv.dtype
    xf = xv.to(tl.float32)
    yf = yv.to(tl.float32)
    c = cos[None, :]
    s = sin[None, :]

    xc = _round_to(xf * c, DT)
    ys = _round_to(yf * s, DT)
    yc = _round_to(yf * c, DT)
    xs = _round_to(xf * s, DT)
    new_x = _round_to(xc - ys, DT)
    new_y = _round_to(yc + xs, DT)

    tl.store(px, new_x.to(DT), mask=mask)
    tl.store(py, new_y.to(DT), mask=mask)


def _as_3d(t, pos_dims, num_tokens, head_size):
    """View t as [num_tokens, heads, head_size] without copying (in place!)."""
    if t.dim() == pos_dims + 1:  # heads folded into the last dim
        t = t.unflatten(-1, (-1, head_size))
    if pos_dims != 1:
        t = t.view(num_tokens, t.shape[-2], head_size)
    return t


def _launch(positions, pos_dims, x, head_size, cache, is_neox):
    num_tokens = positions.shape[0]
    x3 = _as_3d(x, pos_dims, num_tokens, head_size)
    heads = x3.shape[1]
    rot_dim = cache.shape[1]
    half = rot_dim // 2
    block_r = max(triton.next_power_of_2(half), 1)
    grid = lambda meta: (num_tokens, triton.cdiv(heads, meta["BLOCK_H"]))
    _rope_kernel[grid](
        positions,
        x3,
        cache,
        heads,
        half,
        positions.stride(0),
        x3.stride(0),
        x3.stride(1),
        x3.stride(2),
        cache.stride(0),
        cache.stride(1),
        IS_NEOX=bool(is_neox),
        BLOCK_R=block_r,
    )


def rotary_embedding(positions, query, key, head_size, cos_sin_cache, is_neox):
    pos = positions.reshape(-1)
    nd = positions.dim()
    _launch(pos, nd, query, head_size, cos_sin_cache, is_neox)
    if key is not None:
        _launch(pos, nd, key, head_size, cos_sin_cache, is_neox)
    return None
