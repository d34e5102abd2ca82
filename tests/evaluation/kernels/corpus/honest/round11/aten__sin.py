"""aten::sin / aten::sin.out with Triton's launch path cut short.

``JITFunction.__getitem__`` binds arguments, hashes a cache key and looks the kernel up on every call; for
small tensors that host work is most of the call. The kernel is compiled once per (dtype, block) with
``warmup`` and launched through its compiled handle, ``compiled[grid](...)``, which goes straight to the
driver launcher. The handle takes every argument of the signature, constexprs included, positionally.
Where ``warmup`` gives no handle (the CPU interpreter compiles nothing) the usual launch is taken.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def _sin_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr, WIDEN: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    if WIDEN:
        x = x.to(tl.float32)
    tl.store(y_ptr + offsets, tl.sin(x).to(y_ptr.dtype.element_ty), mask=mask)


_HANDLES = {}


def _block_for(n):
    return 1024 if n >= 1024 else max(16, triton.next_power_of_2(n))


def _launch(x, y, n):
    block = _block_for(n)
    widen = x.dtype in (torch.float16, torch.bfloat16)
    grid = (triton.cdiv(n, block), 1, 1)
    key = (x.dtype, y.dtype, block, x.device)
    handle = _HANDLES.get(key)
    if handle is None:
        handle = _sin_kernel.warmup(x, y, n, BLOCK=block, WIDEN=widen, grid=grid)
        if handle is None:  # no compiled handle here: the ordinary launch path
            _sin_kernel[grid](x, y, n, BLOCK=block, WIDEN=widen)
            return
        _HANDLES[key] = handle
    handle[grid](x, y, n, block, widen)


def _sin_into(x, out):
    n = x.numel()
    if n == 0:
        return out
    src = x if x.is_contiguous() else x.contiguous()
    dst = out if out.is_contiguous() else torch.empty(out.shape, dtype=out.dtype, device=out.device)
    _launch(src, dst, n)
    if dst is not out:
        out.copy_(dst)
    return out


def sin(self):
    dtype = self.dtype if self.is_floating_point() else torch.get_default_dtype()
    src = self if self.is_floating_point() else self.to(dtype)
    return _sin_into(src, torch.empty(self.shape, dtype=dtype, device=self.device))


def sin_out(self, *, out):
    if tuple(out.shape) != tuple(self.shape):
        out.resize_(self.shape)
    src = self if self.dtype == out.dtype else self.to(out.dtype)
    return _sin_into(src, out)
