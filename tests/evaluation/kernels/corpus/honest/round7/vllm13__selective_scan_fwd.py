import torch
import triton
import triton.language as tl


@triton.jit
def _round_to(x, IS_BF16: tl.constexpr):
    # bf16 rounding on the bits (round-to-nearest-even): the CPU interpreter
    # truncates on fp32 -> bf16 casts.  Harmless on GPU.
    if IS_BF16:
        bits = x.to(tl.uint32, bitcast=True)
        bits = (bits + (((bits >> 16) & 1) + 0x7FFF)) & 0xFFFF0000
        x = bits.to(tl.float32, bitcast=True)
    return x


@triton.jit
def _selective_scan_fwd_kernel(
    u_ptr, delta_ptr, A_ptr, B_ptr, C_ptr, D_ptr, z_ptr, delta_bias_ptr,
    query_start_loc_ptr, cache_indices_ptr, has_initial_state_ptr, ssm_states_ptr,
    dim, dstate, dim_per_group, pad_slot_id,
    stride_u_d, stride_u_l,
    stride_dt_d, stride_dt_l,
    stride_A_d, stride_A_n,
    stride_B_g, stride_B_n, stride_B_l,
    stride_C_g, stride_C_n, stride_C_l,
    stride_D, stride_db,
    stride_z_d, stride_z_l,
    stride_qsl, stride_ci, stride_his,
    stride_ss_s, stride_ss_d, stride_ss_n,
    HAS_D: tl.constexpr,
    HAS_Z: tl.constexpr,
    HAS_DELTA_BIAS: tl.constexpr,
    DELTA_SOFTPLUS: tl.constexpr,
    HAS_CACHE_INDICES: tl.constexpr,
    HAS_INITIAL_STATE: tl.constexpr,
    IS_BF16: tl.constexpr,
    BLOCK_DIM: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    seq = tl.program_id(0)
    pid_d = tl.program_id(1)

    if HAS_CACHE_INDICES:
        slot = tl.load(cache_indices_ptr + seq * stride_ci)
    else:
        slot = seq
    if slot == pad_slot_id:
        return

    start = tl.load(query_start_loc_ptr + seq * stride_qsl)
    end = tl.load(query_start_loc_ptr + (seq + 1) * stride_qsl)

    offs_d = pid_d * BLOCK_DIM + tl.arange(0, BLOCK_DIM)
    offs_n = tl.arange(0, BLOCK_N)
    mask_d = offs_d < dim
    mask_n = offs_n < dstate
    mask_dn = mask_d[:, None] & mask_n[None, :]
    grp = offs_d // dim_per_group

    A = tl.load(A_ptr + offs_d[:, None] * stride_A_d + offs_n[None, :] * stride_A_n,
                mask=mask_dn, other=0.0).to(tl.float32)
    if HAS_D:
        Dv = tl.load(D_ptr + offs_d * stride_D, mask=mask_d, other=0.0).to(tl.float32)
    if HAS_DELTA_BIAS:
        dbias = tl.load(delta_bias_ptr + offs_d * stride_db, mask=mask_d, other=0.0).to(tl.float32)

    ss_ptrs = (ssm_states_ptr + slot.to(tl.int64) * stride_ss_s
               + offs_d[:, None] * stride_ss_d + offs_n[None, :] * stride_ss_n)
    h = tl.zeros((BLOCK_DIM, BLOCK_N), dtype=tl.float32)
    if HAS_INITIAL_STATE:
        init = tl.load(has_initial_state_ptr + seq * stride_his)
        if init != 0:
            h = tl.load(ss_ptrs, mask=mask_dn, other=0.0).to(tl.float32)

    B_row = B_ptr + grp[:, None] * stride_B_g + offs_n[None, :] * stride_B_n
    C_row = C_ptr + grp[:, None] * stride_C_g + offs_n[None, :] * stride_C_n
    for t in range(start, end):
        u = tl.load(u_ptr + offs_d * stride_u_d + t * stride_u_l, mask=mask_d, other=0.0).to(tl.float32)
        dt = tl.load(delta_ptr + offs_d * stride_dt_d + t * stride_dt_l, mask=mask_d, other=0.0).to(tl.float32)
        if HAS_DELTA_BIAS:
            dt = dt + dbias
        if DELTA_SOFTPLUS:
            dt = tl.where(dt <= 20.0, tl.log(1.0 + tl.exp(dt)), dt)
        Bt = tl.load(B_row + t * stride_B_l, mask=mask_dn, other=0.0).to(tl.float32)
        Ct = tl.load(C_row + t * stride_C_l, mask=mask_dn, other=0.0).to(tl.float32)
        h = tl.exp(dt[:, None] * A) * h + (dt * u)[:, None] * Bt
        y = tl.sum(h * Ct, axis=1)
        if HAS_D:
            y = y + Dv * u
        tl.store(delta_ptr + offs_d * stride_dt_d + t * stride_dt_l,
                 _round_to(y, IS_BF16).to(delta_ptr.dtype.element_ty), mask=mask_d)
        if HAS_Z:
            zp = z_ptr + offs_d * stride_z_d + t * stride_z_l
            z = tl.load(zp, mask=mask_d, other=0.0).to(tl.float32)
            out_z = y * (z / (1.0 + tl.exp(-z)))
            tl.store(zp, _round_to(out_z, IS_BF16).to(z_ptr.dtype.element_ty), mask=mask_d)

    tl.store(ss_ptrs, h.to(ssm_states_ptr.dtype.element_ty), mask=mask_dn)


def selective_scan_fwd(u, delta, A, B, C, D_, z_, delta_bias_, delta_softplus,
                       query_start_loc, cache_indices, has_initial_state, ssm_states,
                       pad_slot_id, block_size=1024, block_idx_first_scheduled_token=None,
                       block_idx_last_scheduled_token=None, initial_state_idx=None):
    dim = u.shape[0]
    ngroups, dstate = B.shape[0], B.shape[1]
    batch = query_start_loc.numel() - 1
    BLOCK_N = triton.next_power_of_2(dstate)
    BLOCK_DIM = min(32, triton.next_power_of_2(dim))
    has_d = D_ is not None
    has_z = z_ is not None
    has_db = delta_bias_ is not None
    has_ci = cache_indices is not None
    has_init = has_initial_state is not None
    his = has_initial_state
    if has_init and his.dtype == torch.bool:
        his = his.view(torch.uint8)
    dummy = A
    grid = (batch, triton.cdiv(dim, BLOCK_DIM))
    _selective_scan_fwd_kernel[grid](
        u, delta, A, B, C,
        D_ if has_d else dummy, z_ if has_z else u, delta_bias_ if has_db else dummy,
        query_start_loc, cache_indices if has_ci else query_start_loc,
        his if has_init else query_start_loc, ssm_states,
        dim, dstate, dim // ngroups, pad_slot_id,
        u.stride(0), u.stride(1),
        delta.stride(0), delta.stride(1),
        A.stride(0), A.stride(1),
        B.stride(0), B.stride(1), B.stride(2),
        C.stride(0), C.stride(1), C.stride(2),
        D_.stride(0) if has_d else 0, delta_bias_.stride(0) if has_db else 0,
        z_.stride(0) if has_z else 0, z_.stride(1) if has_z else 0,
        query_start_loc.stride(0),
        cache_indices.stride(0) if has_ci else 0,
        his.stride(0) if has_init else 0,
        ssm_states.stride(0), ssm_states.stride(1), ssm_states.stride(2),
        HAS_D=has_d, HAS_Z=has_z, HAS_DELTA_BIAS=has_db,
        DELTA_SOFTPLUS=bool(delta_softplus),
        HAS_CACHE_INDICES=has_ci, HAS_INITIAL_STATE=has_init,
        IS_BF16=delta.dtype == torch.bfloat16,
        BLOCK_DIM=BLOCK_DIM, BLOCK_N=BLOCK_N,
    )
    return None
