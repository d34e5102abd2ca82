"""ATen random operators (bernoulli, exponential_, poisson, rrelu_with_noise), judged statistically.

No two implementations draw the same random numbers, so outputs are not compared with the reference's. Each
record's ``stat_check`` looks at one call's outputs: dtype and shape, support (0/1, >= 0, integers, a slope
range), standardised moments within 5 sigma of theory for the sample size, calibration per bin of the input
parameter (so an output that is a fixed function of the input fails), and the lag-1 autocorrelation of the
standardised residuals (so a repeating pattern fails). The judge additionally calls twice with the same inputs
and requires the two outputs to differ (a check one call cannot make).

Each statistic is a sum of many terms, and "5 sigma" means a tail probability of exp(-25 / 2) per side. Where
the terms are bounded (Bernoulli draws, uniform slopes), that bound comes from Bennett's inequality, not from
the normal curve: a sum of skewed terms has a far longer tail than the normal curve gives it. bernoulli.p at
p = 0.001 over 96,000 elements holds ~96 ones, and each pair of neighbouring ones moves the lag-1
autocorrelation by ~0.01; two such pairs (a 0.4 % chance) crossed the normal 5-sigma line of 0.016, so the
reference itself failed about one case in 300, and an honest kernel failed on the H200. Bennett's bound is
valid for any distribution within the bound and equals the normal one where the terms are not skewed (p = 0.5
moves it by under 1 %). Where a side of the terms is unbounded (exponential draws, Poisson counts) that side
keeps the normal line.
"""

from __future__ import annotations

import math

import torch

from evaluation.catalog.aten._build import FLOAT_DTYPES, case, draw_shape, entry, itemsize, numel, record, tensor
from evaluation.catalog.spec import Call, Case, OperatorSpec

SIGMAS = 5.0
SMOKE_SHAPES = ([4096], [64, 65], [8, 16, 33])
PUBLIC_SHAPES = ([1024, 1024], [20, 320, 15], [16, 128, 64, 60])
STAT_NOTES = (
    "Statistical (no two generators agree): one call's outputs must have the reference's dtype and shape, "
    "the right support, standardised mean and second moment within 5 sigma of theory for the sample "
    "size, calibration within 5 sigma in each of 5 bins of the input parameter, and |lag-1 "
    "autocorrelation| of the residuals below 5/sqrt(n). Where the draws are bounded and skewed (bernoulli at "
    "p near 0 or 1), each 5-sigma line is Bennett's bound for that tail probability instead of the normal "
    "curve's. The judge also requires two calls to differ."
)


def _out_bytes(case_: Case) -> int:
    return 2 * numel(case_.params["shape"]) * itemsize(case_.params["dtype"])


def bennett_deviation(variance: float, bound: float, sigmas: float = SIGMAS) -> float:
    """How far above its mean a sum of independent terms (or of a martingale's increments) may lie before
    Bennett's inequality puts the chance under exp(-sigmas**2 / 2): ``variance`` is the sum's, and no term
    exceeds its mean by more than ``bound``. It is sigmas * sqrt(variance), the normal line, when ``bound`` is
    small against the sum's spread, and grows where a few large terms can carry the sum (skewed draws).
    ``bound`` math.inf or 0: the normal line."""
    if variance <= 0.0:
        return 0.0
    spread = math.sqrt(variance)
    if not math.isfinite(bound) or bound <= 0.0:
        return sigmas * spread
    # P(sum - mean >= t) <= exp(-(variance / bound**2) * h(bound * t / variance)), h(u) = (1 + u) ln(1 + u) - u.
    scale, target = variance / bound**2, sigmas**2 / 2

    def exponent(u: float) -> float:
        h = u * u / 2 - u**3 / 6 + u**4 / 12 if u < 1e-3 else (1 + u) * math.log1p(u) - u
        return scale * h

    low, high = 0.0, sigmas * bound / spread  # the normal line's u, where h(u) ~ u**2 / 2 or less
    while exponent(high) < target:
        low, high = high, high * 2
    for _ in range(100):
        middle = (low + high) / 2
        low, high = (middle, high) if exponent(middle) < target else (low, middle)
    return high * variance / bound


def _within(
    name: str,
    value: float,
    expected: float,
    sd: float,
    above: float = math.inf,
    below: float = math.inf,
    count: int = 1,
) -> str | None:
    """``value`` (a sum's mean over ``count`` terms with standard deviation ``sd``) within 5 sigma of
    ``expected``: by Bennett's bound on each side where its terms exceed their mean by at most ``above``
    (fall short by at most ``below``), else by the normal line."""
    variance = (sd * count) ** 2
    high = bennett_deviation(variance, above * 1.0) / count
    low = bennett_deviation(variance, below * 1.0) / count
    deviation = value - expected
    if not math.isfinite(value) or deviation > high + 1e-12 or -deviation > low + 1e-12:
        normal = SIGMAS * sd
        if math.isclose(high, normal, rel_tol=0.01) and math.isclose(low, normal, rel_tol=0.01):
            return f"{name} is {value:.6g}, expected {expected:.6g} +- {SIGMAS:g} * {sd:.3g}"
        return (
            f"{name} is {value:.6g}, expected {expected:.6g} within +{high:.3g} / -{low:.3g} "
            f"({SIGMAS:g} sigma by Bennett's bound for terms this skewed)"
        )
    return None


def _same_layout(out: torch.Tensor, like: torch.Tensor) -> str | None:
    if not isinstance(out, torch.Tensor):
        return f"expected a tensor, got {type(out).__name__}"
    if out.dtype != like.dtype:
        return f"dtype {out.dtype} differs from the expected {like.dtype}"
    if tuple(out.shape) != tuple(like.shape):
        return f"shape {tuple(out.shape)} differs from the expected {tuple(like.shape)}"
    return None


def _autocorrelation(residuals: torch.Tensor, z_low: float = -math.inf, z_high: float = math.inf) -> str | None:
    """The lag-1 autocorrelation of ``residuals`` near 0. ``z_low`` and ``z_high``: the least and the most a
    residual can be (unbounded by default), which bound each neighbour product's excursion."""
    flat = residuals.reshape(-1)
    n = flat.numel()
    if n < 3:
        return None
    mean = flat.mean()
    centred = flat - mean
    denominator = float((centred * centred).sum())
    if denominator == 0.0:
        return "the residuals are constant (no randomness)"
    lag1 = float((centred[:-1] * centred[1:]).sum()) / denominator
    # Each product c[i] * c[i+1] has mean 0 given the past; the largest it can be is the larger square of the
    # extremes, the most negative the product of the two.
    low, high = z_low - float(mean), z_high - float(mean)
    above = max(low * low, high * high)
    below = -low * high if low < 0 < high else math.inf
    return _within("lag-1 autocorrelation", lag1, 0.0, 1.0 / math.sqrt(n - 1), above, below, n - 1)


def _standardised_checks(
    z: torch.Tensor,
    z4: torch.Tensor,
    bins_of: torch.Tensor | None,
    z_low: float = -math.inf,
    z_high: float = math.inf,
) -> str | None:
    """z: residuals with mean 0 and variance 1 per element; z4: E[z^4] per element (for var of z^2);
    ``z_low`` / ``z_high``: the least and the most any residual can be, where the distribution bounds them
    (Bennett's bound on that side; the normal line where unbounded)."""
    n = z.numel()
    if n == 0:
        return None
    error = _within("standardised mean", float(z.mean()), 0.0, 1.0 / math.sqrt(n), z_high, -z_low, n)
    square_high = max(z_low * z_low, z_high * z_high)
    error = error or _within(
        "standardised second moment",
        float((z * z).mean()),
        1.0,
        math.sqrt(float((z4 - 1.0).clamp_min(0).sum())) / n,
        square_high - 1.0,
        1.0,
        n,
    )
    if error is None and bins_of is not None:
        parameter = bins_of.reshape(-1).double()
        edges = torch.linspace(float(parameter.min()), float(parameter.max()), 6, dtype=torch.float64, device=z.device)
        bucket = torch.bucketize(parameter, edges[1:-1])
        for index in range(5):
            members = z.reshape(-1)[bucket == index]
            if members.numel() >= 30:
                error = error or _within(
                    f"standardised mean in parameter bin {index}",
                    float(members.mean()),
                    0.0,
                    1.0 / math.sqrt(members.numel()),
                    z_high,
                    -z_low,
                    members.numel(),
                )
    return error or _autocorrelation(z, z_low, z_high)


# --- bernoulli ----------------------------------------------------------------------------------------------


def _bernoulli_inputs(case_: Case, generator: torch.Generator) -> Call:
    params = case_.params
    if case_.entry_point == "bernoulli_p":
        return Call([tensor(params, generator), params["p"]])
    return Call([tensor(params, generator, low=0.05, high=0.95)])


def _bernoulli_check(case_: Case, call: Call, outputs: tuple) -> str | None:
    self_ = call.args[0]
    (out,) = outputs
    error = _same_layout(out, self_)
    if error:
        return error
    values = out.double()
    if not bool(((values == 0) | (values == 1)).all()):
        return "bernoulli outputs must be 0 or 1"
    p = torch.full_like(values, float(call.args[1])) if case_.entry_point == "bernoulli_p" else self_.double()
    variance = p * (1 - p)
    z = (values - p) / variance.sqrt()
    z4 = ((1 - p) ** 3 + p**3) / variance  # E[z^4] of a standardised Bernoulli(p)
    # A one stands at sqrt((1 - p) / p), a zero at -sqrt(p / (1 - p)): bounded, and skewed where p is near 0 or 1.
    z_high, z_low = float(((1 - p) / variance.sqrt()).max()), float((-p / variance.sqrt()).min())
    return _standardised_checks(z, z4, p if case_.entry_point == "bernoulli" else None, z_low, z_high)


BERNOULLI = record(
    "bernoulli",
    "Draws 0/1 per element: with probability self (bernoulli) or p (bernoulli.p) of a 1.",
    [
        entry("aten::bernoulli(Tensor self, *, Generator? generator=None) -> Tensor"),
        entry("aten::bernoulli.p(Tensor self, float p, *, Generator? generator=None) -> Tensor"),
    ],
    make_inputs=_bernoulli_inputs,
    smoke=tuple(case("bernoulli", shape=s, dtype=d) for s in SMOKE_SHAPES for d in ("float32", "float16"))
    + tuple(case("bernoulli_p", shape=[64, 65], dtype="float32", p=p) for p in (0.5, 0.1))
    + (case("bernoulli", shape=[64, 65], dtype="float32", layout="transposed"),),
    public=tuple(case("bernoulli", shape=s, dtype=d) for s in PUBLIC_SHAPES for d in FLOAT_DTYPES)
    + tuple(
        case("bernoulli_p", shape=s, dtype=d, p=p)
        for s in PUBLIC_SHAPES[:2]
        for d in FLOAT_DTYPES
        for p in (0.5, 0.001, 0.9)
    )
    + (case("bernoulli", shape=[1024, 1024], dtype="float32", layout="strided"),),
    held_out=lambda rng: (
        [
            case("bernoulli", shape=draw_shape(rng, max_numel=4_000_000), dtype=rng.choice(FLOAT_DTYPES))
            for _ in range(3)
        ]
        + [
            case(
                "bernoulli_p",
                shape=[rng.randint(1000, 3000), rng.randint(10, 1000)],
                dtype="float32",
                p=round(rng.uniform(0.01, 0.99), 3),
            )
        ]
    ),
    judgement="statistical",
    stat_check=_bernoulli_check,
    bytes_moved=_out_bytes,
    judgement_notes=STAT_NOTES + " Residuals: (out - p) / sqrt(p (1 - p)); bins by p for bernoulli(self).",
    prompt_notes="The result has self's dtype and shape; bernoulli(self) reads probabilities from self; "
    "generator is always None (use your own seed, different on every call).",
)


# --- exponential_ ---------------------------------------------------------------------------------------------


def _exponential_inputs(case_: Case, generator: torch.Generator) -> Call:
    params = case_.params
    return Call([tensor(params, generator, low=-3.0, high=-1.0), params["lambd"]])


def _exponential_check(case_: Case, call: Call, outputs: tuple) -> str | None:
    (out,) = outputs
    if out.dtype != getattr(torch, case_.params["dtype"]) or list(out.shape) != list(case_.params["shape"]):
        return f"self must stay {case_.params['dtype']} of shape {case_.params['shape']}"
    values = out.double()
    if not bool(torch.isfinite(values).all()) or bool((values < 0).any()):
        return "exponential_ values must be finite and >= 0"
    x = values * float(case_.params["lambd"])  # Exp(1): mean 1, variance 1, E[x^4] = 24
    n = x.numel()
    error = _within("mean of lambd * x", float(x.mean()), 1.0, 1.0 / math.sqrt(n))
    error = error or _within("second moment of lambd * x", float((x * x).mean()), 2.0, math.sqrt(20.0 / n))
    tail = math.exp(-1.0)
    # Rounding to a narrow dtype moves values near 1 onto 1.0 itself: allow the density there times one ulp.
    rounding = tail * torch.finfo(out.dtype).eps / SIGMAS
    error = error or _within(
        "share of lambd * x above 1", float((x > 1).double().mean()), tail, math.sqrt(tail * (1 - tail) / n) + rounding
    )
    return error or _autocorrelation(x - 1.0)


EXPONENTIAL_ = record(
    "exponential_",
    "Fills self in place with draws from the exponential distribution of rate lambd.",
    [
        entry(
            "aten::exponential_(Tensor(a!) self, float lambd=1., *, Generator? generator=None) -> Tensor(a!)",
            mutates=(0,),
            compare_return=False,
        )
    ],
    make_inputs=_exponential_inputs,
    smoke=tuple(
        case("exponential_", shape=s, dtype=d, lambd=lam)
        for s in SMOKE_SHAPES
        for d, lam in (("float32", 1.0), ("float16", 0.5), ("bfloat16", 100.001))
    ),
    public=tuple(
        case("exponential_", shape=s, dtype=d, lambd=lam)
        for s in PUBLIC_SHAPES
        for d in FLOAT_DTYPES
        for lam in (1.0, 0.001, 100.001)
    ),
    held_out=lambda rng: [
        case(
            "exponential_",
            shape=draw_shape(rng, max_numel=4_000_000),
            dtype=rng.choice(FLOAT_DTYPES),
            lambd=round(rng.uniform(0.01, 50), 3),
        )
        for _ in range(4)
    ],
    judgement="statistical",
    stat_check=_exponential_check,
    bytes_moved=lambda c: _out_bytes(c) // 2,
    judgement_notes=STAT_NOTES + " Checks on lambd * x ~ Exp(1): mean 1, second moment 2, P(x > 1) = 1/e. "
    "self arrives holding negative values, so any element left unwritten fails the support check.",
    prompt_notes="In place: overwrite every element of self and return self. generator is always None.",
)


# --- poisson ------------------------------------------------------------------------------------------------


def _poisson_inputs(case_: Case, generator: torch.Generator) -> Call:
    low, high = case_.params["rates"]
    return Call([tensor(case_.params, generator, low=low, high=high)])


def _poisson_check(case_: Case, call: Call, outputs: tuple) -> str | None:
    rates = call.args[0]
    (out,) = outputs
    error = _same_layout(out, rates)
    if error:
        return error
    values = out.double()
    if not bool(torch.isfinite(values).all()) or bool((values < 0).any()) or not bool((values == values.floor()).all()):
        return "poisson outputs must be non-negative integers"
    lam = rates.double()
    z = (values - lam) / lam.sqrt()
    # A count is never below 0, so a residual never below -sqrt(rate); above, a count is unbounded.
    return _standardised_checks(z, 3.0 + 1.0 / lam, lam, z_low=float(-lam.sqrt().max()))


POISSON = record(
    "poisson",
    "Draws one Poisson sample per element with rate self.",
    [entry("aten::poisson(Tensor self, Generator? generator=None) -> Tensor")],
    make_inputs=_poisson_inputs,
    smoke=tuple(
        case("poisson", shape=s, dtype=d, rates=[0.5, 20.0]) for s in SMOKE_SHAPES for d in ("float32", "float16")
    ),
    public=tuple(
        case("poisson", shape=s, dtype=d, rates=r)
        for s in PUBLIC_SHAPES
        for d in FLOAT_DTYPES
        for r in ([0.5, 20.0], [0.01, 1.0])
    )
    + (case("poisson", shape=[1024, 1024], dtype="float32", rates=[50.0, 1000.0]),),
    held_out=lambda rng: [
        case(
            "poisson",
            shape=draw_shape(rng, max_numel=4_000_000),
            dtype="float32",
            rates=[round(rng.uniform(0.1, 5), 2), round(rng.uniform(6, 100), 2)],
        )
        for _ in range(3)
    ],
    judgement="statistical",
    stat_check=_poisson_check,
    bytes_moved=_out_bytes,
    judgement_notes=STAT_NOTES + " Residuals: (out - rate) / sqrt(rate); E[z^4] = 3 + 1/rate; bins by rate.",
    prompt_notes="The result has self's dtype and shape and holds whole numbers. generator is always None.",
)


# --- rrelu_with_noise ---------------------------------------------------------------------------------------


def _rrelu_inputs(case_: Case, generator: torch.Generator) -> Call:
    params = case_.params
    x = tensor(params, generator, away_from_zero=1e-3)
    noise = tensor(params, generator, layout="contiguous", low=-5.0, high=-4.0)  # garbage the kernel must overwrite
    return Call([x, noise, params["lower"], params["upper"], params["training"]])


def _rrelu_check(case_: Case, call: Call, outputs: tuple) -> str | None:
    x = call.args[0]
    out, noise = outputs
    error = _same_layout(out, x)
    if error:
        return error
    lower, upper = float(case_.params["lower"]), float(case_.params["upper"])
    xs, ys = x.double(), out.double()
    rtol = {torch.float16: 1e-3, torch.bfloat16: 1.6e-2}.get(x.dtype, 1e-5)
    positive = xs > 0
    if not torch.allclose(ys[positive], xs[positive], rtol=rtol, atol=1e-5):
        return "result must equal self where self > 0"
    if not case_.params["training"]:
        slope = (lower + upper) / 2
        if not torch.allclose(ys[~positive], xs[~positive] * slope, rtol=rtol, atol=1e-5):
            return "in eval mode the result must be self * (lower + upper) / 2 where self <= 0"
        return None
    ns = noise.double()
    if not bool((ns[positive] == 1).all()):
        return "noise must be 1 where self > 0"
    slopes = ns[~positive]
    if bool((slopes < lower - rtol).any()) or bool((slopes > upper + rtol).any()):
        return f"noise must lie in [lower, upper] = [{lower}, {upper}] where self <= 0"
    if not torch.allclose(ys[~positive], xs[~positive] * slopes, rtol=rtol * 4, atol=1e-5):
        return "result must be self * noise where self <= 0"
    width = upper - lower
    u = (slopes - (lower + upper) / 2) / (width / math.sqrt(12.0))  # standardised uniform: E[u^4] = 9/5
    return _standardised_checks(u, torch.full_like(u, 1.8), None, -math.sqrt(3.0), math.sqrt(3.0))


def _rrelu_cases(shapes, dtypes, bounds) -> tuple[Case, ...]:
    return tuple(
        case("rrelu_with_noise", shape=s, dtype=d, lower=lo, upper=hi, training=t)
        for s in shapes
        for d in dtypes
        for lo, hi in bounds
        for t in (True, False)
    )


RRELU_WITH_NOISE = record(
    "rrelu_with_noise",
    "Randomised leaky ReLU: in training, negative inputs get a random slope in [lower, upper], "
    "recorded in noise; in eval, the mean slope.",
    [
        entry(
            "aten::rrelu_with_noise(Tensor self, Tensor(b!) noise, Scalar lower=0.125, "
            "Scalar upper=0.33333333333333331, bool training=False, Generator? generator=None) -> Tensor",
            mutates=(1,),
        )
    ],
    make_inputs=_rrelu_inputs,
    smoke=_rrelu_cases(SMOKE_SHAPES[:2], ("float32", "bfloat16"), ((0.125, 1 / 3),)),
    public=_rrelu_cases(PUBLIC_SHAPES, FLOAT_DTYPES, ((0.125, 1 / 3), (0.01, 0.9))),
    # torch has no float16 rrelu_with_noise on the CPU: the judge's CPU interpreter runs only the smoke tier.
    held_out=lambda rng: [
        case(
            "rrelu_with_noise",
            shape=draw_shape(rng, max_numel=4_000_000),
            dtype=rng.choice(FLOAT_DTYPES),
            lower=lo,
            upper=lo + rng.uniform(0.05, 0.5),
            training=True,
        )
        for lo in (round(rng.uniform(0.01, 0.3), 3) for _ in range(3))
    ],
    judgement="statistical",
    stat_check=_rrelu_check,
    bytes_moved=lambda c: 3 * _out_bytes(c) // 2,
    judgement_notes=STAT_NOTES + " Training: noise (mutated) must be exactly 1 where self > 0 and lie in "
    "[lower, upper] elsewhere, with uniform moments; the result must be self * noise (dtype rtol). "
    "Eval (training=False): deterministic, result = self where self > 0 else self * (lower+upper)/2.",
    prompt_notes="noise is contiguous, has self's shape and arrives holding garbage; in training mode write it "
    "everywhere (1 where self > 0, the drawn slope elsewhere); self <= 0 counts as negative. "
    "generator is always None.",
    departures="float16 is not in the smoke tier: torch's CPU kernel lacks it (public cases run it on the GPU).",
)

OPERATORS: list[OperatorSpec] = [BERNOULLI, EXPONENTIAL_, POISSON, RRELU_WITH_NOISE]
