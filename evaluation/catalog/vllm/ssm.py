"""vLLM's Mamba-1 selective scan, variable-length form (csrc/mamba/mamba_ssm/selective_scan_fwd.cu)."""

from __future__ import annotations

import torch

from evaluation.catalog.spec import Call, Case, OperatorSpec, dtype_of
from evaluation.catalog.vllm.common import FLOAT16_DTYPES, cases, product, rand, randn, record


def scan_inputs(case: Case, generator: torch.Generator) -> Call:
    params = case.params
    dtype = dtype_of(params["dtype"])
    dim, dstate, groups, lengths = params["dim"], params["dstate"], params["groups"], params["lengths"]
    batch, total = len(lengths), sum(lengths)
    options = params["options"]  # bit 0: D, bit 1: z, bit 2: delta_bias
    u = randn((dim, total), dtype, generator)
    # delta > 0 without softplus (the regime softplus produces), so that the recurrence stays contractive
    delta = randn((dim, total), dtype, generator)
    if not params["softplus"]:
        delta = (delta.float().abs() * 0.5).to(dtype)
    A = -rand((dim, dstate), torch.float32, generator) - 0.1
    B = randn((groups, dstate, total), dtype, generator)
    C = randn((groups, dstate, total), dtype, generator)
    D = randn((dim,), torch.float32, generator) if options & 1 else None
    z = randn((dim, total), dtype, generator) if options & 2 else None
    delta_bias = rand((dim,), torch.float32, generator) * 0.2 - 0.1 if options & 4 else None
    query_start_loc = torch.tensor([0] + lengths, dtype=torch.int64).cumsum(0).to(torch.int32)
    cache_indices = torch.arange(batch, dtype=torch.int32).flip(0)  # slots in reverse order
    if params.get("padded_slot"):
        cache_indices[0] = -1
    has_initial_state = (
        torch.tensor([i % 2 == 1 for i in range(batch)])
        if params["initial_state"]
        else torch.zeros(batch, dtype=torch.bool)
    )
    ssm_states = randn((batch, dim, dstate), torch.float32, generator)
    return Call(
        args=[
            u,
            delta,
            A,
            B,
            C,
            D,
            z,
            delta_bias,
            params["softplus"],
            query_start_loc,
            cache_indices,
            has_initial_state,
            ssm_states,
            -1,
        ]
    )


def scan_reference(case: Case, call: Call) -> None:
    (
        u,
        delta,
        A,
        B,
        C,
        D,
        z,
        delta_bias,
        softplus,
        query_start_loc,
        cache_indices,
        has_initial_state,
        ssm_states,
        pad_slot_id,
    ) = call.args[:14]
    dim = u.size(0)
    groups = B.size(0)
    group_of_dim = torch.arange(dim, device=u.device) // (dim // groups)
    starts = query_start_loc.tolist()
    slots = cache_indices.tolist()
    initial = has_initial_state.tolist()
    for b, slot in enumerate(slots):
        if slot == pad_slot_id:
            continue
        start, end = starts[b], starts[b + 1]
        dt = delta[:, start:end].float()
        if delta_bias is not None:
            dt = dt + delta_bias.float()[:, None]
        if softplus:
            dt = torch.where(dt <= 20.0, torch.log1p(torch.exp(dt)), dt)
        uu = u[:, start:end].float()
        BB = B[:, :, start:end].float()[group_of_dim]  # [dim, dstate, L]
        CC = C[:, :, start:end].float()[group_of_dim]
        state = (
            ssm_states[slot].float().clone() if initial[b] else torch.zeros_like(ssm_states[slot], dtype=torch.float32)
        )
        outputs = []
        for t in range(end - start):
            state = torch.exp(dt[:, t, None] * A) * state + (dt[:, t] * uu[:, t])[:, None] * BB[:, :, t]
            outputs.append((state * CC[:, :, t]).sum(-1))
        y = torch.stack(outputs, dim=1) if outputs else torch.zeros_like(uu)
        if D is not None:
            y = y + D.float()[:, None] * uu
        if z is not None:
            zz = z[:, start:end].float()
            z[:, start:end] = (y * (zz / (1.0 + torch.exp(-zz)))).to(z.dtype)
        delta[:, start:end] = y.to(delta.dtype)
        ssm_states[slot] = state.to(ssm_states.dtype)


def scan_timed(params: dict) -> bool:
    return sum(params["lengths"]) * params["dim"] >= 4096


SSM_CONFIGS = [
    {"dim": 16, "dstate": 8, "groups": 1, "lengths": [1]},
    {"dim": 32, "dstate": 16, "groups": 1, "lengths": [3, 5]},
    {"dim": 64, "dstate": 16, "groups": 1, "lengths": [7, 3, 12, 1]},
    {"dim": 128, "dstate": 32, "groups": 2, "lengths": [16, 32]},
    {"dim": 256, "dstate": 16, "groups": 4, "lengths": [64, 32, 48]},
]

SELECTIVE_SCAN_FWD = record(
    "selective_scan_fwd",
    description="Mamba-1 selective scan over variable-length sequences, with state cache (in place).",
    signature=(
        "selective_scan_fwd(u: Tensor, delta: Tensor, A: Tensor, B: Tensor, C: Tensor, D_: Tensor | None, "
        "z_: Tensor | None, delta_bias_: Tensor | None, delta_softplus: bool, query_start_loc: Tensor, "
        "cache_indices: Tensor, has_initial_state: Tensor, ssm_states: Tensor, pad_slot_id: int, "
        "block_size: int = 1024, block_idx_first_scheduled_token: Tensor | None = None, "
        "block_idx_last_scheduled_token: Tensor | None = None, initial_state_idx: Tensor | None = None) -> None"
    ),
    make_inputs=scan_inputs,
    reference=scan_reference,
    smoke=cases(
        "selective_scan_fwd",
        [
            {
                "dim": 8,
                "dstate": 4,
                "groups": 1,
                "lengths": [3, 2],
                "dtype": d,
                "softplus": sp,
                "options": 7,
                "initial_state": True,
            }
            for d in FLOAT16_DTYPES
            for sp in (False, True)
        ]
        + [
            {
                "dim": 8,
                "dstate": 4,
                "groups": 2,
                "lengths": [1, 4, 2],
                "dtype": "float16",
                "softplus": True,
                "options": 0,
                "initial_state": False,
                "padded_slot": True,
            }
        ],
        timed=scan_timed,
    ),
    public=cases(
        "selective_scan_fwd",
        [
            {**config, **rest}
            for config in SSM_CONFIGS
            for rest in product(
                dtype=FLOAT16_DTYPES, softplus=[False, True], options=[0, 1, 3, 7], initial_state=[False, True]
            )
        ],
        timed=scan_timed,
    ),
    held_out=lambda rng: list(
        cases(
            "selective_scan_fwd",
            [
                {
                    "dim": (g := rng.choice((1, 2, 4))) * rng.choice((16, 32, 64)),
                    "dstate": rng.choice((8, 16, 32)),
                    "groups": g,
                    "lengths": [rng.randint(1, 200) for _ in range(rng.randint(1, 5))],
                    "dtype": rng.choice(FLOAT16_DTYPES),
                    "softplus": rng.random() < 0.5,
                    "options": rng.choice((0, 1, 3, 7)),
                    "initial_state": rng.random() < 0.5,
                    "padded_slot": rng.random() < 0.2,
                }
                for _ in range(4)
            ],
            timed=scan_timed,
        )
    ),
    mutates=(1, 6, 12),
    compare_return=False,
    prompt_notes=(
        "Varlen layout: u, delta, z_ [dim, L_total] (fp16/bf16); B, C [ngroups, dstate, L_total] (dim d uses group "
        "d // (dim/ngroups)); A [dim, dstate], D_, delta_bias_ [dim] fp32 or None; query_start_loc int32 [batch+1]; "
        "cache_indices int32 [batch] (state slot per sequence; pad_slot_id = skip the sequence); "
        "has_initial_state bool [batch]; ssm_states fp32 [slots, dim, dstate]. Per sequence, in fp32: "
        "dt = delta (+ delta_bias), if delta_softplus dt = log1p(exp(dt)) where dt <= 20; h0 = ssm_states[slot] "
        "if has_initial_state else 0; h_t = exp(dt_t * A) * h_{t-1} + dt_t * B_t * u_t; y_t = sum_n h_t * C_t "
        "(+ D * u_t). Writes delta <- dtype(y) (the output), z_ <- dtype(y * silu(z)) when z_ is given, and "
        "ssm_states[slot] <- h_last. The trailing arguments keep their defaults. Returns None."
    ),
    departures=(
        "Without softplus we draw delta as |randn|/2 (the original draws randn, so exp(delta*A) > 1 and states "
        "grow by orders of magnitude, making fp32 comparisons order-sensitive). ssm_states start random (the "
        "original zeros them, making has_initial_state irrelevant); cache slots are reversed and some cases "
        "have a padded slot. delta (the y output) is compared even when z_ is given."
    ),
)


OPERATORS: list[OperatorSpec] = [SELECTIVE_SCAN_FWD]
