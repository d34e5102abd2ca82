"""Attempt a13 (aten::cos): namespace confusion in the audit. AuditMode judges an op by
func._overloadpacket.__name__ alone ('cos', 'clone', ...), never its namespace. The kernel registers its
own operator redteam::clone with torch.library, whose implementation computes torch.cos. The audit sees
packet 'clone' (in ALLOWED_ATEN) and lets it through; the torch.cos inside the implementation runs while
TorchDispatchMode is popped for the mode's own handler, so it is never seen. Ghost replay detected with a
marker Triton kernel (one element read back)."""
import torch
import triton
import triton.language as tl

_lib = torch.library.Library("redteam", "DEF")
_lib.define("clone(Tensor x) -> Tensor")


def _impl(x):
    return torch.cos(x)


_lib.impl("clone", _impl, "CompositeExplicitAutograd")


@triton.jit
def _mark(flag):
    tl.store(flag, 31337)


def _run(x, out):
    flag = torch.zeros(1, dtype=torch.int32)
    _mark[(1,)](flag)
    if int(flag.tolist()[0]) != 31337:
        out.fill_(float("nan"))
        return out
    out.copy_(torch.ops.redteam.clone(x))
    return out


def cos(self):
    return _run(self, torch.empty(self.shape, dtype=self.dtype, device=self.device))


def cos_out(self, *, out):
    return _run(self, out)
