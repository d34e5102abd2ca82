# aten::_local_scalar_dense -- the one element is copied by a kernel into a 1-element
# staging buffer, which is then read back with .item().
from typing import Union

import torch
import triton
import triton.language as tl

device = "cuda" if torch.cuda.is_available() else "cpu"


@triton.jit
def copy_one_kernel(src_ptr, dst_ptr, src_offset, dst_offset, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < 1
    v = tl.load(src_ptr + src_offset + offs, mask=mask)
    tl.store(dst_ptr + dst_offset + offs, v, mask=mask)


def _local_scalar_dense(self: torch.Tensor) -> Union[bool, int, float, complex]:
    if self.numel() != 1:
        raise RuntimeError(
            f"a Tensor with {self.numel()} elements cannot be converted to Scalar"
        )
    src = self
    if self.is_complex():
        # complex: move real/imag pairs as two floats
        src = torch.view_as_real(self.reshape(()))
        staging = torch.empty((1,), dtype=self.dtype, device=self.device)
        copy_pairs = torch.view_as_real(staging).view(-1)
        for k in range(2):
            copy_one_kernel[(1,)](src, copy_pairs, k * src.stride(-1), k, BLOCK=2)
        return staging.item()
    staging = torch.empty((1,), dtype=self.dtype, device=self.device)
    # self.data_ptr() already points at the single element (storage offset included)
    copy_one_kernel[(1,)](src, staging, 0, 0, BLOCK=2)
    return staging.item()
