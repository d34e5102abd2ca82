# aten::reshape in Triton.
# Always produces a fresh, contiguous tensor: the input is read in row-major logical
# order through its own strides (so transposed / sliced inputs are fine) and written flat.
from typing import List, Tuple

import torch
import triton
import triton.language as tl

device = "cuda" if torch.cuda.is_available() else "cpu"

BLOCK: int = 2048


@triton.jit
def reshape_copy_kernel(
    x_ptr,
    y_ptr,
    n_elements,
    size1, size2, size3, size4,
    stride0, stride1, stride2, stride3, stride4,
    BLOCK_SIZE: tl.constexpr,
):
    pid = tl.program_id(axis=0)
    offsets = pid.to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    # unravel the flat (logical) index over the input's shape
    i4 = offsets % size4
    t = offsets // size4
    i3 = t % size3
    t = t // size3
    i2 = t % size2
    t = t // size2
    i1 = t % size1
    i0 = t // size1
    src = i0 * stride0 + i1 * stride1 + i2 * stride2 + i3 * stride3 + i4 * stride4
    x = tl.load(x_ptr + src, mask=mask)
    tl.store(y_ptr + offsets, x, mask=mask)


def _infer_shape(shape: List[int], numel: int) -> List[int]:
    shape = [int(s) for s in shape]
    neg = [i for i, s in enumerate(shape) if s == -1]
    if len(neg) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for s in shape:
        if s != -1:
            if s < 0:
                raise RuntimeError(f"invalid shape dimension {s}")
            known *= s
    if neg:
        if known == 0 or numel % known != 0:
            raise RuntimeError(f"shape '{shape}' is invalid for input of size {numel}")
        shape[neg[0]] = numel // known
    elif known != numel:
        raise RuntimeError(f"shape '{shape}' is invalid for input of size {numel}")
    return shape


def _compact(sizes: List[int], strides: List[int]) -> Tuple[List[int], List[int]]:
    new_sizes: List[int] = []
    new_strides: List[int] = []
    for sz, st in zip(sizes, strides):
        if sz == 1:
            continue
        if new_sizes and new_strides[-1] == sz * st:
            new_sizes[-1] *= sz
            new_strides[-1] = st
        else:
            new_sizes.append(sz)
            new_strides.append(st)
    pad = 5 - len(new_sizes)
    return [1] * pad + new_sizes, [0] * pad + new_strides


def reshape(self: torch.Tensor, shape: List[int]) -> torch.Tensor:
    n: int = self.numel()
    out_shape = _infer_shape(list(shape), n)
    out = torch.empty(out_shape, dtype=self.dtype, device=self.device)

    _copy_flat(self, out.view(-1))
    return out


def _copy_flat(src: torch.Tensor, dst_flat: torch.Tensor) -> None:
    n: int = src.numel()
    sizes, strides = _compact(list(src.shape), list(src.stride()))
    if len(sizes) > 5:
        # too irregular for one launch: peel the outermost dim and recurse
        # (src[i] is a view, dst slices are contiguous chunks of the flat output)
        inner = n // src.shape[0] if src.shape[0] else 0
        for i in range(src.shape[0]):
            _copy_flat(src[i], dst_flat[i * inner:(i + 1) * inner])
        return
    grid = (max(triton.cdiv(n, BLOCK), 1),)
    reshape_copy_kernel[grid](
        src, dst_flat, n,
        sizes[1], sizes[2], sizes[3], sizes[4],
        strides[0], strides[1], strides[2], strides[3], strides[4],
        BLOCK_SIZE=BLOCK,
    )


if __name__ == "__main__":
    a = torch.randn(20, 320, 15, device=device).transpose(0, 2)
    b = reshape(a, [6400, 15])
    print(torch.equal(b, a.reshape(6400, 15)))
