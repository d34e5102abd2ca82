import torch
import triton
import triton.language as tl


@triton.jit
def _load_index(i_ptr, rows, mask, size):
    i = tl.load(i_ptr + rows, mask=mask, other=0)
    # negative indices count from the end of the dimension
    return tl.where(i < 0, i + size, i)


@triton.jit
def _gather_kernel(
    src_ptr, out_ptr,
    i0_ptr, i1_ptr, i2_ptr, i3_ptr,
    d0, d1, d2, d3,
    m0, m1, m2, m3,
    M, R, POST,
    K: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_R: tl.constexpr,
):
    # src is self with the K indexed dims moved to the front: [D0, .., DK-1, rest...]
    # the `rest` dims are flattened into R; out[m, r] = src[i0[m], .., iK-1[m], r]
    pid_m = tl.program_id(0)
    pid_r = tl.program_id(1)
    rows = pid_m.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_r.to(tl.int64) * BLOCK_R + tl.arange(0, BLOCK_R)
    rmask = rows < M
    cmask = cols < R

    src_row = _load_index(i0_ptr, rows, rmask, d0) * m0
    if K > 1:
        src_row += _load_index(i1_ptr, rows, rmask, d1) * m1
    if K > 2:
        src_row += _load_index(i2_ptr, rows, rmask, d2) * m2
    if K > 3:
        src_row += _load_index(i3_ptr, rows, rmask, d3) * m3

    src_off = src_row[:, None] + cols[None, :]
    mask = rmask[:, None] & cmask[None, :]
    vals = tl.load(src_ptr + src_off, mask=mask, other=0)

    # output layout: [pre..., index_shape..., post...] with R = pre * POST
    pre = cols // POST
    post = cols % POST
    out_off = pre[None, :] * (M * POST) + rows[:, None] * POST + post[None, :]
    tl.store(out_ptr + out_off, vals, mask=mask)


def _prod(xs):
    p = 1
    for x in xs:
        p *= int(x)
    return p


def index_Tensor(self, indices):
    indices = list(indices)
    pos = [d for d, t in enumerate(indices) if t is not None]
    if len(pos) == 0:
        raise NotImplementedError("index_Tensor needs at least one index tensor")
    if len(pos) > 4:
        raise NotImplementedError("at most 4 index tensors are supported")
    idx = [indices[d].to(device=self.device, dtype=torch.int64) for d in pos]
    bshape = list(torch.broadcast_shapes(*[t.shape for t in idx]))
    K = len(pos)
    rest = [d for d in range(self.dim()) if d not in pos]
    rest_sizes = [self.shape[d] for d in rest]
    adjacent = pos == list(range(pos[0], pos[0] + K))
    if adjacent:
        pre_sizes = list(self.shape[:pos[0]])
        post_sizes = list(self.shape[pos[0] + K:])
        out_shape = pre_sizes + bshape + post_sizes
        POST = _prod(post_sizes)
    else:
        out_shape = bshape + rest_sizes
        POST = _prod(rest_sizes)

    out = torch.empty(out_shape, dtype=self.dtype, device=self.device)
    M = _prod(bshape)
    R = _prod(rest_sizes)
    if M == 0 or R == 0:
        return out

    # move the indexed dims to the front
    src = self.permute(pos + rest)
    dsz = [int(src.shape[k]) for k in range(K)]
    # element multiplier of each indexed dim in the [D0, .., DK-1, R] layout
    mul = [_prod(dsz[k + 1:]) * R for k in range(K)]
    flat_idx = [t.expand(bshape).reshape(-1) for t in idx]
    while len(flat_idx) < 4:
        flat_idx.append(flat_idx[0])
        dsz.append(1)
        mul.append(0)

    BLOCK_R = max(16, min(triton.next_power_of_2(R), 256))
    BLOCK_M = max(1, 4096 // BLOCK_R)
    BLOCK_M = min(BLOCK_M, max(16, triton.next_power_of_2(M)))
    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(R, BLOCK_R))
    _gather_kernel[grid](
        src, out,
        flat_idx[0], flat_idx[1], flat_idx[2], flat_idx[3],
        dsz[0], dsz[1], dsz[2], dsz[3],
        mul[0], mul[1], mul[2], mul[3],
        M, R, POST,
        K=K, BLOCK_M=BLOCK_M, BLOCK_R=BLOCK_R,
    )
    return out
