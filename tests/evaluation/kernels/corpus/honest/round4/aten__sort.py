"""aten::sort in Triton.

Every element is turned into an order-preserving integer key (floats are
bit-twiddled so that signed integer comparison matches IEEE order, NaN is the
largest value, -0.0 equals +0.0; descending flips all key bits).  Keys are
sorted together with their original position by a bitonic network, ties being
broken by position, so the result is always the stable sort.  For dtypes of
32 bits or less the key and the position are packed into one int64 (key in
the high word), so the network moves a single array; 64-bit dtypes carry a
separate position array.

Rows up to MAX_BLOCK elements are sorted in registers by a single launch.
Longer rows go through a scratch buffer: each MAX_BLOCK chunk is sorted in
registers, then the remaining bitonic merge stages run as global
compare-exchange launches (large strides) followed by an in-register pass
(small strides).
"""
import functools

import torch
import triton
import triton.language as tl

MAX_BLOCK = 4096
_ELEMS_PER_PROGRAM = 2048


@triton.jit
def _encode(x, IS_FLOAT: tl.constexpr, KEY64: tl.constexpr, DESC: tl.constexpr):
    if IS_FLOAT:
        if KEY64:
            xf = x.to(tl.float64)
            xf = tl.where(xf == 0, 0.0, xf)  # fold -0.0 onto +0.0
            b = xf.to(tl.int64, bitcast=True)
            b = tl.where(xf != xf, 0x7FF8000000000000, b)  # one canonical NaN
            k = b ^ ((b >> 63) & 0x7FFFFFFFFFFFFFFF)
        else:
            xf = x.to(tl.float32)  # exact for fp16 / bf16
            xf = tl.where(xf == 0, 0.0, xf)
            b = xf.to(tl.int32, bitcast=True)
            b = tl.where(xf != xf, 0x7FC00000, b)
            k = b ^ ((b >> 31) & 0x7FFFFFFF)
    else:
        if KEY64:
            k = x.to(tl.int64)
        else:
            k = x.to(tl.int32)
    if DESC:
        k = ~k
    return k


@triton.jit
def _cmp_exchange(key, idx, stage, base, R: tl.constexpr, B: tl.constexpr, J: tl.constexpr,
                  PAIR: tl.constexpr):
    # partners are J apart inside each row of the [R, B] tile; every value is
    # kept in the tile's own shape so no layout changes are needed
    G: tl.constexpr = B // (2 * J)
    shape4: tl.constexpr = [R, G, 2, J]
    half = tl.arange(0, 2)[None, None, :, None]
    k4 = tl.reshape(key, shape4)
    k_lo = tl.reshape(tl.broadcast_to(tl.sum(tl.where(half == 0, k4, 0), axis=2)[:, :, None, :], shape4), [R, B])
    k_hi = tl.reshape(tl.broadcast_to(tl.sum(tl.where(half == 1, k4, 0), axis=2)[:, :, None, :], shape4), [R, B])
    cols = tl.arange(0, B)[None, :]
    ascending = ((base + cols) & stage) == 0
    is_hi = (cols & J) != 0
    if PAIR:
        i4 = tl.reshape(idx, shape4)
        i_lo = tl.reshape(tl.broadcast_to(tl.sum(tl.where(half == 0, i4, 0), axis=2)[:, :, None, :], shape4), [R, B])
        i_hi = tl.reshape(tl.broadcast_to(tl.sum(tl.where(half == 1, i4, 0), axis=2)[:, :, None, :], shape4), [R, B])
        lo_greater = (k_lo > k_hi) | ((k_lo == k_hi) & (i_lo > i_hi))
    else:
        # packed keys already carry the position in their low bits
        lo_greater = k_lo > k_hi
    swap = lo_greater == ascending
    key = tl.where(swap, tl.where(is_hi, k_lo, k_hi), key)
    if PAIR:
        idx = tl.where(swap, tl.where(is_hi, i_lo, i_hi), idx)
    return key, idx


@triton.jit
def _sort_block_kernel(
    x_ptr, key_ptr, pos_ptr, val_out_ptr, idx_out_ptr,
    n_rows, N, N_PAD, inner,
    x_so, x_sn, x_si,
    stage,
    LOAD_INPUT: tl.constexpr, STORE_OUTPUT: tl.constexpr, FULL: tl.constexpr,
    IS_FLOAT: tl.constexpr, KEY64: tl.constexpr, DESC: tl.constexpr,
    R: tl.constexpr, B: tl.constexpr, LOG_B: tl.constexpr,
):
    rows = tl.program_id(0) * R + tl.arange(0, R)[:, None]
    base = tl.program_id(1) * B
    cols = base + tl.arange(0, B)[None, :]
    row_ok = rows < n_rows
    rows64 = rows.to(tl.int64)
    o = rows64 // inner
    i = rows64 % inner
    x_row = x_ptr + o * x_so + i * x_si
    scratch = rows64 * N_PAD + cols

    if LOAD_INPUT:
        m = row_ok & (cols < N)
        x = tl.load(x_row + cols.to(tl.int64) * x_sn, mask=m)
        key = _encode(x, IS_FLOAT, KEY64, DESC)
        idx = cols + tl.zeros([R, B], dtype=tl.int32)
        if KEY64:
            key = tl.where(m, key, 0x7FFFFFFFFFFFFFFF)
        else:
            # (key, position) packed into one int64: high word key, low word position
            key = tl.where(m, key, 0x7FFFFFFF)
            key = (key.to(tl.int64) << 32) | idx.to(tl.int64)
    else:
        key = tl.load(key_ptr + scratch, mask=row_ok, other=0)
        if KEY64:
            idx = tl.load(pos_ptr + scratch, mask=row_ok, other=0)
        else:
            idx = tl.zeros([R, B], dtype=tl.int32)

    if FULL:
        # all stages whose sequences fit in one block
        for s in tl.static_range(1, LOG_B + 1):
            for t in tl.static_range(s):
                key, idx = _cmp_exchange(key, idx, 1 << s, base, R, B, 1 << (s - 1 - t), KEY64)
    else:
        # tail of one merge stage: strides B/2 .. 1
        for t in tl.static_range(LOG_B):
            key, idx = _cmp_exchange(key, idx, stage, base, R, B, B >> (t + 1), KEY64)

    if not KEY64:
        idx = (key & 0xFFFFFFFF).to(tl.int32)
    if STORE_OUTPUT:
        m = row_ok & (cols < N)
        vals = tl.load(x_row + idx.to(tl.int64) * x_sn, mask=m)
        out_off = o * N * inner + cols.to(tl.int64) * inner + i
        tl.store(val_out_ptr + out_off, vals, mask=m)
        tl.store(idx_out_ptr + out_off, idx.to(tl.int64), mask=m)
    else:
        tl.store(key_ptr + scratch, key, mask=row_ok)
        if KEY64:
            tl.store(pos_ptr + scratch, idx, mask=row_ok)


@triton.jit
def _merge_global_kernel(key_ptr, pos_ptr, N_PAD, blocks_per_row, stage, J,
                         PAIR: tl.constexpr, BLOCK: tl.constexpr):
    # compare-exchange with partner distance J >= block size, pairs spread over programs
    pid = tl.program_id(0)
    row = (pid // blocks_per_row).to(tl.int64)
    p = (pid % blocks_per_row) * BLOCK + tl.arange(0, BLOCK)
    m = p < N_PAD // 2
    lo = (p // J) * (2 * J) + (p % J)
    hi = lo + J
    lo_off = row * N_PAD + lo
    hi_off = row * N_PAD + hi
    k_lo = tl.load(key_ptr + lo_off, mask=m)
    k_hi = tl.load(key_ptr + hi_off, mask=m)
    ascending = (lo & stage) == 0
    if PAIR:
        i_lo = tl.load(pos_ptr + lo_off, mask=m)
        i_hi = tl.load(pos_ptr + hi_off, mask=m)
        lo_greater = (k_lo > k_hi) | ((k_lo == k_hi) & (i_lo > i_hi))
    else:
        lo_greater = k_lo > k_hi
    swap = (lo_greater == ascending) & m
    tl.store(key_ptr + lo_off, k_hi, mask=swap)
    tl.store(key_ptr + hi_off, k_lo, mask=swap)
    if PAIR:
        tl.store(pos_ptr + lo_off, i_hi, mask=swap)
        tl.store(pos_ptr + hi_off, i_lo, mask=swap)


# ---------------------------------------------------------------------------
# host side
# ---------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def _plan(n, n_rows):
    """(N_PAD, B, LOG_B, R, num_warps) for rows of n elements."""
    n_pad = triton.next_power_of_2(max(n, 1))
    b = min(n_pad, MAX_BLOCK)
    r = 1
    if n_pad <= _ELEMS_PER_PROGRAM:
        r = min(_ELEMS_PER_PROGRAM // n_pad, triton.next_power_of_2(max(n_rows, 1)))
    warps = 8 if r * b >= 4096 else (4 if r * b >= 512 else 2)
    return n_pad, b, b.bit_length() - 1, r, warps


def _merge_dims(sizes, strides):
    """Merge a run of dims into one (size, stride); None when the layout forbids it."""
    pairs = [(s, st) for s, st in zip(sizes, strides) if s != 1]
    total = 1
    for s in sizes:
        total *= s
    if not pairs:
        return total, 1
    for (s0, st0), (s1, st1) in zip(pairs[:-1], pairs[1:]):
        if st0 != st1 * s1:
            return None
    return total, pairs[-1][1]


def _as_outer_n_inner(x, dim):
    sizes, strides = list(x.shape), list(x.stride())
    outer = _merge_dims(sizes[:dim], strides[:dim])
    inner = _merge_dims(sizes[dim + 1:], strides[dim + 1:])
    if outer is None or inner is None:
        x = x.contiguous()
        return _as_outer_n_inner(x, dim)
    return x, outer, inner, strides[dim]


def _sort_impl(self, dim, descending):
    x = self.reshape(1) if self.dim() == 0 else self
    ndim = x.dim()
    if not -ndim <= dim < ndim:
        raise IndexError("sort: dim out of range")
    dim = dim % ndim
    values = torch.empty(self.shape, dtype=self.dtype, device=self.device)
    indices = torch.empty(self.shape, dtype=torch.int64, device=self.device)

    x, (outer, x_so), (inner, x_si), x_sn = _as_outer_n_inner(x, dim)
    n = x.shape[dim]
    n_rows = outer * inner
    is_float = x.dtype.is_floating_point
    # 64-bit dtypes (and uint32, which does not fit a signed 32-bit key) use int64 keys
    key64 = x.dtype in (torch.float64, torch.int64) or x.dtype == getattr(torch, "uint32", None)
    n_pad, b, log_b, r, warps = _plan(n, n_rows)
    flags = dict(IS_FLOAT=is_float, KEY64=key64, DESC=bool(descending), R=r, B=b, LOG_B=log_b,
                 num_warps=warps)
    row_grid = max(1, triton.cdiv(n_rows, r))
    common = (n_rows, n, n_pad, max(inner, 1), x_so, x_sn, x_si)

    if n_pad <= b:
        _sort_block_kernel[(row_grid, 1)](
            x, values, indices, values, indices, *common, 0,
            LOAD_INPUT=True, STORE_OUTPUT=True, FULL=True, **flags)
        return values, indices

    # int64 keys: packed (key, position) for <= 32-bit dtypes, plain keys + a position buffer otherwise
    keys = torch.empty((n_rows, n_pad), dtype=torch.int64, device=x.device)
    pos = torch.empty((n_rows, n_pad), dtype=torch.int32, device=x.device) if key64 else keys
    chunks = n_pad // b
    _sort_block_kernel[(row_grid, chunks)](
        x, keys, pos, values, indices, *common, 0,
        LOAD_INPUT=True, STORE_OUTPUT=False, FULL=True, **flags)
    gblock = 1024
    nblk = triton.cdiv(n_pad // 2, gblock)
    stage = 2 * b
    while stage <= n_pad:
        j = stage // 2
        while j >= b:
            _merge_global_kernel[(n_rows * nblk,)](
                keys, pos, n_pad, nblk, stage, j, PAIR=key64, BLOCK=gblock, num_warps=4)
            j //= 2
        last = stage == n_pad
        _sort_block_kernel[(row_grid, chunks)](
            x, keys, pos, values, indices, *common, stage,
            LOAD_INPUT=False, STORE_OUTPUT=last, FULL=False, **flags)
        stage *= 2
    return values, indices


def sort(self, dim=-1, descending=False):
    return _sort_impl(self, dim, descending)


def sort_stable(self, *, stable, dim=-1, descending=False):
    # the implementation is always stable, which is also a valid unstable sort
    return _sort_impl(self, dim, descending)
