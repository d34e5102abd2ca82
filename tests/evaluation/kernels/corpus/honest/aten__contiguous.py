import torch
import triton
import triton.language as tl


@triton.jit
def _gather_4d(src, dst, total, d1, d2, d3, s0, s1, s2, s3, o0, o1, o2, o3, BLOCK: tl.constexpr):
    n = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    keep = n < total
    i3 = n % d3
    i2 = (n // d3) % d2
    i1 = (n // (d3 * d2)) % d1
    i0 = n // (d3 * d2 * d1)
    v = tl.load(src + i0 * s0 + i1 * s1 + i2 * s2 + i3 * s3, mask=keep)
    tl.store(dst + i0 * o0 + i1 * o1 + i2 * o2 + i3 * o3, v, mask=keep)


def _collapse(sizes, strides, limit=4):
    # merge adjacent dims that are laid out back to back in both source and destination
    sizes, strides = list(sizes), [list(s) for s in strides]
    d = len(sizes) - 1
    while len(sizes) > limit and d > 0:
        if all(s[d - 1] == s[d] * sizes[d] for s in strides):
            sizes[d - 1] *= sizes[d]
            for s in strides:
                s[d - 1] = s[d]
                del s[d]
            del sizes[d]
        d -= 1
    if len(sizes) > limit:
        return None
    pad = limit - len(sizes)
    return [1] * pad + sizes, [[0] * pad + s for s in strides]


def contiguous(self, *, memory_format=torch.contiguous_format):
    if self.is_contiguous(memory_format=memory_format):
        return self
    out = torch.empty(self.shape, dtype=self.dtype, device=self.device, memory_format=memory_format)
    total = self.numel()
    if total == 0:
        return out
    geometry = _collapse(self.shape, [self.stride(), out.stride()])
    if geometry is None:
        raise NotImplementedError("contiguous: more than four non-mergeable dims")
    sizes, (src_strides, dst_strides) = geometry
    _gather_4d[(triton.cdiv(total, 256),)](self, out, total, *sizes[1:], *src_strides, *dst_strides, BLOCK=256)
    return out
