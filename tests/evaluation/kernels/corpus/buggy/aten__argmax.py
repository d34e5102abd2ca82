import torch
import triton
import triton.language as tl


@triton.jit
def argmax_rows(x_ptr, out_ptr, n_cols, s_row, s_col, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + row * s_row + c * s_col, mask=c < n_cols, other=float("-inf")).to(tl.float32)
    tl.store(out_ptr + row, tl.argmax(v, axis=0).to(tl.int64))


def argmax(self, dim=None, keepdim=False):
    # BUG (honest): dim=None is taken to mean "the last dim" (as in many reduction helpers), but
    # torch.argmax(dim=None) reduces the flattened tensor and returns a 0-d index
    d = self.dim() - 1 if dim is None else dim % self.dim()
    moved = self.movedim(d, -1)
    matrix = moved.reshape(-1, moved.shape[-1])
    out_shape = list(moved.shape[:-1])
    out = torch.empty(out_shape, dtype=torch.int64, device=self.device)
    rows, cols = matrix.shape
    if rows:
        argmax_rows[(rows,)](matrix, out, cols, matrix.stride(0), matrix.stride(1),
                             BLOCK=triton.next_power_of_2(cols))
    return out.unsqueeze(d) if keepdim else out
