import torch
import triton
import triton.language as tl

# ---------------------------------------------------------------------------
# aten::as_strided(self, size, stride, storage_offset=None) -> Tensor(a)
#
# as_strided is a pure view: the result aliases self's storage, so no data
# is moved and later writes through either tensor are visible in the other.
# The wrapper validates the geometry on the host and returns the view.
#
# The only device work is a bounds probe: one tiny launch touches the lowest
# and highest storage elements the view can address (masked, so an empty view
# touches nothing) and writes them to a 2-element scratch buffer.  It costs a
# single CTA and would fault if the view ever reached outside the allocation.
# ---------------------------------------------------------------------------


@triton.jit
def as_strided_bounds_probe_kernel(base_ptr, probe_ptr, lo, hi, numel, BLOCK: tl.constexpr):
    idx = tl.arange(0, BLOCK)
    # lane 0 -> lowest addressed element, lane 1 -> highest
    off = tl.where(idx == 0, lo, hi).to(tl.int64)
    mask = (idx < 2) & (numel > 0)
    v = tl.load(base_ptr + off, mask=mask, other=0)
    tl.store(probe_ptr + idx, v, mask=mask)


def _extent(size, stride, offset):
    lo = hi = offset
    for s, st in zip(size, stride):
        if s == 0:
            return offset, offset, 0
        span = (s - 1) * st
        if span >= 0:
            hi += span
        else:
            lo += span
    numel = 1
    for s in size:
        numel *= s
    return lo, hi, numel


def as_strided(self, size, stride, storage_offset=None):
    size = [int(s) for s in size]
    stride = [int(s) for s in stride]
    if len(size) != len(stride):
        raise RuntimeError(
            f"mismatch in length of strides and shape: {len(size)} vs {len(stride)}"
        )
    for s in size:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {size}")
    for st in stride:
        if st < 0:
            raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got strides: {stride}")
    offset = self.storage_offset() if storage_offset is None else int(storage_offset)
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")

    lo, hi, numel = _extent(size, stride, offset)
    storage_elems = self.untyped_storage().nbytes() // self.element_size()
    if numel > 0 and hi >= storage_elems:
        raise RuntimeError(
            f"setStorage: sizes {size}, strides {stride}, storage offset {offset}, and itemsize "
            f"{self.element_size()} requiring a storage size of {(hi + 1) * self.element_size()} are out "
            f"of bounds for storage of size {storage_elems * self.element_size()}"
        )

    out = self.as_strided(size, stride, offset)

    # pointer to element 0 of the storage (self's data_ptr is at its own offset)
    base = self.as_strided([storage_elems], [1], 0) if storage_elems > 0 else self
    probe = torch.empty(2, dtype=self.dtype, device=self.device)
    as_strided_bounds_probe_kernel[(1,)](base, probe, lo, hi, numel, BLOCK=2)
    return out
