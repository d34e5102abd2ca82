import torch
import triton
import triton.language as tl

# ---------------------------------------------------------------------------
# aten::reflection_pad1d_backward
#
# Forward:  out[..., i] = in[..., reflect(i - pad_l)],  i in [0, W + pad_l + pad_r)
#           reflect(k) = -k            for k < 0
#                      = 2 (W-1) - k   for k >= W
# Because pad_l, pad_r < W every output column has exactly one source and
# every input column j receives (gather form, no atomics):
#   grad_in[j] = go[j + pad_l]
#              + go[pad_l - j]                  if 1 <= j <= pad_l
#              + go[pad_l + 2 (W-1) - j]        if W-1-pad_r <= j <= W-2
#
# The reference accumulates into grad_input in its storage dtype, visiting
# grad_output columns in ascending order (left pad, centre, right pad).  For
# float16 / bfloat16 the running sum is rounded to the storage dtype after
# every add (ROUND_KIND) so that 3-way overlaps (pad_l + pad_r >= W - 1) round
# the same way; float32 / float64 accumulate natively.
#
# Tiles are [YBLOCK rows, XBLOCK columns] over (rows = N*C, W); the tile grid
# is flattened onto program_id(0) so the row count is not limited by grid dims.
# ---------------------------------------------------------------------------


@triton.jit
def _round_to_storage(x, ROUND_KIND: tl.constexpr):
    # x is fp32; returns x rounded (nearest-even) onto the storage dtype grid
    if ROUND_KIND == 1:
        x = x.to(tl.float16).to(tl.float32)
    elif ROUND_KIND == 2:
        xb = x.to(tl.int32, bitcast=True)
        xb = (xb + (0x7FFF + ((xb >> 16) & 1))) & -65536
        x = xb.to(tl.float32, bitcast=True)
    return x


@triton.autotune(
    configs=[
        triton.Config({"YBLOCK": 1, "XBLOCK": 1024}, num_warps=4),
        triton.Config({"YBLOCK": 4, "XBLOCK": 256}, num_warps=4),
        triton.Config({"YBLOCK": 8, "XBLOCK": 512}, num_warps=8),
        triton.Config({"YBLOCK": 16, "XBLOCK": 64}, num_warps=4),
    ],
    key=["ynumel", "xnumel", "pad_l", "pad_r"],
)
@triton.jit
def reflection_pad1d_backward_kernel(
    go_ptr, out_ptr,
    ynumel, xnumel,            # rows (N*C) and input width W
    C, go_sn, go_sc, go_sw,    # grad_output strides (batch, channel, width)
    pad_l, pad_r,
    ACC_F64: tl.constexpr, ROUND_KIND: tl.constexpr, YBLOCK: tl.constexpr, XBLOCK: tl.constexpr,
):
    pid = tl.program_id(0)
    num_xblocks = tl.cdiv(xnumel, XBLOCK)
    pid_y = pid // num_xblocks
    pid_x = pid % num_xblocks

    yindex = (pid_y.to(tl.int64) * YBLOCK + tl.arange(0, YBLOCK).to(tl.int64))[:, None]
    xindex = (pid_x * XBLOCK + tl.arange(0, XBLOCK))[None, :]
    ymask = yindex < ynumel
    xmask = xindex < xnumel
    mask = ymask & xmask

    n = yindex // C
    c = yindex % C
    row_base = n * go_sn + c * go_sc

    if ACC_F64:
        acc_ty = tl.float64
    else:
        acc_ty = tl.float32

    # left reflection: output column pad_l - j for 1 <= j <= pad_l
    lmask = mask & (xindex >= 1) & (xindex <= pad_l)
    lsrc = (pad_l - xindex).to(tl.int64)
    acc = tl.load(go_ptr + row_base + lsrc * go_sw, mask=lmask, other=0.0).to(acc_ty)

    # centre: grad_output column j + pad_l always maps onto j
    src = (xindex + pad_l).to(tl.int64)
    acc += tl.load(go_ptr + row_base + src * go_sw, mask=mask, other=0.0).to(acc_ty)
    acc = _round_to_storage(acc, ROUND_KIND)

    # right reflection: output column pad_l + 2 (W-1) - j for W-1-pad_r <= j <= W-2
    rmask = mask & (xindex >= xnumel - 1 - pad_r) & (xindex <= xnumel - 2)
    rsrc = (pad_l + 2 * (xnumel - 1) - xindex).to(tl.int64)
    acc += tl.load(go_ptr + row_base + rsrc * go_sw, mask=rmask, other=0.0).to(acc_ty)
    acc = _round_to_storage(acc, ROUND_KIND)

    tl.store(out_ptr + yindex * xnumel + xindex, acc.to(out_ptr.dtype.element_ty), mask=mask)


def reflection_pad1d_backward(grad_output, self, padding):
    if len(padding) != 2:
        raise ValueError("padding must have exactly 2 elements")
    pad_l, pad_r = int(padding[0]), int(padding[1])
    if self.dim() not in (2, 3):
        raise ValueError("reflection_pad1d_backward expects a 2D or 3D input")
    W = self.shape[-1]
    if not (pad_l < W and pad_r < W):
        raise ValueError(
            f"Argument #4: Padding size should be less than the corresponding input "
            f"dimension, but got: padding ({pad_l}, {pad_r}) at dimension {self.dim() - 1} of input {tuple(self.shape)}"
        )
    w_out = W + pad_l + pad_r
    if grad_output.shape[-1] != w_out or grad_output.shape[:-1] != self.shape[:-1]:
        raise ValueError(
            f"grad_output width unexpected. Expected: {w_out}, Got: {grad_output.shape[-1]}"
        )

    out = torch.empty(self.shape, dtype=grad_output.dtype, device=grad_output.device)
    if out.numel() == 0:
        return out

    if self.dim() == 3:
        N, C = self.shape[0], self.shape[1]
        go_sn, go_sc, go_sw = grad_output.stride()
    else:
        N, C = 1, self.shape[0]
        go_sc, go_sw = grad_output.stride()
        go_sn = 0
    rows = N * C

    grid = lambda meta: (triton.cdiv(rows, meta["YBLOCK"]) * triton.cdiv(W, meta["XBLOCK"]),)
    reflection_pad1d_backward_kernel[grid](
        grad_output, out,
        rows, W,
        C, go_sn, go_sc, go_sw,
        pad_l, pad_r,
        ACC_F64=grad_output.dtype == torch.float64,
        ROUND_KIND={torch.float16: 1, torch.bfloat16: 2}.get(grad_output.dtype, 0),
    )
    return out
