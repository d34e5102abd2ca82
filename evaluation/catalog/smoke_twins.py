"""Twins of the public grid's cases in the smoke tier, so the CPU interpreter sees what the public grid tests.

The CPU interpreter judges only the smoke tier (the public grid's sizes would take it hours). A bug that lives
in one structure of the public grid (a 0-d operand's shortcut, a middle dim taken for the last, a rank-5 view
flattened as rank 3) or in one of its parameter values (a loss's beta != 1, an increment of 2, a transpose
flag) fails on a GPU and passed CI whenever the hand-written smoke cases had no such case: the third blind
corpus round hid three real bugs that way. Adding cases by hand leaves the next gap to the next bug; this
module derives them.

ATen. A *structure* is what a kernel's addressing and control flow depend on, not the sizes: the entry point,
each size parameter's dims classed 0, 1 or many (ranks and broadcast patterns), where a ``dim`` points (first,
middle, last), and every non-numeric parameter as it is (layouts, modes, ``keepdim``, memory formats). A
*twin* of a public case is that case with its sizes through one map: its distinct sizes over 1, in increasing
order, to consecutive small primes (3, 5, 7, 11, ..., or themselves where smaller), starting late enough that
the twin keeps a few hundred values; so sizes equal in the original (a broadcast's matching dims, a matmul's
inner dims) stay equal, sizes apart stay apart, 0s and 1s stay, offsets stay as far from the end as the
shrunk dim allows. Each record gets a twin of the first public case of every structure its smoke tier lacks,
then of the first public case holding a parameter value (a dtype, a scalar, a range) no smoke case has.

vLLM and cuBLAS. Their sizes carry meaning beyond structure (head sizes, quantisation groups, leading
dimensions), so nothing is shrunk: the twin is the public case itself, the smallest holding a
behaviour-selecting value (a string, a flag, a float such as alpha, an integer up to 8 such as an increment)
no smoke case has, then per size parameter the smallest public case holding a size past every smoke case's
(a second tile, a split reduction's second part, a tail: hand-written smoke sizes often stay under one block),
kept where its inputs hold at most MAX_VERBATIM_ELEMENTS values.

No twin brings bfloat16 (read as float16): the interpreter computes it wrongly (``judge/interpreter_defects``).
Twins whose inputs cannot be built, whose reference refuses them (sizes that had to divide or sum to each
other) or whose outputs lose the public case's outline are dropped, with the reason, and
``scripts/smoke_coverage.py`` lists the structures left uncovered.

Deriving builds every candidate and runs its reference, too slow for every import, so the result is data:
``smoke_twins.json`` beside this file, written by ``scripts/derive_smoke_twins.py``, checked to be current by
``tests/catalog/test_smoke_twins.py``. The registry appends each record's twins to its smoke tier.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from evaluation.catalog.spec import Case, OperatorSpec

TWINS_FILE = Path(__file__).with_name("smoke_twins.json")

# Parameters that hold sizes (a shape, a list of shapes, a size list an op takes as an argument). Every size
# in them goes through the case's one map.
SIZE_KEYS = frozenset(
    {
        "shape",
        "other_shape",
        "mask_shape",
        "src_shape",
        "index_shape",
        "a_shape",
        "b_shape",
        "shapes",
        "batch",
        "lead",
        "mnk",
        "input_size",
        "input_sizes",
        "output_size",
        "size",
        "weight",
        "indices",
        "prepend",
        "append",
        "target",
        "split_sizes",
    }
)
TENSOR_SHAPE_KEYS = frozenset({"shape", "other_shape", "src_shape", "mask_shape", "index_shape", "a_shape", "b_shape"})
# Integer parameters counted in elements of some dim (how many indices, a narrow's length, a split's size):
# mapped with the sizes where their value is one of them, else capped at the largest shrunk size.
COUNT_KEYS = frozenset({"count", "length", "split_size"})
# Offsets into the dim a ``dim`` parameter names (a narrow's start, a select's index): kept within the
# shrunk dim, their sign (counted from the end) and their distance from the end where it fits.
OFFSET_KEYS = frozenset({"start", "index"})
# Shrunk sizes, smallest first: small, mostly odd, so that masks and tails are exercised.
SHRUNK_SIZES = (3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47)
MIN_TWIN_ELEMENTS = 256
# vLLM and cuBLAS twins are public cases as they are: kept where their inputs hold at most this many values.
MAX_VERBATIM_ELEMENTS = 65_536
# Integers up to this size select behaviour in vLLM and cuBLAS records (incx, trans, uplo, k); larger are sizes.
SMALL_INT = 8
# A twin stays cheap for the interpreter: past this many elements in one size parameter it is not derived.
MAX_TWIN_ELEMENTS = 20_000


def _sizes_in(value: Any) -> Iterable[int]:
    if isinstance(value, bool):
        return
    if isinstance(value, int):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _sizes_in(item)


def _size_class(size: int) -> str:
    return "0" if size == 0 else "1" if size == 1 else "n"


def _classed(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, (int, list)):
        return value
    if isinstance(value, int):
        return _size_class(value) if value >= 0 else value  # -1 in a reshape target is structure
    return tuple(_classed(item) for item in value)


def _rank_of_self(params: Mapping[str, Any]) -> int | None:
    shape = params.get("shape")
    if isinstance(shape, list) and all(isinstance(size, int) and not isinstance(size, bool) for size in shape):
        return len(shape)
    return None


def _dim_position(dim: int, rank: int) -> str:
    if rank == 0:
        return "scalar"
    position = dim % rank
    return "first" if position == 0 else "last" if position == rank - 1 else "middle"


def structure(case: Case) -> tuple:
    """What a kernel's addressing depends on: sizes classed 0 / 1 / many, dim positions, non-numeric params."""
    params = case.params
    rank = _rank_of_self(params)
    parts: list[Any] = [case.entry_point]
    for key in sorted(params):
        value = params[key]
        if key in SIZE_KEYS:
            parts.append((key, _classed(value)))
        elif key in ("dim", "dims") and rank is not None:
            dims = value if isinstance(value, list) else [value]
            if all(isinstance(dim, int) and not isinstance(dim, bool) for dim in dims):
                parts.append((key, tuple(_dim_position(dim, rank) for dim in dims)))
            else:
                parts.append((key, repr(value)))
        elif key in ("dtype", "range", "other_range", "away", "other_away") or key in COUNT_KEYS:
            continue  # values, not structure (the hand-written smoke tier covers dtypes)
        elif isinstance(value, (str, bool)) or value is None:
            parts.append((key, value))
    return tuple(parts)


def size_map(case: Case) -> dict[int, int] | None:
    """The case's one map: its distinct sizes over 1, in increasing order, to consecutive entries of
    SHRUNK_SIZES (or themselves where smaller), starting as early as leaves its largest tensor at least
    MIN_TWIN_ELEMENTS values (a value-dependent bug needs enough values to show: 9 values missed a wrong
    branch taken by 23 % of them one time in ten); None when there are more distinct sizes than shrunk ones."""
    sizes = sorted({size for key in SIZE_KEYS & case.params.keys() for size in _sizes_in(case.params[key]) if size > 1})
    if len(sizes) > len(SHRUNK_SIZES):
        return None
    mapping: dict[int, int] = {}
    for start in range(len(SHRUNK_SIZES) - len(sizes) + 1):
        mapping = {size: min(size, shrunk) for size, shrunk in zip(sizes, SHRUNK_SIZES[start:], strict=False)}
        if _largest_tensor(case.params, mapping) >= MIN_TWIN_ELEMENTS:
            break
    return mapping


def _largest_tensor(params: Mapping[str, Any], mapping: Mapping[int, int]) -> int:
    largest = 1
    for key in TENSOR_SHAPE_KEYS & params.keys():
        value = params[key]
        if isinstance(value, list) and all(isinstance(size, int) and not isinstance(size, bool) for size in value):
            largest = max(largest, math.prod(mapping.get(size, size) for size in value))
    return largest


def _mapped(value: Any, mapping: Mapping[int, int]) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return mapping.get(value, value)
    if isinstance(value, list):
        return [_mapped(item, mapping) for item in value]
    return value


def shrink(case: Case) -> Case | None:
    """The case with every size through its map (the case itself where it is already small); None when its
    sizes are too many to map apart or the twin would still be large."""
    mapping = size_map(case)
    if mapping is None:
        return None
    params = _interpretable(case.params)
    for key in SIZE_KEYS & params.keys():
        params[key] = _mapped(params[key], mapping)
    largest = max(mapping.values(), default=1)
    for key in COUNT_KEYS & params.keys():
        value = params[key]
        if isinstance(value, int) and not isinstance(value, bool):
            params[key] = mapping.get(value, min(value, largest))
    _shrink_offsets(case.params, params)
    for key in SIZE_KEYS & params.keys():
        value = params[key]
        if isinstance(value, list) and value and all(isinstance(item, list) for item in value):
            if any(math.prod(item) > MAX_TWIN_ELEMENTS for item in value):
                return None
        elif key in TENSOR_SHAPE_KEYS and math.prod(_sizes_in(value)) > MAX_TWIN_ELEMENTS:
            return None
    twin = Case(
        case.entry_point,
        params,
        reduce_dim=_shrunk_reduce_dim(case, params, mapping),
        timed=False,
        allow_nan=case.allow_nan,
    )
    return twin


def _shrink_offsets(original: Mapping[str, Any], params: dict[str, Any]) -> None:
    sizes = params.get("shape", params.get("input_sizes"))
    old_sizes = original.get("shape", original.get("input_sizes"))
    dim = params.get("dim")
    if not (isinstance(sizes, list) and isinstance(dim, int) and not isinstance(dim, bool) and sizes):
        return
    if not all(isinstance(size, int) for size in sizes):
        return
    size, old_size = sizes[dim % len(sizes)], old_sizes[dim % len(sizes)]
    length = params.get("length", 1)
    for key in OFFSET_KEYS & params.keys():
        value = params[key]
        if not isinstance(value, int) or isinstance(value, bool):
            continue
        if value < 0:
            params[key] = max(value, -size)
        else:  # as far from the end as before where the shrunk dim allows it
            from_end = old_size - length - value
            params[key] = max(0, min(value, size - length - min(from_end, size - length)))


def _shrunk_reduce_dim(case: Case, params: Mapping[str, Any], mapping: Mapping[int, int]) -> int:
    """The tolerance's reduction length on the twin: a size maps with the sizes, a size key's product with it."""
    reduce_dim = case.reduce_dim
    if reduce_dim in mapping:
        return mapping[reduce_dim]
    for key in SIZE_KEYS & case.params.keys():
        sizes = list(_sizes_in(case.params[key]))
        if sizes and math.prod(sizes) == reduce_dim:
            return max(1, math.prod(_sizes_in(params[key])))
    return reduce_dim


def values(case: Case) -> set[tuple[str, str, str]]:
    """The case's parameter values that are not sizes, offsets or dims (dtypes, scalars, ranges, modes)."""
    skipped = SIZE_KEYS | COUNT_KEYS | OFFSET_KEYS | {"dim", "dims"}
    return {
        (case.entry_point, key, json.dumps(value, sort_keys=True))
        for key, value in _interpretable(case.params).items()
        if key not in skipped
    }


def _interpretable(params: Mapping[str, Any]) -> dict[str, Any]:
    """``params`` with bfloat16 read as float16: Triton's CPU interpreter computes bf16 wrongly (conversions
    truncate, values held as their bits: ``judge/interpreter_defects.py``), so a twin never brings bf16 in;
    the hand-written cases keep it where the interpreter handles the kernel's bf16."""
    return {key: "float16" if value == "bfloat16" else value for key, value in params.items()}


def flag_values(case: Case) -> set[tuple[str, str, str]]:
    """A vLLM or cuBLAS case's values that select behaviour rather than size: strings, booleans, floats
    (alpha, beta, epsilon) and small integers (increments, transposes, fill modes, a band's width)."""

    def selects_behaviour(value: Any) -> bool:
        if isinstance(value, (bool, str, float)) or value is None:
            return True
        return isinstance(value, int) and -SMALL_INT <= value <= SMALL_INT

    return {
        (case.entry_point, key, json.dumps(value, sort_keys=True))
        for key, value in _interpretable(case.params).items()
        if selects_behaviour(value)
    }


def _size_proxy(case: Case) -> int:
    """The product of a case's positive integers: orders cases by size without building them."""
    product = 1
    for value in case.params.values():
        for size in _sizes_in(value):
            product *= max(size, 1)
    return product


def _verbatim_twin(case: Case) -> Case:
    """A vLLM or cuBLAS public case as a smoke case: its sizes as they are, bf16 read as fp16, untimed."""
    return Case(case.entry_point, _interpretable(case.params), case.reduce_dim, False, case.allow_nan)


def _largest_sizes(cases: Iterable[Case]) -> dict[tuple[str, str], int]:
    """Per (entry point, parameter), the largest size (an integer past SMALL_INT) any of ``cases`` holds."""
    largest: dict[tuple[str, str], int] = {}
    for case in cases:
        for key, value in case.params.items():
            sizes = [size for size in _sizes_in(value) if size > SMALL_INT]
            if sizes:
                slot = (case.entry_point, key)
                largest[slot] = max(largest.get(slot, 0), *sizes)
    return largest


def _outgrown(case: Case, smoke_largest: Mapping[tuple[str, str], int]) -> set[tuple[str, str]]:
    """The (entry point, parameter)s of ``case`` holding a size past every smoke case's."""
    return {slot for slot, size in _largest_sizes([case]).items() if size > smoke_largest.get(slot, SMALL_INT)}


def candidate_twins(spec: OperatorSpec) -> list[tuple[Case, Case]]:
    """(public case, its twin). ATen: first for the first public case of each structure the smoke tier
    lacks, then for the first public case holding a parameter value no smoke case has (a dtype, a scalar
    such as a loss's beta, a mode): a bug of the formula at beta != 1 hides from a tier that only passes 1.
    vLLM and cuBLAS, whose sizes carry meaning beyond structure (head sizes, quantisation groups, leading
    dimensions) and cannot be shrunk: the public case itself, the smallest of a few hundred values or more
    holding a behaviour-selecting value no smoke case has (an increment, a transpose, alpha = 0)."""
    if spec.source != "aten":
        seen = set().union(*(flag_values(case) for case in spec.smoke))
        found = []
        by_size = sorted(spec.public, key=lambda case: (_size_proxy(case) < MIN_TWIN_ELEMENTS, _size_proxy(case)))
        for case in by_size:
            if flag_values(case) <= seen:
                continue
            seen |= flag_values(case)
            found.append((case, _verbatim_twin(case)))
        # Then sizes past the smoke tier's: a kernel's second tile, a split reduction's second part and a
        # tail mask only run once a size outgrows one block, and hand-written smoke sizes often stay under
        # the smallest block (16-32). Per size parameter, the smallest public case past every smoke value.
        smoke_largest = _largest_sizes(spec.smoke)
        outgrown = set().union(*(_outgrown(twin, smoke_largest) for _, twin in found))
        for case in by_size:
            grown = _outgrown(case, smoke_largest)
            if not grown - outgrown:
                continue
            outgrown |= grown
            found.append((case, _verbatim_twin(case)))
        return found
    covered = {structure(case) for case in spec.smoke}
    seen_values = set().union(*(values(case) for case in spec.smoke))
    found = []
    for case in spec.public:
        key = structure(case)
        if key in covered:
            continue
        twin = shrink(case)
        if twin is None or structure(twin) != key:
            continue
        covered.add(key)
        seen_values |= values(twin)
        found.append((case, twin))
    for case in spec.public:
        if values(case) <= seen_values:
            continue
        twin = shrink(case)
        if twin is None:
            continue
        seen_values |= values(twin)
        found.append((case, twin))
    return found


def load_twins() -> dict[str, tuple[Case, ...]]:
    """The derived twins by operator id (empty where the file is missing, as in a checkout mid-derivation)."""
    if not TWINS_FILE.exists():
        return {}
    data = json.loads(TWINS_FILE.read_text())
    return {
        operator_id: tuple(
            Case(
                item["entry_point"],
                item["params"],
                reduce_dim=item.get("reduce_dim", 1),
                timed=False,
                allow_nan=item.get("allow_nan", False),
            )
            for item in items
        )
        for operator_id, items in data["twins"].items()
    }


def outline(spec: OperatorSpec, case: Case) -> tuple:
    """What the reference gives for ``case``: per output its dtype and dims classed 0 / 1 / many."""
    import torch  # the catalog's records import torch anyway; kept local so the module's data path is light

    call = spec.make_inputs(case, torch.Generator().manual_seed(0))
    returned = spec.reference(case, call)
    parts: list[Any] = []
    for output in spec.outputs_of(case, call, returned):
        if isinstance(output, torch.Tensor):
            parts.append((_dtype_name(output), tuple(_size_class(size) for size in output.shape)))
        elif isinstance(output, (list, tuple)):
            parts.append(tuple((_dtype_name(item), tuple(_size_class(size) for size in item.shape)) for item in output))
        else:
            parts.append(type(output).__name__)
    return tuple(parts)


def _input_values(call: Any) -> int:
    import torch

    stack, total = [call.args, call.kwargs], 0
    while stack:
        value = stack.pop()
        if isinstance(value, torch.Tensor):
            total += value.numel()
        elif isinstance(value, (list, tuple)):
            stack.extend(value)
        elif isinstance(value, dict):
            stack.extend(value.values())
    return total


def _dtype_name(tensor: Any) -> str:
    name = str(tensor.dtype).removeprefix("torch.")
    return "float16" if name == "bfloat16" else name  # a twin reads bf16 as fp16 (``_interpretable``)


def derive(spec: OperatorSpec) -> tuple[list[Case], dict[str, str]]:
    """The twins of ``spec`` that build and keep their public case's outline; why the others were dropped."""
    import torch

    kept: list[Case] = []
    dropped: dict[str, str] = {}
    for public, twin in candidate_twins(spec):
        verbatim = dict(twin.params) == _interpretable(public.params)
        try:
            expected = None if verbatim else outline(spec, public)
        except Exception as exc:  # a public case the CPU cannot run (a CUDA-only reference): nothing to match
            dropped[twin.case_id] = f"the public case's reference does not run on the CPU ({type(exc).__name__})"
            continue
        try:
            found = outline(spec, twin)
            size = _input_values(spec.make_inputs(twin, torch.Generator().manual_seed(0)))
        except Exception as exc:  # sizes that had to divide or sum to each other, an offset past a shrunk dim
            message = str(exc).splitlines()[0][:200] if str(exc) else ""
            dropped[twin.case_id] = f"{type(exc).__name__}: {message}"
            continue
        if expected is not None and found != expected:
            dropped[twin.case_id] = f"outline {found} is not the public case's {expected}"
            continue
        if verbatim and size > MAX_VERBATIM_ELEMENTS:
            dropped[twin.case_id] = f"{size} input values, too many for the interpreter"
            continue
        kept.append(twin)
    return kept, dropped


def derive_all(report: Any = None) -> dict[str, Any]:
    """Every operator's twins and drops, as ``smoke_twins.json`` holds them; ``report`` gets each drop."""
    from evaluation.catalog.registry import records_as_written

    twins: dict[str, list[dict[str, Any]]] = {}
    drops: dict[str, dict[str, str]] = {}
    for operator_id, spec in records_as_written().items():
        kept, dropped = derive(spec)
        if kept:
            twins[operator_id] = [
                {key: value for key, value in case.to_json().items() if key not in ("case_id", "timed")}
                for case in kept
            ]
        if dropped:
            drops[operator_id] = dropped
        if report is not None:
            for case_id, reason in dropped.items():
                report(f"{operator_id}: dropped {case_id}: {reason}")
    return {"twins": twins, "dropped": drops}
