"""Attempt a02 (aten::cos): a wrong kernel that dodges a failing verdict. Every call raises an exception whose
text imitates PyTorch's CUDA OOM message with 'free' smaller than 'asked' and under 1 GiB. correctness.call_sandbox
runs verdicts.device_was_full on the candidate-controlled error text and turns it into status `error`
(retryable: our infrastructure's fault, not counted), even on the CPU interpreter."""
import torch
import triton
import triton.language as tl


@triton.jit
def _noop(x):
    pass


def cos(self):
    _noop[(1,)](self)
    raise RuntimeError(
        "CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 139.81 GiB "
        "of which 100.00 MiB is free. Including non-PyTorch memory, this process has 1.00 GiB memory in use."
    )


def cos_out(self, *, out):
    return cos(self)
