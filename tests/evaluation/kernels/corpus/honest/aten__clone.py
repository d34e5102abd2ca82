"""aten::clone honouring memory_format.

* None / torch.preserve_format: keep self's strides when self is dense (non-overlapping, no gaps),
  otherwise a contiguous result (what torch does for views with holes or stride-0 dims);
* torch.contiguous_format: row-major;
* torch.channels_last / torch.channels_last_3d: NHWC / NDHWC strides for 4-d / 5-d inputs.

Sizes and both stride sets travel to the kernel as one small int64 tensor, so one compiled kernel
serves every rank up to MAX_RANK.
"""
import torch
import triton
import triton.language as tl

MAX_RANK = 8


@triton.jit
def strided_copy_kernel(src_ptr, dst_ptr, meta_ptr, numel, RANK: tl.constexpr, BLOCK: tl.constexpr):
    lin = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    valid = lin < numel
    src_off = tl.zeros([BLOCK], dtype=tl.int64)
    dst_off = tl.zeros([BLOCK], dtype=tl.int64)
    rest = lin
    # meta = [sizes..., src strides..., dst strides...], innermost dim last
    for k in tl.static_range(RANK):
        d = RANK - 1 - k
        size = tl.load(meta_ptr + d)
        idx = rest % size
        rest = rest // size
        src_off += idx * tl.load(meta_ptr + RANK + d)
        dst_off += idx * tl.load(meta_ptr + 2 * RANK + d)
    tl.store(dst_ptr + dst_off, tl.load(src_ptr + src_off, mask=valid), mask=valid)


def _is_dense(t: torch.Tensor) -> bool:
    expected = 1
    for size, stride in sorted(zip(t.shape, t.stride()), key=lambda p: p[1]):
        if size == 1:
            continue
        if stride != expected:
            return False
        expected *= size
    return True


def _allocate(self: torch.Tensor, memory_format) -> torch.Tensor:
    if memory_format is None or memory_format == torch.preserve_format:
        if _is_dense(self):
            return torch.empty_strided(self.shape, self.stride(), dtype=self.dtype, device=self.device)
        return torch.empty(self.shape, dtype=self.dtype, device=self.device)
    if memory_format in (torch.channels_last, torch.channels_last_3d, torch.contiguous_format):
        return torch.empty(self.shape, dtype=self.dtype, device=self.device, memory_format=memory_format)
    raise ValueError(f"unsupported memory_format {memory_format}")


def clone(self: torch.Tensor, *, memory_format=None) -> torch.Tensor:
    out = _allocate(self, memory_format)
    n = self.numel()
    if n == 0:
        return out
    rank = max(1, self.dim())
    if rank > MAX_RANK:
        raise NotImplementedError(f"clone supports up to {MAX_RANK} dims")
    sizes = list(self.shape) or [1]
    src_strides = list(self.stride()) or [0]
    dst_strides = list(out.stride()) or [0]
    meta = torch.tensor(sizes + src_strides + dst_strides, dtype=torch.int64, device=self.device)
    BLOCK = 512
    strided_copy_kernel[(triton.cdiv(n, BLOCK),)](self, out, meta, n, RANK=rank, BLOCK=BLOCK)
    return out
