"""The text a generator is given for one operator on one chip, and prompt packs (one JSON line per operator).

Built only from the operator's record and the chip's known Triton quirks (PROTOCOL section 2), so the prompt
changes exactly when the record does. No held-out case is ever described here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any

from evaluation.catalog.registry import get_operator
from evaluation.catalog.spec import OperatorSpec

# What each chip family's Triton is known to get wrong (PROTOCOL section 2), by chip slug prefix.
CHIP_QUIRKS: dict[str, str] = {
    "nvidia": 'NVIDIA CUDA: for float32 inputs `tl.dot` uses TF32 unless told `input_precision="ieee"`; '
    "float32 results must be true float32.",
    "ascend": "Huawei Ascend (torch_npu): `tl.dot` takes no `allow_tf32`; large tiles overflow the Unified Buffer, "
    "keep BLOCK sizes moderate.",
    "moore": "Moore Threads MUSA (torch_musa): use `triton.musa_testing` rather than `triton.testing`.",
    "musa": "Moore Threads MUSA (torch_musa): use `triton.musa_testing` rather than `triton.testing`.",
    "metax": "MetaX MACA: no 64-bit pointer offsets and partial bf16 support; some `tl` math functions are missing.",
    "hygon": "Hygon DCU (ROCm/HIP): some `tl` math functions are missing; the compiler can hang on very large "
    "unrolled loops.",
    "iluvatar": "Iluvatar CoreX: some `tl` math functions are missing; prefer simple block shapes.",
    "cpu-interpreter": "Triton's CPU interpreter (TRITON_INTERPRET=1) runs the kernels on CPU tensors; it is slow, "
    "and its timings mean nothing.",
}

FORMAT_RULES = """\
Write ONE Python file. It holds one or more `@triton.jit` kernels and plain Python wrapper functions named
exactly as the entry points below, with exactly those parameters. Wrappers allocate outputs (torch.empty,
torch.empty_like, torch.empty_strided, torch.zeros...), may reshape with views (.view, .reshape, .contiguous,
.transpose, .expand...), compute the launch grid and launch the kernels. All arithmetic on tensor data must
happen inside Triton kernels: calling torch or another library for the work (torch.cos, x.sum(), x @ y,
torch.nn.functional, torch.ops.aten, ctypes, vllm) is rejected when it runs, and so is reading more than a few
dozen values of tensor data back to the host in one call (.item(), .tolist(), .cpu() of one result are
fine). The code runs in a sandbox with no network and no files but its own. Every call must launch at least
one Triton kernel. In-place entry
points mutate the named arguments (and return them where the signature returns a tensor). Outputs must be plain
dense torch.Tensors of the exact dtype and shape of the reference."""

CORRECTNESS_RULES = """\
Judging: every case must pass, including held-out shapes and strides you have not seen. A case passes when
torch.testing.assert_close(out, ref, atol=1e-4 * reduce_dim, rtol=R[dtype]) holds (R: float16 1e-3,
bfloat16 1.6e-2, float32 and float64 1e-5; integers and bool exact), with the exact output dtype. Inputs
arrive in any layout the cases name (contiguous, transposed, strided, broadcast); do not assume contiguity.
Speed is measured against the reference on the same device; only passing kernels are timed."""


def chip_quirks(chip_slug: str) -> str:
    for prefix, text in CHIP_QUIRKS.items():
        if chip_slug.startswith(prefix):
            return text
    return "No chip-specific Triton quirks are recorded for this chip."


def describe_public_cases(spec: OperatorSpec, limit: int = 12) -> list[str]:
    """A short summary of the public cases: which entry points, dtypes and shapes are exercised."""
    lines = []
    by_entry = Counter(case.entry_point for case in spec.public)
    for entry, count in by_entry.items():
        lines.append(f"- `{entry}`: {count} public case(s)")
    lines.extend(f"  - {case.case_id}" for case in spec.public[:limit])
    if len(spec.public) > limit:
        lines.append(f"- ... and {len(spec.public) - limit} more")
    return lines


def operator_prompt(spec: OperatorSpec, chip_slug: str) -> str:
    """The complete prompt for ``spec`` on ``chip_slug``."""
    file_name = spec.operator_id.replace("::", "__") + ".py"
    parts = [
        f"# Task: implement {spec.operator_id} in Triton for {chip_slug}",
        "",
        spec.description.strip(),
    ]
    if spec.prompt_notes:
        parts += ["", "## Semantics", spec.prompt_notes.strip()]
    parts += ["", "## Entry points (define all of them)"]
    for entry in spec.entry_points:
        mutated = f"  (mutates: {', '.join(map(str, entry.mutates))})" if entry.mutates else ""
        parts.append(f"- `def {entry.signature}`{mutated}")
    if spec.judgement != "allclose" and spec.judgement_notes:
        parts += ["", "## How this operator is judged", spec.judgement_notes.strip()]
    parts += [
        "",
        "## File format",
        FORMAT_RULES,
        "",
        "## Correctness and timing",
        CORRECTNESS_RULES,
        "",
        "## Public cases",
        *describe_public_cases(spec),
        "",
        "## Chip",
        chip_quirks(chip_slug),
        "",
        f"Answer with the complete file `{file_name}` only.",
    ]
    return "\n".join(parts) + "\n"


def prompt_pack_lines(operator_ids: Iterable[str], chip_slug: str) -> Iterator[dict[str, Any]]:
    """One JSON-serialisable object per operator: id, file name, entry points and prompt."""
    for operator_id in operator_ids:
        spec = get_operator(operator_id)
        yield {
            "operator_id": spec.operator_id,
            "source": spec.source,
            "chip": chip_slug,
            "file_name": spec.operator_id.replace("::", "__") + ".py",
            "entry_points": [{"name": e.name, "signature": e.signature} for e in spec.entry_points],
            "unavailable_reason": spec.unavailable_reason,
            "prompt": operator_prompt(spec, chip_slug),
        }
