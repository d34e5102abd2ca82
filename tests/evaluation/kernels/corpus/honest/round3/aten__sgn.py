import torch
import triton
import triton.language as tl


def _block_size(args):
    n = args["n_elements"]
    return min(4096, max(128, triton.next_power_of_2(n)))


@triton.heuristics(
    values={
        "BLOCK_SIZE": _block_size,
        "num_warps": lambda args: 4 if args["n_elements"] < 65536 else 8,
        "CONTIG_OUT": lambda args: args["o_s0"] == 0 and args["o_s1"] == 0 and args["o_s2"] == 0 and args["o_s3"] == 1,
    }
)
@triton.jit
def sgn_kernel(
    in_ptr,
    out_ptr,
    n_elements,
    d1, d2, d3,
    o_s0, o_s1, o_s2, o_s3,
    IS_BOOL: tl.constexpr,
    IS_UNSIGNED: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
    CONTIG_OUT: tl.constexpr,
):
    pid = tl.program_id(0)
    offsets = pid.to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(in_ptr + offsets, mask=mask)

    if IS_BOOL:
        y = x
    elif IS_UNSIGNED:
        y = tl.where(x > 0, 1.0, 0.0)
    else:
        # comparisons are done in the input dtype; NaN falls through to 0
        y = tl.where(x > 0, 1.0, tl.where(x < 0, -1.0, 0.0))
    y = y.to(out_ptr.dtype.element_ty)

    if CONTIG_OUT:
        tl.store(out_ptr + offsets, y, mask=mask)
    else:
        i3 = offsets % d3
        t = offsets // d3
        i2 = t % d2
        t = t // d2
        i1 = t % d1
        i0 = t // d1
        tl.store(out_ptr + i0 * o_s0 + i1 * o_s1 + i2 * o_s2 + i3 * o_s3, y, mask=mask)


def _launch(x: torch.Tensor, out: torch.Tensor) -> None:
    n_elements = x.numel()
    if out.is_contiguous():
        shape = [1, 1, 1, max(n_elements, 1)]
        strides = [0, 0, 0, 1]
    else:
        if out.dim() > 4:
            raise NotImplementedError("sgn_out: strided out with more than 4 dims")
        shape = [1] * (4 - out.dim()) + list(out.shape)
        strides = [0] * (4 - out.dim()) + list(out.stride())

    grid = lambda meta: (triton.cdiv(n_elements, meta["BLOCK_SIZE"]),)
    sgn_kernel[grid](
        x,
        out,
        n_elements,
        shape[1], shape[2], shape[3],
        strides[0], strides[1], strides[2], strides[3],
        IS_BOOL=x.dtype == torch.bool,
        IS_UNSIGNED=x.dtype == torch.uint8,
    )


def sgn(self: torch.Tensor) -> torch.Tensor:
    if self.is_complex():
        raise NotImplementedError("complex sgn is not supported")
    x = self.contiguous()
    out = torch.empty_like(x)
    if x.numel() > 0:
        _launch(x.view(-1), out)
    return out


def sgn_out(self: torch.Tensor, *, out: torch.Tensor) -> torch.Tensor:
    if self.is_complex():
        raise NotImplementedError("complex sgn is not supported")
    if out.shape != self.shape:
        out.resize_(self.shape)
    x = self.contiguous()
    if x.numel() > 0:
        _launch(x.view(-1), out)
    return out
