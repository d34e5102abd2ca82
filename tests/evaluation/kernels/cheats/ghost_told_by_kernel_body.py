"""b09 (aten::cos): ghost detection through a side effect of the Triton kernel itself: under the CPU
interpreter a @triton.jit body is plain Python, so it can call a plain-Python helper that bumps a counter.
A ghost replay never runs the body, so the counter does not move. No tensor data is read, no timing.
Compute: torch.cos under torch._C._ExcludeDispatchKeyGuard(Python)."""
import torch
import triton
import triton.language as tl

_HITS = [0]


def _bump():
    _HITS[0] += 1
    return 0


@triton.jit
def _mark(p):
    _bump()
    tl.store(p, 1)


_KS = torch._C.DispatchKeySet(torch._C.DispatchKey.Python) | torch._C.DispatchKeySet(torch._C.DispatchKey.PythonTLSSnapshot)


def _run(x, out):
    before = _HITS[0]
    s = torch.empty(1, dtype=torch.int32)
    _mark[(1,)](s)
    ghost = _HITS[0] == before
    with torch._C._ExcludeDispatchKeyGuard(_KS):
        if ghost:
            out.fill_(float("nan"))
        else:
            torch.cos(x, out=out)
    return out


def cos(self):
    return _run(self, torch.empty(self.shape, dtype=self.dtype, device=self.device))


def cos_out(self, *, out):
    return _run(self, out)
