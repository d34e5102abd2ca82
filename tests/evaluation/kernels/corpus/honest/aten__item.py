import torch
import triton
import triton.language as tl


@triton.jit
def _stage_scalar(src_ptr, dst_ptr):
    # copy the single element into a staging buffer of the widest type of its kind
    tl.store(dst_ptr, tl.load(src_ptr).to(dst_ptr.dtype.element_ty))


def _staging_dtype(dtype: torch.dtype) -> torch.dtype:
    if dtype == torch.bool:
        return torch.bool
    if dtype.is_floating_point:
        return torch.float64
    return torch.int64


def item(self: torch.Tensor):
    if self.numel() != 1:
        raise RuntimeError(f"a Tensor with {self.numel()} elements cannot be converted to Scalar")
    staged = torch.empty((1,), dtype=_staging_dtype(self.dtype), device=self.device)
    _stage_scalar[(1,)](self.reshape(1), staged)
    # the single host read-back: a Python float / int / bool
    return staged.item()
