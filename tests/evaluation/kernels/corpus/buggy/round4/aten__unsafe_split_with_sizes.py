import torch
import triton
import triton.language as tl


@triton.jit
def _copy_chunk_kernel(
    src_ptr, dst_ptr, n_out, inner, src_dim, chunk_len, start,
    BLOCK: tl.constexpr,
):
    # src viewed as [outer, src_dim, inner] (contiguous);
    # dst is the contiguous chunk [outer, chunk_len, inner] = src[:, start:start+chunk_len, :]
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_out
    row = offs // inner          # row index over (outer, chunk) pairs
    c = offs % inner
    a = row // src_dim           # outer index
    b = row % src_dim            # position inside the chunk
    src_off = a * src_dim * inner + (start + b) * inner + c
    v = tl.load(src_ptr + src_off, mask=mask, other=0)
    tl.store(dst_ptr + offs, v, mask=mask)


def unsafe_split_with_sizes(self, split_sizes, dim=0):
    split_sizes = [int(s) for s in split_sizes]
    ndim = self.dim()
    if dim < 0:
        dim += ndim
    src = self.contiguous()
    shape = list(src.shape)
    src_dim = shape[dim]
    outer = 1
    for s in shape[:dim]:
        outer *= s
    inner = 1
    for s in shape[dim + 1:]:
        inner *= s

    outs = []
    start = 0
    BLOCK = 1024
    for length in split_sizes:
        out_shape = shape[:dim] + [length] + shape[dim + 1:]
        out = torch.empty(out_shape, dtype=self.dtype, device=self.device)
        n_out = out.numel()
        grid = (max(1, triton.cdiv(n_out, BLOCK)),)
        _copy_chunk_kernel[grid](
            src, out, n_out, inner, src_dim, length, start,
            BLOCK=BLOCK,
        )
        outs.append(out)
        start += length
    return outs
