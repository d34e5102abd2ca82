"""The cuBLAS records: complete, faithful to the KGB wrappers' signatures, and their references follow
cuBLAS's column-major memory rule exactly (hand-checked answers for padding, triangles, bands and strides).
"""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path

import pytest
import torch

from evaluation.catalog import registry
from evaluation.catalog.cublas import batched, blas_memory, level1, level2, level3
from evaluation.catalog.cublas.cublas_baseline import load_cublas
from evaluation.catalog.spec import Call, Case, OperatorSpec

MODULES = (level1, level2, level3, batched)
RECORDS: dict[str, OperatorSpec] = {spec.operator_id: spec for module in MODULES for spec in module.OPERATORS}
OPERATORS_CSV = Path(__file__).resolve().parents[2] / "leaderboard" / "data" / "operators.csv"

# The original wrappers' parameter lists (VLLM_CUBLAS.md summary table), in order.
KGB_SIGNATURES = {
    "cublasCcopy_v2": "n, x, incx, y, incy",
    "cublasCdotu_v2": "n, x, incx, y, incy, result",
    "cublasCgemmStridedBatched": "transa, transb, m, n, k, alpha, A, lda, "
    "strideA, B, ldb, strideB, beta, C, ldc, strideC, batchCount",
    "cublasCgemmStridedBatched_64": "transa, transb, m, n, k, alpha, A, lda, "
    "strideA, B, ldb, strideB, beta, C, ldc, strideC, batchCount",
    "cublasCgemm_v2": "transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc",
    "cublasCgemvBatched_64": "trans, m, n, alpha, Aarray, lda, xarray, incx, beta, yarray, incy, batchCount",
    "cublasCgemvStridedBatched": "trans, m, n, alpha, A, lda, strideA, "
    "x, incx, stridex, beta, y, incy, stridey, batchCount",
    "cublasCgemv_v2": "trans, m, n, alpha, A, lda, x, incx, beta, y, incy",
    "cublasCgeru_v2": "m, n, alpha, x, incx, y, incy, A, lda",
    "cublasCsymm_v2": "side, uplo, m, n, alpha, A, lda, B, ldb, beta, C, ldc",
    "cublasCsymv_v2": "uplo, n, alpha, A, lda, x, incx, beta, y, incy",
    "cublasCsyrkEx": "uplo, trans, n, k, alpha, A, Atype, lda, beta, C, Ctype, ldc",
    "cublasDasum_v2": "n, x, incx, result",
    "cublasDaxpy_v2": "n, alpha, x, incx, y, incy",
    "cublasDcopy_v2": "n, x, incx, y, incy",
    "cublasDgemmBatched": "transa, transb, m, n, k, alpha, Aarray, lda, Barray, ldb, beta, Carray, ldc, batchCount",
    "cublasDgemmStridedBatched": "transa, transb, m, n, k, alpha, A, lda, "
    "strideA, B, ldb, strideB, beta, C, ldc, strideC, batchCount",
    "cublasDgemmStridedBatched_64": "transa, transb, m, n, k, alpha, A, lda, "
    "strideA, B, ldb, strideB, beta, C, ldc, strideC, batchCount",
    "cublasDgemvBatched": "trans, m, n, alpha, Aarray, lda, xarray, incx, beta, yarray, incy, batchCount",
    "cublasDgemvStridedBatched": "trans, m, n, alpha, A, lda, strideA, "
    "x, incx, stridex, beta, y, incy, stridey, batchCount",
    "cublasDgemv_v2": "trans, m, n, alpha, A, lda, x, incx, beta, y, incy",
    "cublasDsbmv_v2": "uplo, n, k, alpha, A, lda, x, incx, beta, y, incy",
    "cublasDsyr2_v2": "uplo, n, alpha, x, incx, y, incy, A, lda",
    "cublasDtrsmBatched": "side, uplo, trans, diag, m, n, alpha, Aarray, lda, Barray, ldb, batchCount",
    "cublasHgemmBatched": "transa, transb, m, n, k, alpha, Aarray, lda, Barray, ldb, beta, Carray, ldc, batchCount",
    "cublasHgemmStridedBatched": "transa, transb, m, n, k, alpha, A, lda, "
    "strideA, B, ldb, strideB, beta, C, ldc, strideC, batchCount",
    "cublasSaxpy_v2": "n, alpha, x, incx, y, incy",
    "cublasSdgmm": "mode, m, n, A, lda, x, incx, C, ldc",
    "cublasSdot_v2": "n, x, incx, y, incy, result",
    "cublasSgeam": "transa, transb, m, n, alpha, A, lda, beta, B, ldb, C, ldc",
    "cublasSgemmBatched_64": "transa, transb, m, n, k, alpha, Aarray, lda, Barray, ldb, beta, Carray, ldc, batchCount",
    "cublasSgemmEx": "transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C, Ctype, ldc",
    "cublasSgemmStridedBatched": "transa, transb, m, n, k, alpha, A, lda, "
    "strideA, B, ldb, strideB, beta, C, ldc, strideC, batchCount",
    "cublasSgemm_v2": "transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc",
    "cublasSgemvBatched": "trans, m, n, alpha, Aarray, lda, xarray, incx, beta, yarray, incy, batchCount",
    "cublasSgemvStridedBatched": "trans, m, n, alpha, A, lda, strideA, "
    "x, incx, stridex, beta, y, incy, stridey, batchCount",
    "cublasSger_v2": "m, n, alpha, x, incx, y, incy, A, lda",
    "cublasSscal_v2": "n, alpha, x, incx",
    "cublasSsyrk_v2": "uplo, trans, n, k, alpha, A, lda, beta, C, ldc",
    "cublasStbmv_v2": "uplo, trans, diag, n, k, A, lda, x, incx",
    "cublasStrsm_v2": "side, uplo, trans, diag, m, n, alpha, A, lda, B, ldb",
    "cublasStrsv_v2": "uplo, trans, diag, n, A, lda, x, incx",
    "cublasZdotc_v2": "n, x, incx, y, incy, result",
    "cublasZgemmBatched": "transa, transb, m, n, k, alpha, Aarray, lda, Barray, ldb, beta, Carray, ldc, batchCount",
    "cublasZgemmStridedBatched": "transa, transb, m, n, k, alpha, A, lda, "
    "strideA, B, ldb, strideB, beta, C, ldc, strideC, batchCount",
    "cublasZgemvBatched": "trans, m, n, alpha, Aarray, lda, xarray, incx, beta, yarray, incy, batchCount",
    "cublasZgemvStridedBatched": "trans, m, n, alpha, A, lda, strideA, "
    "x, incx, stridex, beta, y, incy, stridey, batchCount",
    "cublasZgerc_v2": "m, n, alpha, x, incx, y, incy, A, lda",
    "cublasZswap_v2": "n, x, incx, y, incy",
    "cublasZtrsmBatched": "side, uplo, trans, diag, m, n, alpha, Aarray, lda, Barray, ldb, batchCount",
}


def run_reference(spec: OperatorSpec, case: Case, seed: int = 0) -> Call:
    call = spec.make_inputs(case, torch.Generator().manual_seed(seed))
    spec.reference(case, call)
    return call


def compared(spec: OperatorSpec, case: Case, call: Call) -> list[torch.Tensor]:
    flat: list[torch.Tensor] = []
    for output in spec.outputs_of(case, call, None):
        flat.extend(output if isinstance(output, list) else [output])
    return flat


# --- completeness -----------------------------------------------------------------------------------------


def test_the_fifty_ids_are_the_cublas_operators_of_the_benchmark():
    assert len(RECORDS) == 50
    assert {spec.name for spec in RECORDS.values()} == set(KGB_SIGNATURES)


@pytest.mark.skipif(not OPERATORS_CSV.exists(), reason="the shared operators.csv is not mounted here")
def test_ids_equal_the_cublas_rows_of_operators_csv():
    with OPERATORS_CSV.open() as handle:
        rows = list(csv.reader(handle))
    listed = {row[0] for row in rows if row and row[0].startswith("cublas::")}
    assert listed == set(RECORDS)


def test_record_modules_are_registered():
    for module in MODULES:
        assert module.__name__ in registry.RECORD_MODULES


@pytest.mark.parametrize("operator_id", sorted(RECORDS))
def test_record_is_complete(operator_id):
    spec = RECORDS[operator_id]
    assert spec.source == "cublas"
    assert spec.judgement == "allclose"
    assert spec.description and spec.prompt_notes and spec.judgement_notes
    assert spec.baseline is not None and spec.baseline_name == "cuBLAS (C API via ctypes)"
    assert spec.bytes_moved is not None and spec.flops is not None
    assert spec.unavailable_reason == ""
    (entry,) = spec.entry_points
    assert entry.name == spec.name
    params = KGB_SIGNATURES[spec.name]
    assert entry.signature.startswith(f"{spec.name}({params}) -> ")
    assert entry.compare_return is False
    assert entry.mutated_are_inputs is True  # the judge must not poison y / C / A before the call
    assert entry.mutates and all(isinstance(index, int) for index in entry.mutates)
    assert len(spec.smoke) >= 6 and len(spec.public) >= 12
    for tier in (spec.smoke, spec.public):
        ids = [case.case_id for case in tier]
        assert len(ids) == len(set(ids))
    for case in spec.smoke + spec.public:
        json.dumps(case.to_json())
        assert case.entry_point == spec.name and case.reduce_dim >= 1
        assert isinstance(spec.bytes_moved(case), int) and spec.bytes_moved(case) > 0
        assert isinstance(spec.flops(case), int) and spec.flops(case) >= 0
    assert not any(case.timed for case in spec.smoke)
    assert any(case.timed for case in spec.public)
    assert not all(case.timed for case in spec.public)


@pytest.mark.parametrize("operator_id", sorted(RECORDS))
def test_smoke_cases_are_small(operator_id):
    for case in RECORDS[operator_id].smoke:
        params = case.params
        assert params.get("batchCount", 1) <= 3
        assert all(params[key] <= 64 for key in ("n", "m", "k") if key in params)
        if "A" in KGB_SIGNATURES[RECORDS[operator_id].name] or "Aarray" in KGB_SIGNATURES[RECORDS[operator_id].name]:
            assert all(params[key] <= 32 for key in ("n", "m", "k") if key in params)


@pytest.mark.parametrize("operator_id", sorted(RECORDS))
def test_held_out_cases_come_from_the_generator(operator_id):
    spec = RECORDS[operator_id]
    first = spec.cases("held_out", random.Random(7))
    again = spec.cases("held_out", random.Random(7))
    other = spec.cases("held_out", random.Random(8))
    assert [case.case_id for case in first] == [case.case_id for case in again]
    assert [case.case_id for case in first] != [case.case_id for case in other]
    assert len(first) == 6
    public_ids = {case.case_id for case in spec.public}
    assert not public_ids & {case.case_id for case in first}


def test_fp32_gemm_like_records_carry_the_float64_bound():
    bounded = {name for name, spec in ((s.name, s) for s in RECORDS.values()) if spec.fp64_relative_bound}
    for name in (
        "cublasSgemm_v2",
        "cublasSgemmEx",
        "cublasSgemmStridedBatched",
        "cublasSgemmBatched_64",
        "cublasCgemm_v2",
        "cublasCgemmStridedBatched",
        "cublasCgemmStridedBatched_64",
        "cublasSsyrk_v2",
        "cublasCsyrkEx",
        "cublasStrsm_v2",
        "cublasCsymm_v2",
    ):
        assert name in bounded
        assert RECORDS[f"cublas::{name}"].fp64_relative_bound == 1e-5
    assert "cublasDgemmStridedBatched" not in bounded and "cublasHgemmBatched" not in bounded


def test_gemm_flops_and_reduce_dim():
    spec = RECORDS["cublas::cublasSgemm_v2"]
    case = next(case for case in spec.public if case.params["m"] == 128 and case.params["n"] == 256)
    assert spec.flops(case) == 2 * 128 * 256 * 64
    assert case.reduce_dim == 64 and case.timed is True
    strided = RECORDS["cublas::cublasZgemmStridedBatched"]
    case = next(case for case in strided.public if case.params["batchCount"] == 8 and case.params["k"] == 128)
    assert strided.flops(case) == 8 * 8 * case.params["m"] * case.params["n"] * 128


# --- every smoke case runs on the CPU ---------------------------------------------------------------------


@pytest.mark.parametrize("operator_id", sorted(RECORDS))
def test_reference_runs_every_smoke_case_on_cpu(operator_id):
    spec = RECORDS[operator_id]
    for case in spec.smoke:
        call = run_reference(spec, case)
        outputs = compared(spec, case, call)
        assert outputs and all(isinstance(output, torch.Tensor) for output in outputs)
        assert all(bool(torch.isfinite(torch.view_as_real(o) if o.is_complex() else o).all()) for o in outputs)


@pytest.mark.parametrize("operator_id", sorted(RECORDS))
def test_reference_changes_its_outputs_and_nothing_else(operator_id):
    """Inputs that are not mutated stay bit-identical; at least one compared element changes."""
    spec = RECORDS[operator_id]
    (entry,) = spec.entry_points
    case = max(spec.smoke, key=lambda c: sum(v for v in c.params.values() if isinstance(v, int)))
    before = spec.make_inputs(case, torch.Generator().manual_seed(3))
    after = run_reference(spec, case, seed=3)
    changed = False
    for index, (old, new) in enumerate(zip(before.args, after.args, strict=True)):
        olds, news = (old, new) if isinstance(old, list) else ([old], [new])
        for old_tensor, new_tensor in zip(olds, news, strict=True):
            if not isinstance(old_tensor, torch.Tensor):
                continue
            if index in entry.mutates:
                changed |= not torch.equal(old_tensor, new_tensor)
            else:
                assert torch.equal(old_tensor, new_tensor), f"argument {index} changed"
    assert changed


@pytest.mark.parametrize("operator_id", sorted(RECORDS))
def test_baseline_is_none_on_cpu(operator_id):
    spec = RECORDS[operator_id]
    case = spec.smoke[0]
    assert spec.baseline(case, spec.make_inputs(case, torch.Generator().manual_seed(0))) is None


def test_no_cublas_library_without_cuda():
    if not torch.cuda.is_available():
        assert load_cublas() is None


# --- hand-checked answers for the memory rule ------------------------------------------------------------


def call_of(spec: OperatorSpec, **values) -> tuple[Case, Call]:
    (entry,) = spec.entry_points
    names = [name.strip() for name in KGB_SIGNATURES[spec.name].split(",")]
    return Case(spec.name, {}), Call(args=[values[name] for name in names])


def test_sgemm_keeps_ld_padding_and_reads_column_major():
    spec = RECORDS["cublas::cublasSgemm_v2"]
    # A is 2 x 2 column-major with lda 3: flat [a00, a10, pad, a01, a11, pad].
    A = torch.tensor([1.0, 2.0, -7.0, 3.0, 4.0, -7.0])
    B = torch.tensor([1.0, 0.0, 0.0, 1.0])  # identity, ldb 2
    C = torch.tensor([10.0, 20.0, 99.0, 30.0, 40.0, 99.0])  # ldc 3, padding 99
    case, call = call_of(
        spec, transa="N", transb="N", m=2, n=2, k=2, alpha=2.0, A=A, lda=3, B=B, ldb=2, beta=1.0, C=C, ldc=3
    )
    spec.reference(case, call)
    assert C.tolist() == [12.0, 24.0, 99.0, 36.0, 48.0, 99.0]
    C2 = torch.tensor([0.0, 0.0, 99.0, 0.0, 0.0, 99.0])
    case, call = call_of(
        spec, transa="T", transb="N", m=2, n=2, k=2, alpha=1.0, A=A, lda=3, B=B, ldb=2, beta=0.0, C=C2, ldc=3
    )
    spec.reference(case, call)
    assert C2.tolist() == [1.0, 3.0, 99.0, 2.0, 4.0, 99.0]  # A^T, column-major


def test_beta_zero_does_not_read_c():
    spec = RECORDS["cublas::cublasSgemm_v2"]
    C = torch.tensor([float("nan")] * 4)
    case, call = call_of(
        spec,
        transa="N",
        transb="N",
        m=2,
        n=2,
        k=1,
        alpha=1.0,
        A=torch.tensor([1.0, 2.0]),
        lda=2,
        B=torch.tensor([3.0, 4.0]),
        ldb=1,
        beta=0.0,
        C=C,
        ldc=2,
    )
    spec.reference(case, call)
    assert C.tolist() == [3.0, 6.0, 4.0, 8.0]


def test_saxpy_with_increments_leaves_gaps_untouched():
    spec = RECORDS["cublas::cublasSaxpy_v2"]
    x = torch.tensor([1.0, -1.0, -1.0, 2.0, -1.0, -1.0, 3.0, -1.0, -1.0])
    y = torch.tensor([10.0, 5.0, 20.0, 5.0, 30.0, 5.0])
    case, call = call_of(spec, n=3, alpha=2.0, x=x, incx=3, y=y, incy=2)
    spec.reference(case, call)
    assert y.tolist() == [12.0, 5.0, 24.0, 5.0, 36.0, 5.0]


def test_negative_increment_starts_at_the_far_end():
    buffer = torch.tensor([1.0, 0.0, 2.0, 0.0, 3.0])
    assert blas_memory.read_vector(buffer, 3, -2).tolist() == [3.0, 2.0, 1.0]
    blas_memory.write_vector(buffer, 3, -2, torch.tensor([7.0, 8.0, 9.0], dtype=torch.float64))
    assert buffer.tolist() == [9.0, 0.0, 8.0, 0.0, 7.0]


def test_reference_uses_storage_offset_not_declared_shape():
    spec = RECORDS["cublas::cublasDcopy_v2"]
    storage = torch.arange(10, dtype=torch.float64)
    x = storage[4:].view(2, 3)  # declared 2 x 3, data pointer at element 4
    y = torch.zeros(4, dtype=torch.float64)
    case, call = call_of(spec, n=2, x=x, incx=3, y=y, incy=2)
    spec.reference(case, call)
    assert y.tolist() == [4.0, 0.0, 7.0, 0.0]


def test_ssyrk_leaves_the_other_triangle_untouched():
    spec = RECORDS["cublas::cublasSsyrk_v2"]
    A = torch.tensor([1.0, 2.0])  # n = 2, k = 1, trans N: a column (1, 2)
    C = torch.tensor([1.0, 1.0, -5.0, 1.0])  # column-major: C(0,1) = -5 is in the upper triangle
    case, call = call_of(spec, uplo=0, trans=0, n=2, k=1, alpha=1.0, A=A, lda=2, beta=1.0, C=C, ldc=2)
    spec.reference(case, call)
    assert C.tolist() == [2.0, 3.0, -5.0, 5.0]


def test_dsyr2_updates_the_upper_triangle_only():
    spec = RECORDS["cublas::cublasDsyr2_v2"]
    A = torch.zeros(4, dtype=torch.float64)
    x = torch.tensor([1.0, 2.0], dtype=torch.float64)
    y = torch.tensor([3.0, 4.0], dtype=torch.float64)
    case, call = call_of(spec, uplo=1, n=2, alpha=1.0, x=x, incx=1, y=y, incy=1, A=A, lda=2)
    spec.reference(case, call)
    # x y^T + y x^T = [[6, 10], [10, 16]]; column-major upper: A(0,0), A(0,1), A(1,1); A(1,0) untouched.
    assert A.tolist() == [6.0, 0.0, 10.0, 16.0]


def test_dsbmv_band_storage_matches_the_dense_matrix():
    spec = RECORDS["cublas::cublasDsbmv_v2"]
    n, k, lda = 4, 1, 3
    band = torch.arange(1.0, 1.0 + lda * n, dtype=torch.float64)  # column j: rows 0..2 at 3j..3j+2
    dense = torch.zeros(n, n, dtype=torch.float64)
    for j in range(n):  # upper: A(i, j) at band row k + i - j
        for i in range(max(0, j - k), j + 1):
            dense[i, j] = dense[j, i] = band[(k + i - j) + j * lda]
    x = torch.tensor([1.0, -2.0, 3.0, 0.5], dtype=torch.float64)
    y = torch.ones(n, dtype=torch.float64)
    case, call = call_of(spec, uplo=1, n=n, k=k, alpha=2.0, A=band, lda=lda, x=x, incx=1, beta=-0.75, y=y, incy=1)
    spec.reference(case, call)
    torch.testing.assert_close(y, 2.0 * dense @ x - 0.75, rtol=0, atol=1e-12)


def test_stbmv_lower_transposed_unit():
    spec = RECORDS["cublas::cublasStbmv_v2"]
    n, k = 3, 1
    band = torch.tensor([100.0, 2.0, 100.0, 3.0, 100.0, 99.0])  # lower: row 0 diagonal (unit: unread), row 1 sub
    x = torch.tensor([1.0, 1.0, 1.0])
    case, call = call_of(spec, uplo=0, trans=1, diag=1, n=n, k=k, A=band, lda=2, x=x, incx=1)
    spec.reference(case, call)
    # L = [[1,0,0],[2,1,0],[0,3,1]]; L^T x = [3, 4, 1]
    assert x.tolist() == [3.0, 4.0, 1.0]


def test_strsv_solves_with_the_referenced_triangle_only():
    spec = RECORDS["cublas::cublasStrsv_v2"]
    A = torch.tensor([2.0, 1000.0, 1.0, 4.0])  # upper: [[2, 1], [., 4]], A(1,0) = 1000 is garbage
    x = torch.tensor([4.0, 8.0])
    case, call = call_of(spec, uplo=1, trans=0, diag=0, n=2, A=A, lda=2, x=x, incx=1)
    spec.reference(case, call)
    assert x.tolist() == [1.0, 2.0]  # 2*1 + 1*2 = 4, 4*2 = 8


def test_cdotu_and_zdotc_differ_by_conjugation():
    x = torch.tensor([1 + 2j, 3 - 1j], dtype=torch.complex64)
    y = torch.tensor([2 - 1j, 1 + 1j], dtype=torch.complex64)
    result = torch.zeros(1, dtype=torch.complex64)
    case, call = call_of(RECORDS["cublas::cublasCdotu_v2"], n=2, x=x, incx=1, y=y, incy=1, result=result)
    RECORDS["cublas::cublasCdotu_v2"].reference(case, call)
    assert complex(result[0]) == (1 + 2j) * (2 - 1j) + (3 - 1j) * (1 + 1j)
    xz, yz, rz = x.to(torch.complex128), y.to(torch.complex128), torch.zeros(1, dtype=torch.complex128)
    case, call = call_of(RECORDS["cublas::cublasZdotc_v2"], n=2, x=xz, incx=1, y=yz, incy=1, result=rz)
    RECORDS["cublas::cublasZdotc_v2"].reference(case, call)
    assert complex(rz[0]) == (1 - 2j) * (2 - 1j) + (3 + 1j) * (1 + 1j)


def test_csyrkex_rejects_conjugate_transpose():
    spec = RECORDS["cublas::cublasCsyrkEx"]
    assert {case.params["trans"] for case in spec.public} == {0, 1}
    C = torch.zeros(1, dtype=torch.complex64)
    case, call = call_of(
        spec,
        uplo=0,
        trans=2,
        n=1,
        k=1,
        alpha=1.0,
        A=torch.ones(1, dtype=torch.complex64),
        Atype=8,
        lda=1,
        beta=0.0,
        C=C,
        Ctype=8,
        ldc=1,
    )
    with pytest.raises(ValueError):
        spec.reference(case, call)


def test_sdgmm_left_and_right():
    spec = RECORDS["cublas::cublasSdgmm"]
    A = torch.tensor([1.0, 2.0, 3.0, 4.0])  # [[1, 3], [2, 4]]
    x = torch.tensor([10.0, 0.0, 100.0])  # incx 2: (10, 100)
    C = torch.zeros(4)
    case, call = call_of(spec, mode=0, m=2, n=2, A=A, lda=2, x=x, incx=2, C=C, ldc=2)
    spec.reference(case, call)
    assert C.tolist() == [10.0, 200.0, 30.0, 400.0]
    case, call = call_of(spec, mode=1, m=2, n=2, A=A, lda=2, x=x, incx=2, C=C, ldc=2)
    spec.reference(case, call)
    assert C.tolist() == [10.0, 20.0, 300.0, 400.0]


def test_strided_batched_gemm_leaves_gaps_between_entries():
    spec = RECORDS["cublas::cublasSgemmStridedBatched"]
    A = torch.tensor([2.0, -1.0, 3.0])  # entries 1x1 at offsets 0 and 2
    B = torch.tensor([5.0, -1.0, 7.0])
    C = torch.tensor([1.0, 42.0, 1.0])
    case, call = call_of(
        spec,
        transa="N",
        transb="N",
        m=1,
        n=1,
        k=1,
        alpha=1.0,
        A=A,
        lda=1,
        strideA=2,
        B=B,
        ldb=1,
        strideB=2,
        beta=1.0,
        C=C,
        ldc=1,
        strideC=2,
        batchCount=2,
    )
    spec.reference(case, call)
    assert C.tolist() == [11.0, 42.0, 22.0]


def test_pointer_array_gemv_updates_each_entry():
    spec = RECORDS["cublas::cublasDgemvBatched"]
    matrices = [torch.tensor([1.0, 2.0], dtype=torch.float64), torch.tensor([3.0, 4.0], dtype=torch.float64)]
    xs = [torch.tensor([1.0], dtype=torch.float64), torch.tensor([2.0], dtype=torch.float64)]
    ys = [torch.zeros(2, dtype=torch.float64), torch.zeros(2, dtype=torch.float64)]
    case, call = call_of(
        spec,
        trans="N",
        m=2,
        n=1,
        alpha=1.0,
        Aarray=matrices,
        lda=2,
        xarray=xs,
        incx=1,
        beta=0.0,
        yarray=ys,
        incy=1,
        batchCount=2,
    )
    spec.reference(case, call)
    assert [y.tolist() for y in ys] == [[1.0, 2.0], [6.0, 8.0]]


def test_triangular_inputs_are_diagonally_dominant():
    spec = RECORDS["cublas::cublasStrsm_v2"]
    case = next(case for case in spec.public if case.params["m"] == 64 and case.params["uplo"] == 0)
    call = spec.make_inputs(case, torch.Generator().manual_seed(0))
    matrix = blas_memory.matrix_view(call.args[7], 64, 64, case.params["lda"]).double().tril()
    diagonal = matrix.diagonal().abs()
    off = matrix.abs().sum(dim=1) - diagonal
    assert bool((diagonal > off).all())


# --- on a CUDA device: the ctypes baseline agrees with the reference (run by the lead on the H200) ---------


def _to_device(value, device: torch.device):
    if isinstance(value, torch.Tensor):
        return value.to(device)  # every buffer here is a whole contiguous storage: .to keeps the layout
    if isinstance(value, list):
        return [_to_device(item, device) for item in value]
    return value


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device with cuBLAS")
@pytest.mark.parametrize("operator_id", sorted(RECORDS))
def test_cublas_baseline_matches_reference_on_gpu(operator_id):
    spec = RECORDS[operator_id]
    device = torch.device("cuda")
    assert load_cublas() is not None, "libcublas not found"
    for case in spec.smoke + spec.public[:6]:
        built = spec.make_inputs(case, torch.Generator().manual_seed(11))
        for_reference = Call(args=[_to_device(arg, device) for arg in built.args])
        for_baseline = Call(args=[_to_device(arg, device) for arg in built.args])
        spec.reference(case, for_reference)
        thunk = spec.baseline(case, for_baseline)
        assert thunk is not None, f"{spec.name}: symbol missing from libcublas"
        thunk()
        torch.cuda.synchronize()
        expected = compared(spec, case, for_reference)
        actual = compared(spec, case, for_baseline)
        for index, (got, want) in enumerate(zip(actual, expected, strict=True)):
            atol, rtol = spec.tolerance(case, index, want.dtype)
            if want.dtype == torch.float16:
                atol, rtol = max(atol, 1e-2), 1e-2  # Hgemm computes in fp16; the reference rounds once
            label = case.case_id
            torch.testing.assert_close(got, want, atol=atol, rtol=rtol, msg=lambda m, label=label: f"{label}: {m}")


def test_zswap_exchanges_both_vectors():
    spec = RECORDS["cublas::cublasZswap_v2"]
    x = torch.tensor([1 + 1j, 9j, 2 + 2j], dtype=torch.complex128)  # incx 2: (1+1j, 2+2j)
    y = torch.tensor([5.0 + 0j, 6.0 + 0j], dtype=torch.complex128)
    case, call = call_of(spec, n=2, x=x, incx=2, y=y, incy=1)
    spec.reference(case, call)
    assert x.tolist() == [5 + 0j, 9j, 6 + 0j]
    assert y.tolist() == [1 + 1j, 2 + 2j]
