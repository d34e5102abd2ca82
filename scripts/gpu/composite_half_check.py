"""Does CUDA eager round a composite ATen loss in half as CPU eager does? The claim behind ``eager_alternative``.

    python3 scripts/gpu/composite_half_check.py [--draws 3] [--device cuda]

Records marked ``composite_in_aten`` (binary_cross_entropy_with_logits, margin_ranking_loss) accept ATen's
own unwidened half answer beside their widened reference (float32 inside, rounded once), on the argument
that ATen runs them op by op, each op rounding its result to the half dtype on any device, so that CUDA eager
(the original's reference) rounds as CPU eager does. For every public case of those records in float16 or
bfloat16, ``--draws`` input draws on ``--device``: the device's eager answer against the CPU's eager answer
on the same inputs (the claim: within the case's tolerance, most values bit-equal) and against the widened
reference (how far apart the two accepted answers are). Prints one line a case and a summary; exits 1 if
a case's device eager answer falls outside the tolerance of CPU eager's (the claim is wrong there).
On the CPU it checks itself: device and CPU eager are the same computation, bit for bit.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from evaluation.catalog.registry import all_operators  # noqa: E402
from evaluation.judge.compare import compare_outputs, flat_tensors  # noqa: E402
from evaluation.judge.inputs import to_device  # noqa: E402

HALF = ("float16", "bfloat16")


def units_apart(left: torch.Tensor, right: torch.Tensor) -> int:
    """The largest distance in units in the last place between two half tensors of one dtype (0 for none)."""
    if left.numel() == 0:
        return 0
    bits_left = left.detach().cpu().contiguous().view(torch.int16).to(torch.int32)
    bits_right = right.detach().cpu().contiguous().view(torch.int16).to(torch.int32)
    # Map the sign-magnitude patterns onto a line where neighbouring values differ by one.
    line_left = torch.where(bits_left < 0, -(bits_left & 0x7FFF), bits_left)
    line_right = torch.where(bits_right < 0, -(bits_right & 0x7FFF), bits_right)
    return int((line_left - line_right).abs().max())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=3)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--max-cases", type=int, default=0, help="at most this many cases a record (0: all)")
    options = parser.parse_args()
    device = torch.device(options.device)
    records = [spec for spec in all_operators().values() if spec.eager_alternative is not None]
    refuted = checked = 0
    for spec in records:
        cases = [case for case in spec.public if case.params.get("dtype") in HALF]
        if options.max_cases:
            cases = cases[: options.max_cases]
        for case in cases:
            worst_cpu = worst_widened = 0
            widest = 0.0
            outside = 0
            for draw in range(options.draws):
                call = spec.make_inputs(case, torch.Generator().manual_seed(draw))
                on_device = to_device(call, device)
                eager_device = spec.outputs_of(case, on_device, spec.eager_alternative(case, on_device))
                eager_cpu = spec.outputs_of(
                    case, call, spec.eager_alternative(case, to_device(call, torch.device("cpu")))
                )
                widened = spec.outputs_of(case, on_device, spec.reference(case, to_device(call, device)))
                moved = tuple(item.cpu() if isinstance(item, torch.Tensor) else item for item in eager_device)
                if compare_outputs(spec, case, call, moved, eager_cpu, explain=False) is not None:
                    outside += 1
                for got, cpu, wide in zip(
                    flat_tensors(eager_device), flat_tensors(eager_cpu), flat_tensors(widened), strict=True
                ):
                    worst_cpu = max(worst_cpu, units_apart(got, cpu))
                    worst_widened = max(worst_widened, units_apart(got, wide))
                    if got.numel():
                        widest = max(widest, float((got.float() - wide.float()).abs().max()))
            checked += 1
            refuted += outside > 0
            print(
                f"{case.case_id}: {device.type} eager vs cpu eager: worst {worst_cpu} ulp, "
                f"{outside}/{options.draws} draws outside tolerance; vs widened: worst {worst_widened} ulp "
                f"(near zero after cancellation an ulp is tiny), {widest:.3g} at most",
                flush=True,
            )
    print(f"{checked} half cases of {len(records)} composite records on {device}; {refuted} refute the claim")
    return 1 if refuted else 0


if __name__ == "__main__":
    raise SystemExit(main())
