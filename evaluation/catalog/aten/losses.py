"""ATen losses, activation backwards and shape backwards (bce_with_logits, huber, smooth_l1 backward, prelu,
select_backward, reflection_pad1d_backward, upsample_nearest2d_backward, ...)."""

from __future__ import annotations

import random
from collections.abc import Callable

import torch

from evaluation.catalog.aten._build import FLOAT_DTYPES, case, draw_shape, entry, itemsize, numel, record, tensor
from evaluation.catalog.inputs import make_tensor
from evaluation.catalog.rounding import Staged, unit_roundoff
from evaluation.catalog.spec import Call, Case, OperatorSpec

SMOKE_SHAPES = ([33], [4, 17], [2, 3, 5])
PUBLIC_SHAPES = ([1024, 1024], [20, 320, 15], [16, 128, 64, 60])
REDUCTIONS = (0, 1, 2)  # none, mean, sum (torch's Reduction enum)
REDUCTION_NOTE = (
    "reduction is an int: 0 none (elementwise result), 1 mean, 2 sum (a 0-d result); reduce_dim is "
    "the number of summed elements for 2, 1 for 0 and 1 (a mean, and a correct kernel's error in it, do not "
    "grow with the count)."
)


def _reduce_dim(shape: list[int], reduction: int) -> int:
    """atol = 1e-4 x this: a sum's error grows with its length, a mean's does not (scaled like the sum, a mean
    loss over a million values passed anywhere within 105 of the answer: a kernel dividing twice passed)."""
    return numel(shape) if reduction == 2 else 1


LAYOUTS3 = ("contiguous", "transposed", "strided")

ArgsBuilder = Callable[[dict, torch.Generator], list]


def _inputs(build: ArgsBuilder) -> Callable[[Case, torch.Generator], Call]:
    def make_inputs(case_: Case, generator: torch.Generator) -> Call:
        return Call(build(case_.params, generator))

    return make_inputs


def _pm_one(params: dict, generator: torch.Generator) -> torch.Tensor:
    """A target of -1 / +1 in the case's dtype."""
    signs = torch.randint(0, 2, tuple(params["shape"]), generator=generator) * 2 - 1
    return signs.to(getattr(torch, params["dtype"]))


def _reduced_cases(name: str, shapes, dtypes, reduction_values=REDUCTIONS, **extra) -> tuple[Case, ...]:
    cases = [
        case(name, shape=s, dtype=d, reduction=r, reduce_dim=_reduce_dim(s, r), **extra)
        for s in shapes
        for d in dtypes
        for r in reduction_values
    ]
    cases += [
        case(name, shape=shapes[-1], dtype="float32", reduction=1, layout=lay, **extra)
        for lay in ("transposed", "strided")
    ]
    return tuple(cases)


def _reduced_held_out(name: str, **extra):
    def draw(rng: random.Random) -> list[Case]:
        cases = []
        for _ in range(4):
            shape = draw_shape(rng)
            reduction = rng.choice(REDUCTIONS)
            cases.append(
                case(
                    name,
                    shape=shape,
                    dtype=rng.choice(FLOAT_DTYPES),
                    reduction=reduction,
                    layout=rng.choice(LAYOUTS3),
                    reduce_dim=_reduce_dim(shape, reduction),
                    **extra,
                )
            )
        return cases

    return draw


def _elementwise_cases(name: str, shapes, dtypes, **extra) -> tuple[Case, ...]:
    cases = [case(name, shape=s, dtype=d, **extra) for s in shapes for d in dtypes]
    cases += [case(name, shape=shapes[-1], dtype="float32", layout=lay, **extra) for lay in ("transposed", "strided")]
    return tuple(cases)


def _elementwise_held_out(name: str, **extra):
    return lambda rng: [
        case(name, shape=draw_shape(rng), dtype=rng.choice(FLOAT_DTYPES), layout=rng.choice(LAYOUTS3), **extra)
        for _ in range(4)
    ]


def _bytes(factor: int) -> Callable[[Case], int]:
    return lambda c: factor * numel(c.params["shape"]) * itemsize(c.params["dtype"])


# --- losses -------------------------------------------------------------------------------------------------


def _bce_args(params: dict, generator: torch.Generator) -> list:
    logits = tensor(params, generator, low=-6.0, high=6.0)
    target = tensor(params, generator, low=0.0, high=1.0, layout="contiguous")
    weight = (
        make_tensor(params["shape"][-1:], params["dtype"], generator, low=0.5, high=2.0)
        if params.get("weighted")
        else None
    )
    pos_weight = (
        make_tensor(params["shape"][-1:], params["dtype"], generator, low=0.5, high=3.0)
        if params.get("weighted")
        else None
    )
    return [logits, target, weight, pos_weight, params["reduction"]]


def _bce_staged(case: Case, call: Call):
    """The range ATen's composite answer can take when each of its steps rounds to the dtype (the judge's
    ``exact_formula``): Loss.cpp's log_sigmoid, (pos_weight - 1) * target + 1, (1 - target) * input, the
    subtraction and the weight, each an op rounding its result. log_sigmoid is a transcendental computed in
    fp32 whose rounding to half may go either way next to a midpoint (a GPU's log and ATen's land apart), and
    after the subtraction's cancellation that one unit of a value near 6 is a large share of a loss near
    0.01: on the H200 an honest kernel staging exactly as ATen does sat 0.003 from it on 7 % of a 1024 x 1024
    fp16 case."""
    logits, target, weight, pos_weight, reduction = call.args
    dtype = logits.dtype
    x, y = Staged.exact(logits, dtype), Staged.exact(target, dtype)
    log_sigmoid = Staged.exact(torch.nn.functional.logsigmoid(logits.double()), dtype).rounded()
    if pos_weight is not None:
        log_weight = ((((Staged.exact(pos_weight, dtype) - 1.0).rounded()) * y).rounded() + 1.0).rounded()
        log_sigmoid = (log_sigmoid * log_weight).rounded()
    loss = ((((1.0 - y).rounded()) * x).rounded() - log_sigmoid).rounded()
    if weight is not None:
        loss = (loss * Staged.exact(weight, dtype)).rounded()
    if reduction:
        loss = loss.total(mean=reduction == 1).rounded()
    return (loss.bounds(),)


BINARY_CROSS_ENTROPY_WITH_LOGITS = record(
    "binary_cross_entropy_with_logits",
    "Binary cross-entropy on logits, optionally weighted (weight, pos_weight).",
    [
        entry(
            "aten::binary_cross_entropy_with_logits(Tensor self, Tensor target, Tensor? weight=None, "
            "Tensor? pos_weight=None, int reduction=1) -> Tensor"
        )
    ],
    make_inputs=_inputs(_bce_args),
    half_in_float32=True,  # ATen's CPU kernel rounds its intermediates in half
    composite_in_aten=True,  # Loss.cpp: log_sigmoid, mul_, sub_, each rounded in half on CUDA too
    exact_formula=_bce_staged,
    exact_formula_why=(
        "ATen's answer rounds each step of its composite formula to the dtype, and the step of log_sigmoid may "
        "round either way next to a midpoint: after the subtraction's cancellation that one unit is a large "
        "share of a small loss, so a value within the range that rounding each step to nearest can give passes "
        "(an honest fp16 kernel staging as ATen does was 0.003 from CUDA's answer on 7 % of a 1024 x 1024 "
        "case on the H200)"
    ),
    smoke=_reduced_cases("binary_cross_entropy_with_logits", SMOKE_SHAPES[1:], ("float32", "float16"))
    + (case("binary_cross_entropy_with_logits", shape=[4, 17], dtype="float32", reduction=0, weighted=True),),
    public=_reduced_cases("binary_cross_entropy_with_logits", PUBLIC_SHAPES, FLOAT_DTYPES)
    + (
        case(
            "binary_cross_entropy_with_logits",
            shape=[1024, 1024],
            dtype="float32",
            reduction=1,
            weighted=True,
        ),
    ),
    held_out=_reduced_held_out("binary_cross_entropy_with_logits"),
    bytes_moved=_bytes(2),
    judgement_notes=REDUCTION_NOTE,
    prompt_notes="loss = -w [pos_weight * y * log sigmoid(x) + (1 - y) log(1 - sigmoid(x))], computed stably; "
    "weight and pos_weight (when given) broadcast over the last dim. " + REDUCTION_NOTE,
)

HUBER_LOSS = record(
    "huber_loss",
    "Huber loss: 0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta), d = self - target.",
    [entry("aten::huber_loss(Tensor self, Tensor target, int reduction=1, float delta=1.) -> Tensor")],
    make_inputs=_inputs(lambda p, g: [tensor(p, g), tensor(p, g, layout="contiguous"), p["reduction"], p["delta"]]),
    smoke=_reduced_cases("huber_loss", SMOKE_SHAPES, ("float32", "float16"), delta=1.0)
    + _reduced_cases("huber_loss", SMOKE_SHAPES[1:2], ("float32",), (0,), delta=0.5),
    public=_reduced_cases("huber_loss", PUBLIC_SHAPES, FLOAT_DTYPES, delta=1.0)
    + _reduced_cases("huber_loss", PUBLIC_SHAPES[:1], FLOAT_DTYPES, (0, 1), delta=2.5),
    held_out=_reduced_held_out("huber_loss", delta=1.0),
    bytes_moved=_bytes(2),
    judgement_notes=REDUCTION_NOTE,
    prompt_notes=REDUCTION_NOTE,
)

MARGIN_RANKING_LOSS = record(
    "margin_ranking_loss",
    "max(0, -target * (input1 - input2) + margin), target in {-1, 1}.",
    [
        entry(
            "aten::margin_ranking_loss(Tensor input1, Tensor input2, Tensor target, float margin=0., "
            "int reduction=1) -> Tensor"
        )
    ],
    make_inputs=_inputs(
        lambda p, g: [tensor(p, g), tensor(p, g, layout="contiguous"), _pm_one(p, g), p["margin"], p["reduction"]]
    ),
    half_in_float32=True,  # ATen's CPU kernel rounds its intermediates in half
    composite_in_aten=True,  # Loss.cpp: (-target * (input1 - input2) + margin).clamp_min_(0), op by op
    smoke=_reduced_cases("margin_ranking_loss", SMOKE_SHAPES[:2], ("float32", "float16"), margin=0.5),
    public=_reduced_cases("margin_ranking_loss", PUBLIC_SHAPES, FLOAT_DTYPES, margin=0.5)
    + _reduced_cases("margin_ranking_loss", PUBLIC_SHAPES[:1], ("float32",), margin=0.0),
    held_out=_reduced_held_out("margin_ranking_loss", margin=0.25),
    bytes_moved=_bytes(3),
    judgement_notes=REDUCTION_NOTE,
    prompt_notes=REDUCTION_NOTE,
)

SOFT_MARGIN_LOSS = record(
    "soft_margin_loss",
    "log(1 + exp(-target * self)), target in {-1, 1}.",
    [entry("aten::soft_margin_loss(Tensor self, Tensor target, int reduction=1) -> Tensor")],
    make_inputs=_inputs(lambda p, g: [tensor(p, g), _pm_one(p, g), p["reduction"]]),
    smoke=_reduced_cases("soft_margin_loss", SMOKE_SHAPES[:2], ("float32", "float16")),
    public=_reduced_cases("soft_margin_loss", PUBLIC_SHAPES, FLOAT_DTYPES),
    held_out=_reduced_held_out("soft_margin_loss"),
    bytes_moved=_bytes(2),
    judgement_notes=REDUCTION_NOTE,
    prompt_notes=REDUCTION_NOTE,
)


def _smooth_l1_backward_args(params: dict, generator: torch.Generator) -> list:
    grad_shape = params["shape"] if params["reduction"] == 0 else []
    grad = make_tensor(grad_shape, params["dtype"], generator)
    return [
        grad,
        tensor(params, generator),
        tensor(params, generator, layout="contiguous"),
        params["reduction"],
        params["beta"],
    ]


SMOOTH_L1_LOSS_BACKWARD = record(
    "smooth_l1_loss_backward",
    "Gradient of smooth L1 loss with respect to self.",
    [
        entry(
            "aten::smooth_l1_loss_backward(Tensor grad_output, Tensor self, Tensor target, int reduction, "
            "float beta) -> Tensor"
        )
    ],
    make_inputs=_inputs(_smooth_l1_backward_args),
    smoke=tuple(
        case("smooth_l1_loss_backward", shape=s, dtype=d, reduction=r, beta=b)
        for s in SMOKE_SHAPES[1:]
        for d in ("float32", "float16")
        for r in REDUCTIONS
        for b in (1.0,)
    )
    + (case("smooth_l1_loss_backward", shape=[4, 17], dtype="float32", reduction=0, beta=0.0),),
    public=tuple(
        case("smooth_l1_loss_backward", shape=s, dtype=d, reduction=r, beta=b)
        for s in PUBLIC_SHAPES
        for d in FLOAT_DTYPES
        for r in REDUCTIONS
        for b in (1.0, 0.5)
    ),
    held_out=lambda rng: [
        case(
            "smooth_l1_loss_backward",
            shape=draw_shape(rng),
            dtype=rng.choice(FLOAT_DTYPES),
            reduction=rng.choice(REDUCTIONS),
            beta=round(rng.uniform(0.1, 2), 2),
        )
        for _ in range(4)
    ],
    bytes_moved=_bytes(3),
    judgement_notes="allclose, reduce_dim 1 (elementwise; the mean divides by numel).",
    prompt_notes="grad_output is a 0-d tensor for reduction 1 (mean: divide by numel) and 2 (sum), elementwise for "
    "0; beta = 0 means plain L1 (sign).",
)


# --- activation backwards -----------------------------------------------------------------------------------


def _log_sigmoid_backward_args(params: dict, generator: torch.Generator) -> list:
    x = tensor(params, generator, low=-8.0, high=8.0)
    _, buffer = torch.ops.aten.log_sigmoid_forward.default(x)
    return [tensor(params, generator, layout="contiguous"), x, buffer]


LOG_SIGMOID_BACKWARD = record(
    "log_sigmoid_backward",
    "Gradient of log(sigmoid(x)): grad_output * sigmoid(-x).",
    [entry("aten::log_sigmoid_backward(Tensor grad_output, Tensor self, Tensor buffer) -> Tensor")],
    make_inputs=_inputs(_log_sigmoid_backward_args),
    smoke=_elementwise_cases("log_sigmoid_backward", SMOKE_SHAPES, ("float32", "float16", "bfloat16")),
    public=_elementwise_cases("log_sigmoid_backward", PUBLIC_SHAPES, FLOAT_DTYPES),
    held_out=_elementwise_held_out("log_sigmoid_backward"),
    bytes_moved=_bytes(3),
    prompt_notes="buffer is the CPU forward's scratch (on GPUs it may be empty): compute from self only.",
)

MISH_BACKWARD = record(
    "mish_backward",
    "Gradient of mish(x) = x tanh(softplus(x)).",
    [entry("aten::mish_backward(Tensor grad_output, Tensor self) -> Tensor")],
    make_inputs=_inputs(lambda p, g: [tensor(p, g, layout="contiguous"), tensor(p, g, low=-6.0, high=6.0)]),
    smoke=_elementwise_cases("mish_backward", SMOKE_SHAPES, ("float32", "float16", "bfloat16")),
    public=_elementwise_cases("mish_backward", PUBLIC_SHAPES, FLOAT_DTYPES),
    held_out=_elementwise_held_out("mish_backward"),
    bytes_moved=_bytes(3),
)

SOFTPLUS_BACKWARD = record(
    "softplus_backward",
    "Gradient of softplus(x, beta, threshold): grad * sigmoid(beta x) (grad where beta x > threshold).",
    [entry("aten::softplus_backward(Tensor grad_output, Tensor self, Scalar beta, Scalar threshold) -> Tensor")],
    make_inputs=_inputs(
        lambda p, g: [tensor(p, g, layout="contiguous"), tensor(p, g, low=-25.0, high=25.0), p["beta"], p["threshold"]]
    ),
    smoke=_elementwise_cases("softplus_backward", SMOKE_SHAPES, ("float32", "float16"), beta=1.0, threshold=20.0)
    + (case("softplus_backward", shape=[4, 17], dtype="float32", beta=2.0, threshold=5.0),),
    public=_elementwise_cases("softplus_backward", PUBLIC_SHAPES, FLOAT_DTYPES, beta=1.0, threshold=20.0)
    + tuple(case("softplus_backward", shape=[1024, 1024], dtype=d, beta=0.5, threshold=3.0) for d in FLOAT_DTYPES),
    held_out=lambda rng: [
        case(
            "softplus_backward",
            shape=draw_shape(rng),
            dtype=rng.choice(FLOAT_DTYPES),
            beta=round(rng.uniform(0.25, 4), 2),
            threshold=round(rng.uniform(1, 20), 1),
        )
        for _ in range(4)
    ],
    bytes_moved=_bytes(3),
)


def _prelu_args(params: dict, generator: torch.Generator) -> list:
    channels = params["shape"][1] if params["per_channel"] else 1
    return [tensor(params, generator), make_tensor([channels], params["dtype"], generator, low=0.0, high=0.5)]


PRELU = record(
    "prelu",
    "x where x >= 0 else weight * x, with one weight per channel (dim 1) or a single weight.",
    [entry("aten::prelu(Tensor self, Tensor weight) -> Tensor")],
    make_inputs=_inputs(_prelu_args),
    smoke=tuple(
        case("prelu", shape=s, dtype=d, per_channel=pc)
        for s in ([4, 17], [2, 3, 5])
        for d in ("float32", "float16")
        for pc in (True, False)
    )
    + (case("prelu", shape=[2, 3, 5], dtype="float32", per_channel=True, layout="strided"),),
    public=tuple(
        case("prelu", shape=s, dtype=d, per_channel=pc)
        for s in ([1024, 1024], [20, 320, 15], [16, 128, 64, 60])
        for d in FLOAT_DTYPES
        for pc in (True, False)
    )
    + (case("prelu", shape=[16, 128, 64, 60], dtype="float32", per_channel=True, layout="transposed"),),
    held_out=lambda rng: [
        case(
            "prelu", shape=draw_shape(rng, rank=(2, 4)), dtype=rng.choice(FLOAT_DTYPES), per_channel=rng.random() < 0.5
        )
        for _ in range(4)
    ],
    bytes_moved=_bytes(2),
    prompt_notes="weight has self.size(1) elements (or 1); the channel dim is 1.",
)


def _rrelu_backward_args(params: dict, generator: torch.Generator) -> list:
    x = tensor(params, generator, away_from_zero=1e-3)
    noise = make_tensor(params["shape"], params["dtype"], generator, low=params["lower"], high=params["upper"])
    noise = torch.where(x > 0, torch.ones_like(noise), noise)
    return [
        tensor(params, generator, layout="contiguous"),
        x,
        noise,
        params["lower"],
        params["upper"],
        params["training"],
        False,
    ]


RRELU_WITH_NOISE_BACKWARD = record(
    "rrelu_with_noise_backward",
    "Gradient of rrelu_with_noise: grad * noise in training, the leaky-ReLU gradient "
    "with slope (lower + upper) / 2 otherwise.",
    [
        entry(
            "aten::rrelu_with_noise_backward(Tensor grad_output, Tensor self, Tensor noise, Scalar lower, "
            "Scalar upper, bool training, bool self_is_result) -> Tensor"
        )
    ],
    make_inputs=_inputs(_rrelu_backward_args),
    smoke=tuple(
        case("rrelu_with_noise_backward", shape=s, dtype=d, lower=0.125, upper=1 / 3, training=t)
        for s in SMOKE_SHAPES[1:]
        for d in ("float32", "bfloat16")
        for t in (True, False)
    ),
    public=tuple(
        case("rrelu_with_noise_backward", shape=s, dtype=d, lower=0.125, upper=1 / 3, training=t)
        for s in PUBLIC_SHAPES
        for d in FLOAT_DTYPES
        for t in (True, False)
    ),
    held_out=lambda rng: [
        case(
            "rrelu_with_noise_backward",
            shape=draw_shape(rng),
            dtype=rng.choice(FLOAT_DTYPES),
            lower=0.1,
            upper=0.3,
            training=rng.random() < 0.5,
        )
        for _ in range(4)
    ],
    bytes_moved=_bytes(4),
    prompt_notes="noise holds the forward's slopes (1 where self > 0); self_is_result is always False.",
)


# --- shape backwards ------------------------------------------------------------------------------------------


def _select_backward_args(params: dict, generator: torch.Generator) -> list:
    sizes, dim = params["input_sizes"], params["dim"]
    grad_shape = [size for axis, size in enumerate(sizes) if axis != dim % len(sizes)]
    return [
        make_tensor(grad_shape, params["dtype"], generator, layout=params.get("layout", "contiguous")),
        list(sizes),
        dim,
        params["index"],
    ]


SELECT_BACKWARD = record(
    "select_backward",
    "Zeros of input_sizes with grad_output written at index along dim.",
    [entry("aten::select_backward(Tensor grad_output, SymInt[] input_sizes, int dim, SymInt index) -> Tensor")],
    make_inputs=_inputs(_select_backward_args),
    smoke=tuple(
        case("select_backward", input_sizes=s, dim=dim, index=i, dtype=d)
        for s, dim, i in (([4, 17], 0, 2), ([4, 17], 1, -1), ([2, 3, 5], 1, 0))
        for d in ("float32", "float16")
    )
    + (case("select_backward", input_sizes=[3, 4, 17], dim=0, index=1, dtype="float32", layout="transposed"),),
    public=tuple(
        case("select_backward", input_sizes=s, dim=dim, index=i, dtype=d)
        for s, dim, i in (([1024, 1024], 0, 511), ([20, 320, 15], 1, -3), ([16, 128, 64, 60], 3, 59))
        for d in FLOAT_DTYPES
    ),
    held_out=lambda rng: [
        case("select_backward", input_sizes=s, dim=0, index=rng.randrange(s[0]), dtype=rng.choice(FLOAT_DTYPES))
        for s in (draw_shape(rng, rank=(2, 3)) for _ in range(4))
    ],
    bytes_moved=lambda c: numel(c.params["input_sizes"]) * itemsize(c.params["dtype"]),
    prompt_notes="The result is contiguous with shape input_sizes; everything off the selected slice is 0.",
)


def _reflection_pad1d_backward_args(params: dict, generator: torch.Generator) -> list:
    shape, (left, right) = params["shape"], params["padding"]
    x = tensor(params, generator, layout="contiguous")
    grad = make_tensor(
        [*shape[:-1], shape[-1] + left + right], params["dtype"], generator, layout=params.get("layout", "contiguous")
    )
    return [grad, x, [left, right]]


def _reflection_pad1d_backward_sums(case: Case, call: Call):
    """The range a sum of each input position's terms (itself and up to two mirrors: three where left +
    right padding reaches the width) can take when every partial sum rounds to the dtype, in any order
    (the judge's ``exact_formula``): CUDA's kernel adds them with atomics in the tensor's own dtype, so the
    order, and with three terms the answer, changes from call to call."""
    grad, x, padding = call.args
    exact = torch.ops.aten.reflection_pad1d_backward(grad.double(), x.double(), padding)
    magnitude = torch.ops.aten.reflection_pad1d_backward(grad.double().abs(), x.double(), padding)
    spread = 2 * unit_roundoff(grad.dtype) * 1.001 * magnitude  # two roundings, each within a unit roundoff
    return ((exact - spread, exact + spread),)


REFLECTION_PAD1D_BACKWARD = record(
    "reflection_pad1d_backward",
    "Gradient of reflection_pad1d: padded positions fold back onto their mirror.",
    [entry("aten::reflection_pad1d_backward(Tensor grad_output, Tensor self, SymInt[2] padding) -> Tensor")],
    make_inputs=_inputs(_reflection_pad1d_backward_args),
    smoke=tuple(
        case("reflection_pad1d_backward", shape=s, padding=p, dtype=d, reduce_dim=2)
        for s, p in (([2, 3, 17], [3, 5]), ([4, 9], [8, 0]))
        for d in ("float32", "float16")
    )
    + (
        case(
            "reflection_pad1d_backward",
            shape=[2, 3, 17],
            padding=[2, 2],
            dtype="float32",
            layout="transposed",
            reduce_dim=2,
        ),
    ),
    public=tuple(
        case("reflection_pad1d_backward", shape=s, padding=p, dtype=d, reduce_dim=2)
        for s, p in (([16, 64, 4096], [3, 3]), ([32, 256, 1000], [100, 7]), ([1024, 1024], [512, 1023]))
        for d in FLOAT_DTYPES
    ),
    held_out=lambda rng: [
        case(
            "reflection_pad1d_backward",
            shape=[rng.randint(1, 16), rng.randint(1, 128), w],
            padding=[rng.randint(0, w - 1), rng.randint(0, w - 1)],
            dtype=rng.choice(FLOAT_DTYPES),
            reduce_dim=2,
        )
        for w in (rng.randint(2, 3000) for _ in range(4))
    ],
    bytes_moved=_bytes(3),
    judgement_notes="allclose with reduce_dim 2: each input position receives itself plus one mirror, or two "
    "where left + right padding reaches the width.",
    exact_formula=_reflection_pad1d_backward_sums,
    exact_formula_why=(
        "ATen's CUDA kernel adds an input position's terms with atomics in the tensor's own dtype, in an order "
        "that changes from call to call; with three terms (left + right padding past the width) the half "
        "answer depends on it, so a value that some order of half additions can give passes (an honest fp16 "
        "kernel adding in a fixed order was 2 units off CUDA's answer on 1.3 % of a case on the H200)"
    ),
    prompt_notes="self is the forward's input (only its shape matters); padding = [left, right], each < width.",
)


def _upsample_backward_args(params: dict, generator: torch.Generator) -> list:
    batch, channels, height, width = params["input_size"]
    out_h, out_w = params["output_size"]
    grad = make_tensor(
        [batch, channels, out_h, out_w], params["dtype"], generator, layout=params.get("layout", "contiguous")
    )
    return [grad, [out_h, out_w], [batch, channels, height, width], None, None]


def _upsample_case(input_size, output_size, dtype, **extra) -> Case:
    height, width = input_size[2:]
    fold = -(-output_size[0] // height) * -(-output_size[1] // width)
    return case(
        "upsample_nearest2d_backward",
        input_size=input_size,
        output_size=output_size,
        dtype=dtype,
        reduce_dim=fold,
        **extra,
    )


UPSAMPLE_NEAREST2D_BACKWARD = record(
    "upsample_nearest2d_backward",
    "Gradient of nearest-neighbour 2-D upsampling: each input pixel sums the output gradients that copied it.",
    [
        entry(
            "aten::upsample_nearest2d_backward(Tensor grad_output, SymInt[2] output_size, SymInt[4] input_size, "
            "float? scales_h=None, float? scales_w=None) -> Tensor"
        )
    ],
    make_inputs=_inputs(_upsample_backward_args),
    smoke=tuple(
        _upsample_case(i, o, d)
        for i, o in (([1, 2, 3, 4], [6, 8]), ([2, 1, 5, 3], [7, 4]))
        for d in ("float32", "float16")
    )
    + (_upsample_case([1, 2, 3, 4], [6, 8], "float32", layout="transposed"),),
    public=tuple(
        _upsample_case(i, o, d)
        for i, o in (([8, 64, 64, 64], [128, 128]), ([4, 32, 100, 75], [301, 150]), ([16, 3, 224, 224], [224, 448]))
        for d in FLOAT_DTYPES
    ),
    held_out=lambda rng: [
        _upsample_case(
            [rng.randint(1, 8), rng.randint(1, 32), h, w],
            [h * rng.randint(1, 4) + rng.randint(0, 3), w * rng.randint(1, 4)],
            rng.choice(FLOAT_DTYPES),
        )
        for h, w in ((rng.randint(1, 128), rng.randint(1, 128)) for _ in range(4))
    ],
    bytes_moved=lambda c: 2 * numel(c.params["input_size"][:2] + c.params["output_size"]) * itemsize(c.params["dtype"]),
    judgement_notes="allclose with reduce_dim = ceil(out_h / in_h) * ceil(out_w / in_w), the most output "
    "gradients one input pixel sums.",
    prompt_notes="Output pixel (y, x) copies input (floor(y * in_h / out_h), floor(x * in_w / out_w)) (scales are "
    "None); the result is contiguous (N, C, in_h, in_w).",
)

OPERATORS: list[OperatorSpec] = [
    BINARY_CROSS_ENTROPY_WITH_LOGITS,
    HUBER_LOSS,
    LOG_SIGMOID_BACKWARD,
    MARGIN_RANKING_LOSS,
    MISH_BACKWARD,
    PRELU,
    SMOOTH_L1_LOSS_BACKWARD,
    SOFT_MARGIN_LOSS,
    SOFTPLUS_BACKWARD,
    RRELU_WITH_NOISE_BACKWARD,
    SELECT_BACKWARD,
    REFLECTION_PAD1D_BACKWARD,
    UPSAMPLE_NEAREST2D_BACKWARD,
]
