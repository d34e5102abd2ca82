# aten::expand -- broadcast view materialised by a rank-generic gather (stride 0 on broadcast dims).
import os
from typing import List, Sequence

import torch
import triton
import triton.language as tl


def broadcast_target_shape(in_shape: Sequence[int], size: Sequence[int]) -> List[int]:
    size = [int(s) for s in size]
    ndim_new = len(size)
    ndim_old = len(in_shape)
    if ndim_new < ndim_old:
        raise RuntimeError(
            f"expand: the number of sizes provided ({ndim_new}) must be greater or equal "
            f"to the number of dimensions in the tensor ({ndim_old})"
        )
    lead = ndim_new - ndim_old
    out = []
    for i, s in enumerate(size):
        if i < lead:
            if s < 0:
                raise RuntimeError("expand: -1 not allowed in leading, non-existing dimension")
            out.append(s)
        else:
            cur = in_shape[i - lead]
            if s == -1:
                out.append(cur)
            elif cur == s or cur == 1:
                out.append(s)
            else:
                raise RuntimeError(
                    f"expand: size {s} does not match the existing size {cur} at non-singleton dimension {i}"
                )
    return out


def broadcast_strides(in_shape, in_strides, out_shape) -> List[int]:
    lead = len(out_shape) - len(in_shape)
    strides = [0] * lead
    for i, (s, st) in enumerate(zip(in_shape, in_strides)):
        strides.append(0 if (s == 1 and out_shape[lead + i] != 1) else st)
    return strides


def fuse_dims(shape, strides):
    fs, ft = [], []
    for s, st in zip(shape, strides):
        if s == 1:
            continue
        if fs and ft[-1] == st * s:
            fs[-1] *= s
            ft[-1] = st
        else:
            fs.append(s)
            ft.append(st)
    return fs or [1], ft or [0]


# The CPU interpreter has no active driver, so the autotuner cannot benchmark
# more than one config there; keep a single config in that mode.
_INTERPRET = os.environ.get("TRITON_INTERPRET", "0") == "1"
_CONFIGS = [
    triton.Config({"BLOCK_SIZE": 1024}, num_warps=4),
    triton.Config({"BLOCK_SIZE": 4096}, num_warps=8),
]
if _INTERPRET:
    _CONFIGS = _CONFIGS[-1:]


@triton.autotune(configs=_CONFIGS, key=["N", "RANK"])
@triton.jit
def expand_copy_kernel(src_ptr, dst_ptr, shape_ptr, stride_ptr, N,
                       RANK: tl.constexpr, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE).to(tl.int64)
    mask = offs < N
    rem = offs
    src_off = tl.zeros([BLOCK_SIZE], dtype=tl.int64)
    # walk the dims from innermost to outermost
    for r in tl.static_range(RANK):
        d = RANK - 1 - r
        sz = tl.load(shape_ptr + d)
        st = tl.load(stride_ptr + d)
        idx = rem % sz
        rem = rem // sz
        src_off += idx * st
    val = tl.load(src_ptr + src_off, mask=mask)
    tl.store(dst_ptr + offs, val, mask=mask)


def expand(self: torch.Tensor, size: List[int], *, implicit: bool = False) -> torch.Tensor:
    out_shape = broadcast_target_shape(list(self.shape), size)
    out = torch.empty(out_shape, dtype=self.dtype, device=self.device)
    N = out.numel()

    bstrides = broadcast_strides(list(self.shape), list(self.stride()), out_shape)
    fshape, fstrides = fuse_dims(out_shape, bstrides)
    shape_t = torch.tensor(fshape, dtype=torch.int64, device=self.device)
    stride_t = torch.tensor(fstrides, dtype=torch.int64, device=self.device)

    grid = lambda meta: (max(triton.cdiv(N, meta["BLOCK_SIZE"]), 1),)
    expand_copy_kernel[grid](self, out, shape_t, stride_t, N, RANK=len(fshape))
    return out
