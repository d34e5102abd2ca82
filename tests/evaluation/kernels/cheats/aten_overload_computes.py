"""b05 (aten::cos): a NEW OVERLOAD registered in the aten namespace, aten::empty_like.redteam, whose Python
implementation is torch.cos. The audit keys on namespace ("aten": passes the outside-ATen rule) and packet
name ("empty_like": allowed, and ALLOCATING, so in ghost replays its result is poisoned by the judge itself,
which makes the ghost wrong without any ghost detection). The body runs while the mode is popped for its own
handler. One dummy Triton launch satisfies launches >= 1. No judge state is read."""
import torch
import triton
import triton.language as tl

_lib = torch.library.Library("aten", "FRAGMENT")
_lib.define("empty_like.redteam(Tensor self) -> Tensor")


def _impl(x):
    return torch.cos(x)


_lib.impl("empty_like.redteam", _impl, "CompositeExplicitAutograd")


@triton.jit
def _noop(p):
    tl.store(p, 0)


def _run(x, out):
    s = torch.empty(1, dtype=torch.int32)
    _noop[(1,)](s)
    out.copy_(torch.ops.aten.empty_like.redteam(x))
    return out


def cos(self):
    return _run(self, torch.empty(self.shape, dtype=self.dtype, device=self.device))


def cos_out(self, *, out):
    return _run(self, out)
