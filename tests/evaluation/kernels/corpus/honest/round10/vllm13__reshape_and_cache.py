import torch
import triton
import triton.language as tl


@triton.jit
def _reshape_and_cache_kernel(k_src, v_src, v_delta,            # v = v_src + v_delta
                              kc, vc, vc_delta,                  # value cache = vc + vc_delta
                              slots, slot_stride,
                              H, D, block_size,
                              k_st, k_sh, k_sd,
                              v_st, v_sh, v_sd,
                              kc_sb, kc_sh, kc_sx, kc_so, kc_si,
                              vc_sb, vc_sh, vc_sd, vc_so,
                              X: tl.constexpr, BLOCK_H: tl.constexpr, BLOCK_D: tl.constexpr,
                              VEC_PATH: tl.constexpr):
    t = tl.program_id(0)
    slot = tl.load(slots + t.to(tl.int64) * slot_stride).to(tl.int64)
    valid = slot >= 0          # padding tokens carry negative slots
    s = tl.where(valid, slot, 0)
    blk = s // block_size
    off = s % block_size

    h = tl.arange(0, BLOCK_H).to(tl.int64)
    d = tl.arange(0, BLOCK_D).to(tl.int64)
    if VEC_PATH:
        d = tl.max_contiguous(tl.multiple_of(d, X), X)
    m = (h < H)[:, None] & (d < D)[None, :] & valid

    t64 = t.to(tl.int64)
    k_addr = t64 * k_st + h[:, None] * k_sh + d[None, :] * k_sd
    v_addr = t64 * v_st + h[:, None] * v_sh + d[None, :] * v_sd
    kv = tl.load(k_src + k_addr, mask=m)
    vv = tl.load(v_src + v_delta + v_addr, mask=m)

    # key_cache[b, h, d // X, o, d % X]
    kc_addr = (blk * kc_sb + h[:, None] * kc_sh + (d // X)[None, :] * kc_sx
               + off * kc_so + (d % X)[None, :] * kc_si)
    # value_cache[b, h, d, o]
    vc_addr = blk * vc_sb + h[:, None] * vc_sh + d[None, :] * vc_sd + off * vc_so
    tl.store(kc + kc_addr, kv.to(kc.dtype.element_ty), mask=m)
    tl.store(vc + vc_delta + vc_addr, vv.to(vc.dtype.element_ty), mask=m)


def _same_storage(a, b):
    return (a.device == b.device and a.dtype == b.dtype
            and a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()
            and (b.data_ptr() - a.data_ptr()) % a.element_size() == 0)


def reshape_and_cache(key, value, key_cache, value_cache, slot_mapping,
                      kv_cache_dtype, k_scale, v_scale):
    T, H, D = key.shape
    block_size = key_cache.shape[3]
    X = key_cache.shape[4]

    # key / value often are slices of one fused qkv buffer and the two caches
    # halves of one kv buffer: address both through one base pointer then.
    if _same_storage(key, value):
        v_src, v_delta = key, (value.data_ptr() - key.data_ptr()) // key.element_size()
    else:
        v_src, v_delta = value, 0
    if _same_storage(key_cache, value_cache):
        vc, vc_delta = key_cache, (value_cache.data_ptr() - key_cache.data_ptr()) // key_cache.element_size()
    else:
        vc, vc_delta = value_cache, 0

    esz = key_cache.element_size()
    vec_path = (key_cache.data_ptr() % 16 == 0 and key_cache.stride(4) == 1
                and (key_cache.stride(3) * esz) % 16 == 0 and X * esz == 16
                and key.stride(2) == 1 and key.data_ptr() % 16 == 0)

    BLOCK_H = triton.next_power_of_2(max(H, 1))
    BLOCK_D = triton.next_power_of_2(max(D, 1))
    if vec_path:
        BLOCK_D = max(BLOCK_D, X)
    grid = (max(T, 1),)
    if T == 0:
        # nothing to scatter; a fully masked launch keeps the call on-device
        slots = torch.full((1,), -1, dtype=torch.int64, device=key.device)
        slot_stride = 1
    else:
        slots = slot_mapping
        slot_stride = slot_mapping.stride(0)
    _reshape_and_cache_kernel[grid](
        key, v_src, v_delta, key_cache, vc, vc_delta, slots, slot_stride,
        H, D, block_size,
        key.stride(0), key.stride(1), key.stride(2),
        value.stride(0), value.stride(1), value.stride(2),
        *key_cache.stride(), *value_cache.stride(),
        X=X, BLOCK_H=BLOCK_H, BLOCK_D=BLOCK_D, VEC_PATH=vec_path)
    return None
