import torch
import triton
import triton.language as tl


# a single config: on the CPU interpreter the autotuner cannot benchmark more
@triton.autotune(configs=[triton.Config({"BLOCK": 4096})], key=["n"])
@triton.jit
def _fill_zero_kernel(out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    zero = tl.zeros([BLOCK], dtype=out_ptr.dtype.element_ty)
    tl.store(out_ptr + offs, zero, mask=mask)


_BYTE_VIEW = (torch.bool, torch.complex32, torch.complex64, torch.complex128)


def zeros_like(self, *, dtype=None, layout=None, device=None, pin_memory=None,
               memory_format=None):
    dtype = self.dtype if dtype is None else dtype
    device = self.device if device is None else device
    mf = torch.preserve_format if memory_format is None else memory_format
    # empty_like always yields a non-overlapping, dense tensor: its `numel`
    # elements occupy one contiguous span starting at data_ptr.
    out = torch.empty_like(self, dtype=dtype, device=device, memory_format=mf)
    n = out.numel()
    flat = out.as_strided((n,), (1,))
    if dtype in _BYTE_VIEW or dtype not in (torch.float16, torch.bfloat16, torch.float32, torch.float64,
                       torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64):
        # any other dtype (float8, uint16/32/64, ...): fill its bytes
        flat = flat.view(torch.uint8)
    m = flat.numel()
    grid = lambda meta: (max(1, triton.cdiv(m, meta["BLOCK"])),)
    _fill_zero_kernel[grid](flat, m)
    return out
