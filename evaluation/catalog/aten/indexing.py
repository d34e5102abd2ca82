"""ATen indexing, gather/scatter and im2col-style operators. Index tensors are int64 and in range; writes
without accumulation never target one element twice (torch leaves the winner unspecified)."""

from __future__ import annotations

import random

import torch

from evaluation.catalog.aten._build import (
    FLOAT_DTYPES,
    case,
    distinct_indices,
    entry,
    itemsize,
    numel,
    random_indices,
    record,
    tensor,
)
from evaluation.catalog.inputs import make_tensor, random_permutations
from evaluation.catalog.rounding import Staged, summed, unit_roundoff
from evaluation.catalog.spec import Call, Case, OperatorSpec

UNIQUE_NOTE = (
    "Without accumulate, the written positions are distinct (drawn from a random permutation), so the "
    "result is unique; with accumulate, repeats are allowed and reduce_dim is 10 for float32 (a few sums "
    "per element) and 100 for bfloat16 (the reference rounds its running sum to bfloat16 at every add)."
)


def _index_list(params: dict, generator: torch.Generator) -> list[torch.Tensor | None]:
    """Indices for index / index_put_: ``rows`` [i], ``elements`` [i, j], ``cols`` [None, j]."""
    rows, cols = params["shape"]
    count, mode = params["count"], params["mode"]
    unique = not params.get("accumulate", False) and params.get("unique", True)
    if mode == "rows":
        return [distinct_indices(count, rows, generator) if unique else random_indices([count], rows, generator)]
    if mode == "cols":
        return [None, distinct_indices(count, cols, generator) if unique else random_indices([count], cols, generator)]
    flat = (
        distinct_indices(count, rows * cols, generator) if unique else random_indices([count], rows * cols, generator)
    )
    return [flat // cols, flat % cols]


def _values_shape(params: dict) -> list[int]:
    rows, cols = params["shape"]
    count = params["count"]
    return {"rows": [count, cols], "cols": [rows, count], "elements": [count]}[params["mode"]]


def _index_put_inputs(case_: Case, generator: torch.Generator) -> Call:
    params = case_.params
    self_ = tensor(params, generator)
    indices = _index_list(params, generator)
    values = make_tensor(_values_shape(params), params["dtype"], generator)
    args = [self_, indices, values, params["accumulate"]]
    if case_.entry_point == "_index_put_impl_":
        args.append(False)  # unsafe: the caller does not promise in-range indices
    return Call(args)


def _index_put_cases(entry_point: str, shapes_counts, dtypes) -> tuple[Case, ...]:
    cases = []
    for shape, count in shapes_counts:
        for mode in ("rows", "elements", "cols"):
            for dtype in dtypes:
                cases.append(
                    case(
                        entry_point,
                        shape=shape,
                        count=min(count, _limit(shape, mode)),
                        mode=mode,
                        dtype=dtype,
                        accumulate=False,
                    )
                )
            # Repeats are the point of accumulate, but a bounded number of them: "cols" of [100000, 64] with
            # 30000 indices asked for 3e9 values (12 GB of float32), more than a judge host can ship to a
            # sandbox (the H200 run of 2026-11-29 lost its sandbox there). Four per position on average.
            for dtype in ("float32", "bfloat16"):
                cases.append(
                    case(
                        entry_point,
                        shape=shape,
                        count=min(count, 4 * _limit(shape, mode)),
                        mode=mode,
                        dtype=dtype,
                        accumulate=True,
                        reduce_dim=_accumulate_reduce_dim(dtype),
                    )
                )
    cases.append(
        case(
            entry_point,
            shape=shapes_counts[-1][0],
            count=3,
            mode="rows",
            dtype="float32",
            accumulate=False,
            layout="transposed",
        )
    )
    return tuple(cases)


def _accumulate_reduce_dim(dtype: str) -> int:
    """A few sums per element; a bfloat16 reference rounds its running sum at every add (ulp 2^-6 near 4), so
    its atol must cover that: reduce_dim 100 (atol 0.01) for bfloat16, 10 for float32."""
    return 100 if dtype == "bfloat16" else 10


def _limit(shape, mode) -> int:
    rows, cols = shape
    return {"rows": rows, "cols": cols, "elements": rows * cols}[mode]


def _index_put_held_out(entry_point: str):
    def draw(rng: random.Random) -> list[Case]:
        cases = []
        for _ in range(4):
            shape = [rng.randint(1, 4000), rng.randint(1, 1000)]
            mode = rng.choice(["rows", "elements", "cols"])
            accumulate = rng.random() < 0.5
            dtype = rng.choice(("float32", "bfloat16") if accumulate else FLOAT_DTYPES)
            cases.append(
                case(
                    entry_point,
                    shape=shape,
                    mode=mode,
                    accumulate=accumulate,
                    count=rng.randint(1, _limit(shape, mode)),
                    dtype=dtype,
                    reduce_dim=_accumulate_reduce_dim(dtype) if accumulate else 1,
                )
            )
        return cases

    return draw


def _index_put_bytes(case_: Case) -> int:
    params = case_.params
    return 3 * numel(_values_shape(params)) * itemsize(params["dtype"])


INDEX_PUT_NOTE = (
    "In place: self is compared after the call (not the return). indices is a list whose entries "
    "are int64 tensors or None (None takes the whole dimension); values broadcast to the indexed "
    "shape; accumulate=True adds into self instead of assigning."
)
SMOKE_INDEX_SHAPES = (([8, 17], 5), ([33, 4], 12))
PUBLIC_INDEX_SHAPES = (([1024, 1024], 500), ([100000, 64], 30000), ([64, 100000], 60))

INDEX_PUT_ = record(
    "index_put_",
    "self[indices] = values (or += with accumulate), in place.",
    [
        entry(
            "aten::index_put_(Tensor(a!) self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor(a!)",
            mutates=(0,),
            compare_return=False,
        )
    ],
    make_inputs=_index_put_inputs,
    smoke=_index_put_cases("index_put_", SMOKE_INDEX_SHAPES, ("float32", "float16")),
    public=_index_put_cases("index_put_", PUBLIC_INDEX_SHAPES, FLOAT_DTYPES),
    held_out=_index_put_held_out("index_put_"),
    bytes_moved=_index_put_bytes,
    judgement_notes=UNIQUE_NOTE,
    prompt_notes=INDEX_PUT_NOTE,
)

_INDEX_PUT_IMPL_ = record(
    "_index_put_impl_",
    "The kernel behind index_put_: self[indices] = values (or +=), in place.",
    [
        entry(
            "aten::_index_put_impl_(Tensor(a!) self, Tensor?[] indices, Tensor values, bool accumulate=False, "
            "bool unsafe=False) -> Tensor(a!)",
            mutates=(0,),
            compare_return=False,
        )
    ],
    make_inputs=_index_put_inputs,
    smoke=_index_put_cases("_index_put_impl_", SMOKE_INDEX_SHAPES, ("float32", "float16")),
    public=_index_put_cases("_index_put_impl_", PUBLIC_INDEX_SHAPES, FLOAT_DTYPES),
    held_out=_index_put_held_out("_index_put_impl_"),
    bytes_moved=_index_put_bytes,
    judgement_notes=UNIQUE_NOTE,
    prompt_notes=INDEX_PUT_NOTE + " unsafe is always False.",
)


def _index_inputs(case_: Case, generator: torch.Generator) -> Call:
    params = case_.params
    return Call([tensor(params, generator), _index_list(params, generator)])


def _index_cases(shapes_counts, dtypes) -> tuple[Case, ...]:
    cases = [
        case("index_Tensor", shape=shape, count=count, mode=mode, dtype=dtype, unique=False)
        for shape, count in shapes_counts
        for mode in ("rows", "elements", "cols")
        for dtype in dtypes
    ]
    cases += [
        case(
            "index_Tensor",
            shape=shapes_counts[-1][0],
            count=7,
            mode="rows",
            dtype="float32",
            unique=False,
            layout=layout,
        )
        for layout in ("transposed", "strided")
    ]
    return tuple(cases)


INDEX = record(
    "index",
    "Advanced indexing self[indices] with a list of int64 index tensors (None keeps a dimension).",
    [entry("aten::index.Tensor(Tensor self, Tensor?[] indices) -> Tensor")],
    make_inputs=_index_inputs,
    smoke=_index_cases(SMOKE_INDEX_SHAPES, ("float32", "float16")),
    public=_index_cases(PUBLIC_INDEX_SHAPES, FLOAT_DTYPES),
    held_out=lambda rng: [
        case(
            "index_Tensor",
            shape=[rng.randint(1, 4000), rng.randint(1, 1000)],
            count=rng.randint(1, 50000),
            mode=rng.choice(["rows", "elements", "cols"]),
            dtype=rng.choice(FLOAT_DTYPES),
            unique=False,
        )
        for _ in range(4)
    ],
    bytes_moved=lambda c: 2 * numel(_values_shape(c.params)) * itemsize(c.params["dtype"]),
    judgement_notes="Exact gather of values (compared with the protocol's rule). Indices may repeat.",
    prompt_notes="indices is a list of int64 tensors or None; the indexed dims of the result come first when the "
    "index tensors are adjacent (torch's advanced-indexing rules).",
)


# --- embedding / gather / index_select ------------------------------------------------------------------------


def _embedding_inputs(case_: Case, generator: torch.Generator) -> Call:
    params = case_.params
    vocab, width = params["weight"]
    weight = make_tensor([vocab, width], params["dtype"], generator, layout=params.get("layout", "contiguous"))
    return Call([weight, random_indices(params["indices"], vocab, generator), params["padding_idx"]])


EMBEDDING = record(
    "embedding",
    "Rows of weight picked by integer indices (an embedding lookup).",
    [
        entry(
            "aten::embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, bool scale_grad_by_freq=False, "
            "bool sparse=False) -> Tensor"
        )
    ],
    make_inputs=_embedding_inputs,
    smoke=tuple(
        case("embedding", weight=w, indices=i, dtype=d, padding_idx=-1)
        for w, i in (([10, 16], [7]), ([33, 5], [3, 4]))
        for d in ("float32", "float16")
    )
    + (case("embedding", weight=[10, 16], indices=[2, 5], dtype="float32", padding_idx=0, layout="transposed"),),
    public=tuple(
        case("embedding", weight=w, indices=i, dtype=d, padding_idx=-1)
        for w, i in (([50000, 1024], [64, 512]), ([32000, 4096], [4096]), ([1000, 1], [1000, 1000]))
        for d in FLOAT_DTYPES
    ),
    held_out=lambda rng: [
        case(
            "embedding",
            weight=[rng.randint(1, 60000), rng.randint(1, 2048)],
            indices=[rng.randint(1, 64), rng.randint(1, 1024)],
            dtype=rng.choice(FLOAT_DTYPES),
            padding_idx=-1,
        )
        for _ in range(4)
    ],
    bytes_moved=lambda c: 2 * numel(c.params["indices"]) * c.params["weight"][1] * itemsize(c.params["dtype"]),
    judgement_notes="Exact copy of rows. padding_idx only matters for the backward; the forward ignores it.",
    prompt_notes="indices is int64 of any shape; the result has shape indices.shape + (weight.size(1),).",
)


def _gather_inputs(case_: Case, generator: torch.Generator) -> Call:
    params = case_.params
    self_ = tensor(params, generator)
    dim = params["dim"]
    index = random_indices(params["index_shape"], params["shape"][dim], generator)
    return Call([self_, dim, index])


GATHER = record(
    "gather",
    "out[i][j] = self[index[i][j]][j] (dim 0) / self[i][index[i][j]] (dim 1), and so on.",
    [entry("aten::gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor")],
    make_inputs=_gather_inputs,
    smoke=tuple(
        case("gather", shape=s, index_shape=i, dim=dim, dtype=d)
        for s, i, dim in (([4, 17], [4, 5], 1), ([4, 17], [9, 17], 0), ([2, 3, 5], [2, 3, 2], 2))
        for d in ("float32", "float16")
    )
    + (case("gather", shape=[4, 17], index_shape=[3, 20], dim=1, dtype="float32", layout="transposed"),)
    # The public grid gathers along the middle dim of a 3-d input: neither the first nor the last.
    + (case("gather", shape=[3, 7, 2], index_shape=[3, 4, 2], dim=1, dtype="float32"),),
    public=tuple(
        case("gather", shape=s, index_shape=i, dim=dim, dtype=d)
        for s, i, dim in (
            ([4096, 256], [4096, 64], 1),
            ([4096, 256], [8192, 256], 0),
            ([200, 40999, 3], [200, 1000, 3], 1),
            ([1024, 1024], [1024, 1024], 1),
        )
        for d in FLOAT_DTYPES
    )
    + (case("gather", shape=[1024, 1024], index_shape=[1024, 512], dim=1, dtype="float32", layout="transposed"),),
    held_out=lambda rng: [
        case(
            "gather",
            shape=[r, c],
            index_shape=[rng.randint(1, r), rng.randint(1, 3000)],
            dim=1,
            dtype=rng.choice(FLOAT_DTYPES),
        )
        for r, c in ((rng.randint(1, 3000), rng.randint(1, 3000)) for _ in range(4))
    ],
    bytes_moved=lambda c: numel(c.params["index_shape"]) * (2 * itemsize(c.params["dtype"]) + 8),
    judgement_notes="Exact gather (compared with the protocol's rule).",
    prompt_notes="index is int64 with index.size(d) <= self.size(d) for d != dim (it may be larger along dim); the "
    "result has index's shape.",
)


def _index_select_inputs(case_: Case, generator: torch.Generator) -> Call:
    params = case_.params
    dim = params["dim"]
    return Call([tensor(params, generator), dim, random_indices([params["count"]], params["shape"][dim], generator)])


INDEX_SELECT = record(
    "index_select",
    "The entries of self along dim at the positions in a 1-D int64 index.",
    [entry("aten::index_select(Tensor self, int dim, Tensor index) -> Tensor")],
    make_inputs=_index_select_inputs,
    smoke=tuple(
        case("index_select", shape=s, dim=dim, count=n, dtype=d)
        for s, dim, n in (([4, 17], 0, 6), ([4, 17], 1, 5), ([2, 3, 5], 2, 9))
        for d in ("float32", "float16")
    )
    + (case("index_select", shape=[4, 17], dim=1, count=5, dtype="float32", layout="strided"),)
    # The public grid selects along the middle dim of a 3-d input: neither the first nor the last.
    + (case("index_select", shape=[3, 7, 2], dim=1, count=4, dtype="float32"),),
    public=tuple(
        case("index_select", shape=s, dim=dim, count=n, dtype=d)
        for s, dim, n in (
            ([4096, 256], 0, 2000),
            ([4096, 256], 1, 300),
            ([200, 40999, 3], 1, 1000),
            ([100000, 128], 0, 65536),
        )
        for d in FLOAT_DTYPES
    ),
    held_out=lambda rng: [
        case(
            "index_select",
            shape=[rng.randint(1, 5000), rng.randint(1, 1000)],
            dim=dim,
            count=rng.randint(1, 5000),
            dtype=rng.choice(FLOAT_DTYPES),
        )
        for dim in (rng.randint(0, 1) for _ in range(4))
    ],
    judgement_notes="Exact copy (compared with the protocol's rule); indices may repeat.",
)


# --- scatter ------------------------------------------------------------------------------------------------


def _scatter_inputs(case_: Case, generator: torch.Generator) -> Call:
    """Along dim, the indices of one line are distinct (a prefix of a random permutation): no write conflicts."""
    params = case_.params
    self_ = tensor(params, generator)
    dim = params["dim"]
    index_shape = list(params["index_shape"])
    full = list(index_shape)
    full[dim] = params["shape"][dim]
    permutations = random_permutations(full, dim, generator)
    index = permutations.narrow(dim, 0, index_shape[dim]).contiguous()
    if case_.entry_point == "scatter_value":
        return Call([self_, dim, index, params["value"]])
    return Call([self_, dim, index, make_tensor(params["src_shape"], params["dtype"], generator)])


def _scatter_cases(entry_point: str, geometries, dtypes) -> tuple[Case, ...]:
    extra = {"value": -111.999} if entry_point == "scatter_value" else {}
    cases = []
    for shape, index_shape, dim in geometries:
        for dtype in dtypes:
            if entry_point == "scatter_src":
                extra = {"src_shape": [size + 1 for size in index_shape]}
            cases.append(case(entry_point, shape=shape, index_shape=index_shape, dim=dim, dtype=dtype, **extra))
    return tuple(cases)


SCATTER_SMOKE = (([4, 17], [3, 5], 0), ([4, 17], [4, 9], 1), ([2, 3, 5], [2, 2, 5], 1))
SCATTER_PUBLIC = (([4096, 256], [2048, 256], 0), ([4096, 256], [4096, 100], 1), ([200, 4099, 3], [200, 1000, 3], 1))

SCATTER = record(
    "scatter",
    "A copy of self with src (scatter.src) or value (scatter.value) written at index along dim.",
    [
        entry("aten::scatter.src(Tensor self, int dim, Tensor index, Tensor src) -> Tensor"),
        entry("aten::scatter.value(Tensor self, int dim, Tensor index, Scalar value) -> Tensor"),
    ],
    make_inputs=_scatter_inputs,
    smoke=_scatter_cases("scatter_src", SCATTER_SMOKE, ("float32", "float16"))
    + _scatter_cases("scatter_value", SCATTER_SMOKE[:2], ("float32",)),
    public=_scatter_cases("scatter_src", SCATTER_PUBLIC, FLOAT_DTYPES)
    + _scatter_cases("scatter_value", SCATTER_PUBLIC, FLOAT_DTYPES),
    held_out=lambda rng: [
        case(
            "scatter_src",
            shape=[r, c],
            index_shape=[rng.randint(1, r), c],
            dim=0,
            src_shape=[r, c],
            dtype=rng.choice(FLOAT_DTYPES),
        )
        for r, c in ((rng.randint(1, 3000), rng.randint(1, 3000)) for _ in range(4))
    ],
    bytes_moved=lambda c: 2 * numel(c.params["shape"]) * itemsize(c.params["dtype"]),
    judgement_notes="Exact. Indices of one line along dim are distinct (a random permutation prefix), so no element "
    "is written twice; src is larger than index (only its index-shaped corner is read).",
    prompt_notes="Out of place: returns a new tensor; src may be larger than index in every dim.",
)


# --- im2col / affine_grid_generator ----------------------------------------------------------------------------


def _im2col_inputs(case_: Case, generator: torch.Generator) -> Call:
    params = case_.params
    return Call(
        [tensor(params, generator), params["kernel_size"], params["dilation"], params["padding"], params["stride"]]
    )


def _im2col_case(shape, kernel, dilation, padding, stride, dtype, **extra) -> Case:
    return case(
        "im2col",
        shape=shape,
        kernel_size=kernel,
        dilation=dilation,
        padding=padding,
        stride=stride,
        dtype=dtype,
        **extra,
    )


IM2COL = record(
    "im2col",
    "Unfold: sliding kernel-size blocks of a (N, C, H, W) input as columns (N, C*kh*kw, L).",
    [entry("aten::im2col(Tensor self, int[2] kernel_size, int[2] dilation, int[2] padding, int[2] stride) -> Tensor")],
    make_inputs=_im2col_inputs,
    smoke=(
        _im2col_case([1, 2, 5, 6], [2, 2], [1, 1], [0, 0], [1, 1], "float32"),
        _im2col_case([2, 3, 7, 7], [3, 3], [1, 1], [1, 1], [2, 2], "float16"),
        _im2col_case([1, 1, 8, 9], [2, 3], [2, 1], [1, 0], [1, 2], "float32", layout="transposed"),
    ),
    public=tuple(
        _im2col_case(s, k, d, p, st, dt)
        for dt in FLOAT_DTYPES
        for s, k, d, p, st in (
            ([32, 64, 56, 56], [3, 3], [1, 1], [1, 1], [1, 1]),
            ([8, 3, 224, 224], [7, 7], [1, 1], [3, 3], [2, 2]),
            ([16, 128, 28, 30], [3, 2], [2, 2], [0, 1], [2, 1]),
        )
    ),
    held_out=lambda rng: [
        _im2col_case(
            [rng.randint(1, 8), rng.randint(1, 64), rng.randint(8, 64), rng.randint(8, 64)],
            [rng.randint(1, 4), rng.randint(1, 4)],
            [1, rng.randint(1, 2)],
            [rng.randint(0, 2), rng.randint(0, 2)],
            [rng.randint(1, 3), rng.randint(1, 3)],
            rng.choice(FLOAT_DTYPES),
        )
        for _ in range(4)
    ],
    judgement_notes="Exact copy with zero padding (compared with the protocol's rule).",
    prompt_notes="Positions in the zero padding contribute 0; L = number of block positions, row-major over the "
    "output height and width.",
)


def _affine_inputs(case_: Case, generator: torch.Generator) -> Call:
    params = case_.params
    size = params["size"]
    rows = 2 if len(size) == 4 else 3
    theta = make_tensor([size[0], rows, rows + 1], params["dtype"], generator, low=-1.0, high=1.0)
    return Call([theta, list(size), params["align_corners"]])


def _base_coordinates(steps: int, align_corners: bool, dtype: torch.dtype, device: torch.device) -> Staged:
    """ATen's linspace_from_neg_one in ``dtype``: every value its implementations give, each within a unit
    roundoff (another order of the same fp32 steps may round to the other neighbour), as a range. linspace
    counts from either end; CUDA computes ``start + step * i`` in float32 and rounds once, the CPU rounds
    the step, the step times the index and the sum to the dtype; then ``* (steps - 1)`` and ``/ steps`` are
    half ops, each rounding its result, unless align_corners."""
    if steps <= 1:
        return Staged.exact(torch.zeros(steps, dtype=torch.float64, device=device), dtype)

    def rounded(value: torch.Tensor) -> torch.Tensor:
        return value.to(dtype).to(torch.float64)

    index = torch.arange(steps, dtype=torch.float64, device=device)
    from_end = index >= steps // 2
    counted = torch.where(from_end, steps - 1 - index, index)
    sign = torch.where(from_end, -1.0, 1.0)  # -1 + step * i, or 1 - step * (steps - 1 - i)
    exact = -sign + sign * 2.0 * counted / (steps - 1)
    step32 = torch.tensor(2.0 / (steps - 1), dtype=torch.float32, device=device).double()
    on_cuda = rounded((-sign + sign * (step32 * counted).float().double()).float().double())
    step = rounded(torch.tensor(2.0 / (steps - 1), dtype=torch.float64, device=device))
    on_cpu = rounded(-sign + sign * rounded(step * rounded(counted)))
    candidates = [exact, on_cuda, on_cpu]
    if not align_corners:
        candidates = [exact * (steps - 1) / steps] + [
            rounded(rounded(value * (steps - 1)) / steps) for value in (on_cuda, on_cpu)
        ]
    stacked = torch.stack(candidates)
    unit = unit_roundoff(dtype)
    low, high = stacked.min(dim=0).values, stacked.max(dim=0).values
    low, high = low - unit * low.abs(), high + unit * high.abs()
    return Staged((low + high) / 2, (high - low) / 2, unit)


def _affine_grid_staged(case: Case, call: Call):
    """The range the grid can take where ATen's base coordinates round to the dtype (the judge's
    ``exact_formula``): the coordinates are built by half ops (linspace, then the scale), and the dot product
    with theta accumulates in float32 (CUDA's bmm) or in the dtype (the CPU's). The reference computes the
    coordinates in float32 and rounds once; an honest half kernel rebuilding them as eager does was 0.0007
    from it on 1 % of a smoke case, where the atol is 0.0003."""
    theta, size, align_corners = call.args
    dtype = theta.dtype
    spatial = list(size[2:])  # (H, W) or (D, H, W); the base grid's columns are x (W), y (H), z (D), 1
    coordinates = []
    for axis in range(len(spatial) - 1, -1, -1):
        shape = [1] * len(spatial)
        shape[axis] = spatial[axis]
        along = _base_coordinates(spatial[axis], align_corners, dtype, theta.device)
        coordinates.append(Staged(along.value.view(shape), along.error.view(shape), along.unit))
    batch = [theta.size(0)] + [1] * len(spatial)
    outputs = []
    for row in range(theta.size(1)):
        weights = [Staged.exact(theta[:, row, column].view(batch), dtype) for column in range(theta.size(2))]
        pairs = zip(weights[:-1], coordinates, strict=True)
        products = [(weight * coordinate).rounded() for weight, coordinate in pairs]
        outputs.append(summed([*products, weights[-1]]))  # the last column multiplies 1: exact
    low, high = (torch.stack(ends, dim=-1) for ends in zip(*(output.bounds() for output in outputs), strict=True))
    shape = [theta.size(0), *spatial, theta.size(1)]
    return ((low.expand(shape), high.expand(shape)),)


AFFINE_GRID_GENERATOR = record(
    "affine_grid_generator",
    "The sampling grid of affine_grid: base coordinates in [-1, 1] times theta^T.",
    [entry("aten::affine_grid_generator(Tensor theta, SymInt[] size, bool align_corners) -> Tensor")],
    make_inputs=_affine_inputs,
    half_in_float32=True,  # ATen's CPU kernel rounds the base grid's product in half
    smoke=tuple(
        case("affine_grid_generator", size=s, dtype=d, align_corners=a, reduce_dim=3)
        for s in ([2, 3, 4, 5], [1, 1, 2, 3, 4])
        for d in ("float32", "float16")
        for a in (False, True)
    ),
    public=tuple(
        case("affine_grid_generator", size=s, dtype=d, align_corners=a, reduce_dim=3)
        for s in ([32, 3, 224, 224], [8, 1, 1024, 1000], [4, 1, 64, 64, 64])
        for d in FLOAT_DTYPES
        for a in (False, True)
    ),
    held_out=lambda rng: [
        case(
            "affine_grid_generator",
            size=[rng.randint(1, 16), 3, rng.randint(1, 512), rng.randint(1, 512)],
            dtype=rng.choice(FLOAT_DTYPES),
            align_corners=rng.random() < 0.5,
            reduce_dim=3,
        )
        for _ in range(4)
    ],
    bytes_moved=lambda c: (
        numel(c.params["size"][:1] + c.params["size"][2:]) * (len(c.params["size"]) - 2) * itemsize(c.params["dtype"])
    ),
    exact_formula=_affine_grid_staged,
    exact_formula_why=(
        "ATen builds the base coordinates with half ops (linspace, then the scale by (n - 1) / n), each rounding "
        "its result, and the coordinates after the dot product with theta are small where its terms cancel: a "
        "value within the range that rounding the coordinates and the dot product's steps to the dtype can give "
        "passes (an honest fp16 kernel rebuilding the coordinates as eager does was 0.0007 from the float32 "
        "answer, atol 0.0003)"
    ),
    judgement_notes="allclose, reduce_dim 3 (each coordinate is a 3- or 4-term dot product).",
    prompt_notes="size is (N, C, H, W) -> grid (N, H, W, 2), or (N, C, D, H, W) -> (N, D, H, W, 3); base "
    "coordinates are linspace(-1, 1, n), scaled by (n - 1) / n unless align_corners.",
)

OPERATORS: list[OperatorSpec] = [
    _INDEX_PUT_IMPL_,
    EMBEDDING,
    GATHER,
    INDEX,
    INDEX_PUT_,
    INDEX_SELECT,
    SCATTER,
    IM2COL,
    AFFINE_GRID_GENERATOR,
]
