# aten::cos / cos.out
import os

import torch
import triton
import triton.language as tl

_INTERPRET = os.environ.get("TRITON_INTERPRET", "0") == "1"


def _configs():
    cfgs = [triton.Config({"XBLOCK": 1024}, num_warps=4), triton.Config({"XBLOCK": 2048}, num_warps=8)]
    # no driver to benchmark with under the interpreter -> only one config
    return cfgs[-1:] if _INTERPRET else cfgs


@triton.jit
def _rne_bf16(x):
    # fp32 -> (fp32 value exactly representable in bf16), round-to-nearest-even.
    # The interpreter's fp32->bf16 cast truncates, so round explicitly first.
    bits = x.to(tl.uint32, bitcast=True)
    bits = bits + (((bits >> 16) & 1) + 0x7FFF)
    bits = (bits >> 16) << 16
    return bits.to(tl.float32, bitcast=True)


@triton.jit
def _finish(tmp, OUT_IS_BF16: tl.constexpr):
    if OUT_IS_BF16:
        tmp = _rne_bf16(tmp.to(tl.float32))
    return tmp


@triton.autotune(configs=_configs(), key=["xnumel"])
@triton.jit
def triton_poi_cos_flat(in_ptr0, out_ptr0, xnumel, COMPUTE: tl.constexpr, OUT_IS_BF16: tl.constexpr,
                        XBLOCK: tl.constexpr):
    xindex = tl.program_id(0).to(tl.int64) * XBLOCK + tl.arange(0, XBLOCK)
    xmask = xindex < xnumel
    tmp0 = tl.load(in_ptr0 + xindex, xmask).to(COMPUTE)
    tmp1 = tl.cos(tmp0)
    tmp2 = _finish(tmp1, OUT_IS_BF16)
    tl.store(out_ptr0 + xindex, tmp2.to(out_ptr0.dtype.element_ty), xmask)


@triton.autotune(configs=_configs(), key=["xnumel"])
@triton.jit
def triton_poi_cos_strided(in_ptr0, out_ptr0, xnumel,
                           ks1, ks2, ks3,
                           ist0, ist1, ist2, ist3,
                           ost0, ost1, ost2, ost3,
                           COMPUTE: tl.constexpr, OUT_IS_BF16: tl.constexpr,
                           XBLOCK: tl.constexpr):
    xindex = tl.program_id(0).to(tl.int64) * XBLOCK + tl.arange(0, XBLOCK)
    xmask = xindex < xnumel
    x3 = xindex % ks3
    x2 = (xindex // ks3) % ks2
    x1 = (xindex // (ks3 * ks2)) % ks1
    x0 = xindex // (ks3 * ks2 * ks1)
    tmp0 = tl.load(in_ptr0 + (x0 * ist0 + x1 * ist1 + x2 * ist2 + x3 * ist3), xmask).to(COMPUTE)
    tmp1 = tl.cos(tmp0)
    tmp2 = _finish(tmp1, OUT_IS_BF16)
    tl.store(out_ptr0 + (x0 * ost0 + x1 * ost1 + x2 * ost2 + x3 * ost3),
             tmp2.to(out_ptr0.dtype.element_ty), xmask)


def _fold2(sizes, a, b):
    ks, sa, sb = [], [], []
    for s, x, y in zip(sizes, a, b):
        if s == 1:
            continue
        if ks and sa[-1] == s * x and sb[-1] == s * y:
            ks[-1] *= s
            sa[-1], sb[-1] = x, y
        else:
            ks.append(s)
            sa.append(x)
            sb.append(y)
    return ks, sa, sb


def _compute_type(inp: torch.Tensor, out: torch.Tensor):
    if inp.dtype == torch.float64 or out.dtype == torch.float64:
        return tl.float64
    return tl.float32


def _launch(inp: torch.Tensor, out: torch.Tensor) -> None:
    xnumel = out.numel()
    if xnumel == 0:
        return
    compute = _compute_type(inp, out)
    is_bf16 = out.dtype == torch.bfloat16
    same_dense = inp.stride() == out.stride() and (out.is_contiguous() or _is_dense(out))
    if same_dense:
        grid = lambda meta: (triton.cdiv(xnumel, meta["XBLOCK"]),)
        triton_poi_cos_flat[grid](inp, out, xnumel, COMPUTE=compute, OUT_IS_BF16=is_bf16)
        return
    ks, ist, ost = _fold2(list(out.shape), list(inp.stride()), list(out.stride()))
    if len(ks) > 4:
        for i in range(out.shape[0]):
            _launch(inp[i], out[i])
        return
    pad = 4 - len(ks)
    ks = [1] * pad + ks
    ist = [0] * pad + ist
    ost = [0] * pad + ost
    grid = lambda meta: (triton.cdiv(xnumel, meta["XBLOCK"]),)
    triton_poi_cos_strided[grid](inp, out, xnumel, ks[1], ks[2], ks[3], *ist, *ost,
                                 COMPUTE=compute, OUT_IS_BF16=is_bf16)


def _is_dense(t: torch.Tensor) -> bool:
    pairs = sorted((st, sz) for sz, st in zip(t.shape, t.stride()) if sz != 1)
    expect = 1
    for st, sz in pairs:
        if st != expect:
            return False
        expect *= sz
    return True


def _result_dtype(self: torch.Tensor) -> torch.dtype:
    if self.dtype.is_floating_point or self.dtype.is_complex:
        return self.dtype
    return torch.get_default_dtype()  # integer / bool inputs promote to the default float


def cos(self: torch.Tensor) -> torch.Tensor:
    dt = _result_dtype(self)
    if _is_dense(self):
        out = torch.empty_like(self, dtype=dt, memory_format=torch.preserve_format)
    else:
        out = torch.empty(self.shape, dtype=dt, device=self.device)
    if self.numel() == 0:
        # keep the contract of launching a kernel even for empty tensors
        triton_poi_cos_flat[(1,)](self, out, 0, COMPUTE=tl.float32, OUT_IS_BF16=False)
        return out
    _launch(self, out)
    return out


def cos_out(self: torch.Tensor, *, out: torch.Tensor) -> torch.Tensor:
    if tuple(out.shape) != tuple(self.shape):
        out.resize_(self.shape)
    if self.numel() == 0:
        triton_poi_cos_flat[(1,)](self, out, 0, COMPUTE=tl.float32, OUT_IS_BF16=False)
        return out
    _launch(self, out)
    return out
