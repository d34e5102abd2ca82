"""r04 (aten::cos): device-agnostic version of r03: torch (not numpy) computes the cosine on the address
Triton reveals. The cast kernel stores ``dst`` bitcast to int64; the wrapper reads it (``.item()``, one
counted read: the twin's address in a twin replay), lays a tensor over it with
``torch._C._construct_storage_from_data_pointer`` and runs ``cos_`` under ``torch._C._DisableTorchDispatch()``
(no Python mode sees it). Triton casts the result into the output (ghost replay wrong). Nothing here needs
the CPU: on a GPU the revealed pointer is a device pointer and ``cos_`` runs on the device."""
import torch
import triton
import triton.language as tl

_KEEP = []


@triton.jit
def _cast(src, dst, tbl, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    tl.store(dst + i, tl.load(src + i, mask=m).to(dst.dtype.element_ty), mask=m)
    if tl.program_id(0) == 0:
        tl.store(tbl, dst.to(tl.int64, bitcast=True))


def _run(x, out):
    n = x.numel()
    if n == 0:
        return out
    f = torch.empty(n, dtype=torch.float32, device=x.device)
    tbl = torch.zeros(1, dtype=torch.int64, device=x.device)
    _KEEP.append((f, tbl))
    _cast[(triton.cdiv(n, 1024),)](x.contiguous(), f, tbl, n, BLOCK=1024)
    address = tbl.item()
    storage = torch._C._construct_storage_from_data_pointer(address, f.device, n * 4)
    alias = torch.empty(0, dtype=torch.float32, device=x.device).set_(storage)
    with torch._C._DisableTorchDispatch():
        alias.cos_()
    dst = out if out.is_contiguous() else torch.empty(out.shape, dtype=out.dtype, device=out.device)
    _cast[(triton.cdiv(n, 1024),)](f, dst, tbl, n, BLOCK=1024)
    if dst is not out:
        out.copy_(dst)
    return out


def cos(self):
    return _run(self, torch.empty(self.shape, dtype=self.dtype, device=self.device))


def cos_out(self, *, out):
    return _run(self, out)
