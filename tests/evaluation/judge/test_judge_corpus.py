"""Issue 19: the judge gives the right verdict for the right reason on kernels it was not tuned to.

Every file of tests/evaluation/kernels/corpus is judged by the real judge (its operator's own catalog record,
smoke tier, the CPU interpreter, the fork-server sandbox) with the static scan on and off. Honest files must
pass; buggy files must fail with the status corpus.toml gives and a reason naming the bug, and are never
called cheats. What today's judge gets wrong is recorded per file and scan mode as ``known_judge_defect``:
those cases are strict xfails that expect the judge's quoted words, so they fail outright on any other
outcome and turn into failures (XPASS) once the judge is fixed.

The per-file logic is scripts/gpu/corpus_h200.py's, which judges the same corpus on a GPU.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
REFERENCE_KERNELS = ROOT / "evaluation" / "catalog" / "reference_kernels"
MIN_HONEST, MIN_BUGGY = 40, 15
SHARED_RUN = 4  # consecutive identical non-blank, non-import lines that count as copied code


def _corpus_script():
    path = ROOT / "scripts" / "gpu" / "corpus_h200.py"
    module_spec = importlib.util.spec_from_file_location("corpus_h200", path)
    module = importlib.util.module_from_spec(module_spec)
    sys.modules["corpus_h200"] = module  # dataclasses look their module up by name
    module_spec.loader.exec_module(module)
    return sys.modules["corpus_h200"]


corpus = _corpus_script()
MANIFEST = corpus.load_manifest()


class KnownJudgeDefect(AssertionError):
    """The judge went wrong exactly as the manifest says it does today."""


def _cases():
    for relative, entry in sorted(MANIFEST.items()):
        for scan_mode in corpus.SCAN_MODES:
            defect = entry.defect(scan_mode)
            marks = [pytest.mark.xfail(strict=True, raises=KnownJudgeDefect, reason=defect)] if defect else []
            yield pytest.param(relative, scan_mode, marks=marks, id=f"{relative}-{scan_mode}")


@pytest.mark.usefixtures("warm_forkserver")
@pytest.mark.parametrize(("relative", "scan_mode"), list(_cases()))
def test_the_judge_gives_the_expected_verdict_for_the_expected_reason(relative, scan_mode):
    entry = MANIFEST[relative]
    result, _ = corpus.judge_entry(entry, scan_mode)
    wrong = corpus.problems(entry, result)
    defect = entry.defect(scan_mode)
    if wrong and defect and corpus.judge_said(defect) in result.reason:
        raise KnownJudgeDefect(f"{defect} -- the judge said: {result.status}: {result.reason[:300]}")
    assert not wrong, f"{relative} ({scan_mode}): {'; '.join(wrong)} -- {result.status}: {result.reason[:500]}"


def test_the_manifest_and_the_folder_agree():
    on_disk = set(corpus.corpus_files())
    assert on_disk - set(MANIFEST) == set(), "corpus files without a manifest entry"
    assert set(MANIFEST) - on_disk == set(), "manifest entries without a file"


def test_the_corpus_is_large_enough_and_spans_every_source():
    kinds = [entry.kind for entry in MANIFEST.values()]
    assert kinds.count("honest") >= MIN_HONEST
    assert kinds.count("buggy") >= MIN_BUGGY
    honest_sources = {entry.operator_id.split("::")[0] for entry in MANIFEST.values() if entry.kind == "honest"}
    assert honest_sources == {"aten", "vllm13", "cublas"}


def test_every_file_is_a_submission_for_an_operator_of_the_catalog():
    from evaluation.catalog.registry import all_operators
    from leaderboard.uploads import operator_id_from_filename

    operators = all_operators()
    for relative, entry in MANIFEST.items():
        assert operator_id_from_filename(Path(relative).name) == entry.operator_id, relative
        spec = operators[entry.operator_id]
        assert spec.smoke, f"{relative}: {entry.operator_id} has no smoke cases"
        source = entry.path.read_text()
        for entry_point in spec.entry_points:
            assert f"def {entry_point.name}(" in source, f"{relative} lacks the entry point {entry_point.name}"


def test_a_bug_no_case_of_the_judged_tiers_exposes_is_expected_to_pass_there(tmp_path):
    # A GPU judges the original's public and held-out grids; a bug only the smoke tier's layout case exposes
    # passes there, as the original's release would pass it, and the manifest has to say so and why.
    embedding = MANIFEST["buggy/aten__embedding.py"]
    assert embedding.expected_on(("smoke",)) == "failed_correctness"
    assert embedding.expected_on(("public", "held_out")) == "passed"
    assert all(
        entry.expected_on(("public",)) == entry.expected_status for entry in MANIFEST.values() if not entry.exposed_by
    )

    bad = tmp_path / "corpus.toml"
    bad.write_text('[files."honest/aten__cos.py"]\nstyle = "s"\nexposed_by = ["smoke"]\nexposed_why = "w"\n')
    with pytest.raises(ValueError, match="exposed_by"):
        corpus.load_manifest(bad)
    bad.write_text(
        '[files."buggy/aten__cos.py"]\nstyle = "s"\nbug = "b"\nexpected_status = "failed_correctness"\n'
        'reason_contains = "x"\nexposed_by = ["smoke"]\n'
    )
    with pytest.raises(ValueError, match="exposed_why"):
        corpus.load_manifest(bad)


def test_an_interpreter_defect_in_the_manifest_must_be_one_the_judge_names(tmp_path):
    # A file whose right answer the CPU interpreter computes wrongly must fail there naming the defect; a
    # defect the sandbox mends (bf16 and float8 rounding) can no longer be the reason, so naming it is refused.
    manifest = tmp_path / "corpus.toml"
    manifest.write_text('[files."honest/aten__cos.py"]\nstyle = "s"\ninterpreter_defect = "bf16_bits"\n')
    entry = corpus.load_manifest(manifest)["honest/aten__cos.py"]
    assert entry.expected_on(("smoke",)) == "failed_correctness" and entry.expected_on(("public",)) == "passed"
    for name in ("fp8_rounding", "bf16_rounding", "no_such_defect"):
        manifest.write_text(f'[files."honest/aten__cos.py"]\nstyle = "s"\ninterpreter_defect = "{name}"\n')
        with pytest.raises(ValueError, match="no known defect"):
            corpus.load_manifest(manifest)


def test_known_defects_quote_the_judge():
    for entry in MANIFEST.values():
        for defect in entry.defects.values():
            assert corpus.judge_said(defect)


def _code_lines(path: Path) -> list[str]:
    stripped = (line.strip() for line in path.read_text().splitlines())
    return [line for line in stripped if line and not line.startswith(("import ", "from "))]


def test_no_corpus_file_copies_a_reference_kernel():
    """Written independently: no run of SHARED_RUN identical code lines in common with a reference kernel."""
    seen: dict[tuple[str, ...], str] = {}
    for reference in sorted(REFERENCE_KERNELS.glob("*.py")):
        lines = _code_lines(reference)
        for start in range(len(lines) - SHARED_RUN + 1):
            seen.setdefault(tuple(lines[start : start + SHARED_RUN]), reference.name)
    shared = []
    for entry in MANIFEST.values():
        lines = _code_lines(entry.path)
        for start in range(len(lines) - SHARED_RUN + 1):
            run = tuple(lines[start : start + SHARED_RUN])
            if run in seen:
                shared.append(f"{entry.relative} ~ {seen[run]}: {run}")
    assert shared == []
