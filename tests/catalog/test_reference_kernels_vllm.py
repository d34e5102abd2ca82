"""Reference Triton kernels of the vLLM records pass every smoke case on the CPU interpreter.

A small local checker (the judge in evaluation/judge is the real one): candidate and reference get inputs built
from the same seed; every compared output (lists of per-layer caches element by element) must match within the
record's tolerance (OperatorSpec.tolerance), and statistical records must satisfy their stat_check.

On a GPU host, ``KGB_VLLM_KERNEL_DEVICE=cuda pytest tests/catalog/test_reference_kernels_vllm.py`` runs the
compiled kernels (no interpreter) on a sample of public cases instead, inputs moved to the device.
"""

from __future__ import annotations

import os

DEVICE = os.environ.get("KGB_VLLM_KERNEL_DEVICE", "cpu")
if DEVICE == "cpu":
    # The interpreter must be on before triton creates any kernel: the kernel files are imported below.
    os.environ["TRITON_INTERPRET"] = "1"

import importlib  # noqa: E402
import importlib.util  # noqa: E402
from pathlib import Path  # noqa: E402
from types import ModuleType  # noqa: E402

import pytest  # noqa: E402
import torch  # noqa: E402

from evaluation.catalog import registry  # noqa: E402
from evaluation.catalog.spec import Call, Case, OperatorSpec  # noqa: E402

KERNEL_DIR = Path(__file__).resolve().parents[2] / "evaluation" / "catalog" / "reference_kernels"
# From the registry: the smoke tier with its derived twins (public cases holding values it lacks).
RECORDS = {
    spec.name: registry.all_operators()[spec.operator_id]
    for module_name in registry.RECORD_MODULES
    if module_name.startswith("evaluation.catalog.vllm.")
    for spec in importlib.import_module(module_name).OPERATORS
}
KERNEL_FILES = {
    name: KERNEL_DIR / f"vllm13__{name}.py" for name in RECORDS if (KERNEL_DIR / f"vllm13__{name}.py").exists()
}


def sampled_public(spec: OperatorSpec) -> tuple[Case, ...]:
    """GPU runs: the first, middle and last public cases of every record (each is a full-size case)."""
    public = spec.public
    return tuple(public[index] for index in sorted({0, len(public) // 2, len(public) - 1}))


CASES = [
    pytest.param(RECORDS[name], case, id=case.case_id)
    for name in sorted(KERNEL_FILES)
    for case in (RECORDS[name].smoke if DEVICE == "cpu" else sampled_public(RECORDS[name]))
]
_MODULES: dict[str, ModuleType] = {}
pytestmark = pytest.mark.skipif(
    DEVICE != "cpu" and not torch.cuda.is_available(), reason="KGB_VLLM_KERNEL_DEVICE=cuda needs a CUDA device"
)


def kernel_module(name: str) -> ModuleType:
    if name not in _MODULES:
        path = KERNEL_FILES[name]
        spec = importlib.util.spec_from_file_location(f"reference_kernel_{path.stem}", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _MODULES[name] = module
    return _MODULES[name]


def flatten(outputs: tuple) -> list[torch.Tensor | None]:
    flat: list[torch.Tensor | None] = []
    for output in outputs:
        flat.extend(output if isinstance(output, (list, tuple)) else [output])
    return flat


def comparable(tensor: torch.Tensor) -> torch.Tensor:
    """float8 compares by value in fp32 (assert_close has no float8 kernels everywhere)."""
    return tensor.float() if tensor.dtype in (torch.float8_e4m3fn, torch.float8_e5m2) else tensor


def to_device(value: object) -> object:
    if isinstance(value, torch.Tensor):
        return value.to(DEVICE)
    if isinstance(value, list):
        return [to_device(item) for item in value]
    if isinstance(value, tuple):
        return tuple(to_device(item) for item in value)
    return value


def built(spec: OperatorSpec, case: Case, seed: int) -> Call:
    call = spec.make_inputs(case, torch.Generator().manual_seed(seed))
    if DEVICE == "cpu":
        return call
    return Call(args=to_device(call.args), kwargs={key: to_device(value) for key, value in call.kwargs.items()})


def check_case(spec: OperatorSpec, case: Case, module: ModuleType, seed: int = 1234) -> None:
    candidate_call = built(spec, case, seed)
    reference_call = built(spec, case, seed)
    returned = getattr(module, case.entry_point)(*candidate_call.args, **candidate_call.kwargs)
    candidate_outputs = spec.outputs_of(case, candidate_call, returned)
    if spec.stat_check is not None:
        assert spec.stat_check(case, candidate_call, candidate_outputs) is None
        return
    expected = spec.outputs_of(case, reference_call, spec.reference(case, reference_call))
    # tolerance index = position in outputs_of (a list argument counts as one output)
    for index, (got_output, want_output) in enumerate(zip(candidate_outputs, expected, strict=True)):
        got_list, want_list = flatten((got_output,)), flatten((want_output,))
        assert len(got_list) == len(want_list)
        for got, want in zip(got_list, want_list, strict=True):
            if want is None:
                assert got is None
                continue
            assert isinstance(got, torch.Tensor)
            assert got.dtype == want.dtype and got.shape == want.shape
            atol, rtol = spec.tolerance(case, index, want.dtype)
            torch.testing.assert_close(
                comparable(got), comparable(want), atol=atol, rtol=rtol, equal_nan=case.allow_nan
            )


def test_at_least_ten_vllm_operators_have_reference_kernels() -> None:
    assert len(KERNEL_FILES) >= 10


@pytest.mark.parametrize(("spec", "case"), CASES)
def test_reference_kernel_passes_case(spec: OperatorSpec, case: Case) -> None:
    check_case(spec, case, kernel_module(spec.name))


def test_a_wrong_kernel_fails_the_checker() -> None:
    """The checker is not vacuous: rms_norm without the weight multiply is rejected."""
    spec = RECORDS["rms_norm"]
    module = kernel_module("rms_norm")

    class WithoutWeight:
        @staticmethod
        def rms_norm(out, input, weight, epsilon):
            ones = torch.ones_like(weight)
            module.rms_norm(out, input, ones, epsilon)

    with pytest.raises(AssertionError):
        check_case(spec, spec.smoke[0], WithoutWeight())


@pytest.mark.parametrize("name", sorted(KERNEL_FILES))
def test_kernel_file_passes_the_judges_static_scan(name: str) -> None:
    from evaluation.judge.static_scan import scan_source

    path = KERNEL_FILES[name]
    result = scan_source(path.read_text(), path.name)
    assert not result.syntax_error and result.findings == ()
