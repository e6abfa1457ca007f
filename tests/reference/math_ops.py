#!/usr/bin/env python3
"""Writes math_ops.txt: PyTorch's outputs and gradients of the math ops of issue 17 on fixed
inputs -- special values (NaN, infinities, signed zeros, ties, subnormals), integer division
signs, shifts by the bit width and more -- for tests/test_math_fixtures.cpp.

Run once with PyTorch (Debian's python3-torch 1.13 wrote the committed file):
    python3 tests/reference/math_ops.py > tests/reference/math_ops.txt

Format, one case per line, fields separated by '|':
    op | args | dtype | input 1 ; input 2 ; ... | output | gradient 1 ; ... | shape 1 ; ...
Values are space-separated Python reprs (nan, inf, -inf, -0.0); args are key=value pairs;
an empty gradient field means the case checks no gradient, "none" that an input (a label) gets
none from PyTorch. Shapes are sizes joined with "x" ("2x3"), "scalar" for 0-dim.
"""
import torch
import torch.nn.functional as F

torch.set_printoptions(precision=17)

SPECIAL = [-3.5, -2.5, -1.5, -0.5, -0.0, 0.0, 0.5, 1.5, 2.5, 0.3, -0.7, 1e-310, 1e300, -1e300,
           float("inf"), float("-inf"), float("nan"), 0.999, -0.999, 7.25]
SMOOTH = [-2.3, -1.1, -0.4, 0.2, 0.6, 1.7, 2.9]
UNIT = [-0.9, -0.4, 0.2, 0.6, 0.85]
POSITIVE = [0.3, 0.9, 1.7, 4.2]

UNARY = {
    "sin": (torch.sin, SMOOTH), "cos": (torch.cos, SMOOTH), "tan": (torch.tan, [-1.2, -0.3, 0.4, 1.1]),
    "asin": (torch.asin, UNIT), "acos": (torch.acos, UNIT), "atan": (torch.atan, SMOOTH),
    "sinh": (torch.sinh, SMOOTH), "cosh": (torch.cosh, SMOOTH), "erf": (torch.erf, SMOOTH),
    "erfc": (torch.erfc, SMOOTH), "erfinv": (torch.erfinv, UNIT), "exp2": (torch.exp2, SMOOTH),
    "expm1": (torch.expm1, SMOOTH), "log2": (torch.log2, POSITIVE), "log10": (torch.log10, POSITIVE),
    "reciprocal": (torch.reciprocal, SMOOTH), "square": (torch.square, SMOOTH),
    "floor": (torch.floor, SMOOTH), "ceil": (torch.ceil, SMOOTH), "trunc": (torch.trunc, SMOOTH),
    "round": (torch.round, SMOOTH), "frac": (torch.frac, SMOOTH), "sign": (torch.sign, SMOOTH),
    "nan_to_num": (torch.nan_to_num, SMOOTH),
    "silu": (F.silu, SMOOTH), "mish": (F.mish, SMOOTH), "selu": (F.selu, SMOOTH),
    "relu6": (F.relu6, SMOOTH), "hardswish": (F.hardswish, SMOOTH),
    "hardsigmoid": (F.hardsigmoid, SMOOTH), "logsigmoid": (F.logsigmoid, SMOOTH),
    "softsign": (F.softsign, SMOOTH),
}
# Ops with arguments: (function of x, args string).
UNARY_ARGS = [
    ("round", lambda x: torch.round(x, decimals=2), "decimals=2"),
    ("round", lambda x: torch.round(x, decimals=-1), "decimals=-1"),
    ("nan_to_num", lambda x: torch.nan_to_num(x, nan=1.0, posinf=2.0, neginf=-3.0),
     "nan=1 posinf=2 neginf=-3"),
    ("softplus", lambda x: F.softplus(x, beta=2.0, threshold=3.0), "beta=2 threshold=3"),
    ("elu", lambda x: F.elu(x, alpha=0.7), "alpha=0.7"),
    ("celu", lambda x: F.celu(x, alpha=1.5), "alpha=1.5"),
    ("hardtanh", lambda x: F.hardtanh(x, -1.0, 2.0), "min_val=-1 max_val=2"),
]
# Values only, on the special inputs (no gradient).
SPECIAL_ONLY = ["floor", "ceil", "trunc", "round", "frac", "isnan", "isinf", "isfinite",
                "nan_to_num", "sign", "square", "reciprocal", "erfinv", "erf", "expm1", "exp2",
                "silu", "softsign", "logsigmoid", "hardtanh"]

A_SPECIAL = [5.5, -5.5, 5.5, -5.5, 0.0, -0.0, float("inf"), 1.0, float("nan"), 3.0, -3.0, 7.0]
B_SPECIAL = [2.0, 2.0, -2.0, -2.0, 3.0, 3.0, 2.0, float("inf"), 1.0, 0.0, 0.0, -0.5]
A_SMOOTH = [1.3, -2.7, 0.4, -0.9, 2.2]
B_SMOOTH = [0.7, 1.9, -1.6, -0.8, 2.6]


def values(t):
    if t is None:  # an input PyTorch gives no gradient (a label)
        return "none"
    return " ".join(repr(v) for v in t.detach().reshape(-1).tolist())


def shape(t):
    return "x".join(str(n) for n in t.shape) or "scalar"


def row(op, args, dtype, inputs, out, grads):
    print("|".join([op, args, dtype, " ; ".join(values(t) for t in inputs), values(out),
                    " ; ".join(values(g) for g in grads), " ; ".join(shape(t) for t in inputs)]))


def weights(n):
    return torch.linspace(0.5, 1.5, n, dtype=torch.float64)


def with_grad(op, args, fn, *inputs, constants=()):
    """constants: positions of inputs held fixed (targets whose gradient PyTorch makes NaN)."""
    xs = [torch.tensor(v, dtype=torch.float64, requires_grad=i not in constants)
          for i, v in enumerate(inputs)]
    out = fn(*xs)
    out.backward(weights(out.numel()).reshape(out.shape))
    row(op, args, "float64", xs, out, [x.grad for x in xs])


def values_only(op, args, dtype, fn, *inputs):
    xs = [torch.tensor(v, dtype=dtype) for v in inputs]
    row(op, args, str(dtype).replace("torch.", ""), xs, fn(*xs), [])


def main():
    for name, (fn, xs) in UNARY.items():
        with_grad(name, "", fn, xs)
    for name, fn, args in UNARY_ARGS:
        with_grad(name, args, fn, SMOOTH)
    for name in SPECIAL_ONLY:
        fn = UNARY.get(name, (getattr(torch, name, None), None))[0] or getattr(F, name)
        values_only(name, "", torch.float64, fn, SPECIAL)
    for name, fn, args in UNARY_ARGS:
        values_only(name, args, torch.float64, fn, SPECIAL)
    for name in ["isnan", "isinf", "isfinite", "floor", "round", "square", "nan_to_num"]:
        values_only(name, "", torch.int64, getattr(torch, name), [-3, 0, 4, 9])

    binary = {"atan2": torch.atan2, "copysign": torch.copysign, "fmod": torch.fmod,
              "remainder": torch.remainder, "floor_divide": torch.floor_divide}
    for name, fn in binary.items():
        values_only(name, "", torch.float64, fn, A_SPECIAL, B_SPECIAL)
        if name != "floor_divide":
            with_grad(name, "", fn, A_SMOOTH, B_SMOOTH)
    ints_a, ints_b = [7, -7, 7, -7, 0, 5, 9, -9], [2, 2, -2, -2, 3, -1, 4, 4]
    for name in ["fmod", "remainder", "floor_divide"]:
        for dtype in [torch.int64, torch.int32]:
            values_only(name, "", dtype, binary[name], ints_a, ints_b)
        values_only(name, "", torch.uint8, binary[name], [7, 200, 0, 255], [2, 7, 3, 16])
    for name, fn in [("bitwise_and", torch.bitwise_and), ("bitwise_or", torch.bitwise_or),
                     ("bitwise_xor", torch.bitwise_xor)]:
        values_only(name, "", torch.int64, fn, [12, -1, 0, -100, 77], [10, 5, 9, 27, -78])
        values_only(name, "", torch.uint8, fn, [12, 255, 0, 170], [10, 5, 9, 85])
        values_only(name, "", torch.bool, fn, [True, True, False, False], [True, False, True, False])
    values_only("bitwise_not", "", torch.int64, torch.bitwise_not, [0, -1, 5, -100])
    values_only("bitwise_not", "", torch.uint8, torch.bitwise_not, [0, 255, 5, 170])
    values_only("bitwise_not", "", torch.bool, torch.bitwise_not, [True, False])
    # Shift amounts within [0, bits) for int32 and int64: beyond them PyTorch 1.13 shifts modulo
    # the width (x86's behaviour), PyTorch >= 2.1 gives 0 (or -1 for a negative value shifted
    # right), which ember follows and tests/test_math_fixtures.cpp checks by hand. uint8 computes
    # in int, so 8 and 9 give 0 in both.
    shifts = [("bitwise_left_shift", torch.bitwise_left_shift),
              ("bitwise_right_shift", torch.bitwise_right_shift)]
    for name, fn in shifts:
        values_only(name, "", torch.int64, fn, [1, -8, 255, 1, -1, 5, -5], [3, 1, 4, 63, 62, 0, 2])
        values_only(name, "", torch.int32, fn, [1, -8, 255, 1, -1, 5], [3, 1, 4, 31, 30, 0])
        values_only(name, "", torch.uint8, fn, [1, 128, 255, 3], [7, 1, 8, 9])

    with_grad("lerp", "", torch.lerp, A_SMOOTH, B_SMOOTH, [0.0, 1.0, 0.25, 0.75, 1.4])
    with_grad("lerp", "weight=0.3", lambda a, b: torch.lerp(a, b, 0.3), A_SMOOTH, B_SMOOTH)
    with_grad("lerp", "weight=0.8", lambda a, b: torch.lerp(a, b, 0.8), A_SMOOTH, B_SMOOTH)
    c = [0.5, 1.5, -2.0, 0.3, -0.6]
    with_grad("addcmul", "value=0.5", lambda s, a, b: torch.addcmul(s, a, b, value=0.5),
              c, A_SMOOTH, B_SMOOTH)
    with_grad("addcdiv", "value=-1.5", lambda s, a, b: torch.addcdiv(s, a, b, value=-1.5),
              c, A_SMOOTH, B_SMOOTH)
    with_grad("clamp", "tensor_bounds", torch.clamp, [-2.0, -0.5, 0.4, 1.8, 3.0],
              [-1.0, -1.0, 0.0, 0.0, 4.0], [1.0, 1.0, 1.0, 1.0, 2.0])
    values_only("clamp", "tensor_bounds", torch.float64, torch.clamp,
                [float("nan"), -5.0, 5.0], [0.0, 0.0, 0.0], [1.0, 1.0, 1.0])

    # Losses and distances (torch.nn.functional), outputs and gradients of every input.
    x = [[0.3, -1.2, 2.5], [1.1, 0.2, -0.7]]
    y = [[0.1, -0.2, 0.4], [2.6, 0.25, -0.9]]
    with_grad("smooth_l1_loss", "beta=0.5", lambda a, b: F.smooth_l1_loss(a, b, beta=0.5), x, y)
    with_grad("smooth_l1_loss", "reduction=none", lambda a, b: F.smooth_l1_loss(a, b, reduction="none"), x, y)
    with_grad("huber_loss", "delta=0.8", lambda a, b: F.huber_loss(a, b, delta=0.8), x, y)
    logp = [[-1.2, -0.9, -1.3], [-0.2, -2.1, -2.5]]
    probs = [[0.2, 0.5, 0.3], [0.0, 0.4, 0.6]]
    # A target of 0 gets a NaN gradient from PyTorch's xlogy (ember's is finite): held fixed.
    with_grad("kl_div", "reduction=sum", lambda a, b: F.kl_div(a, b, reduction="sum"), logp, probs,
              constants=(1,))
    with_grad("kl_div", "log_target=1", lambda a, b: F.kl_div(a, b, log_target=True), logp, logp[::-1])
    rates = [[0.5, 1.5, 0.2], [2.0, 0.7, 1.1]]
    counts = [[0.0, 2.0, 1.0], [3.0, 0.0, 5.0]]
    with_grad("poisson_nll_loss", "", lambda a, b: F.poisson_nll_loss(a, b), rates, counts)
    with_grad("poisson_nll_loss", "log_input=0 full=1",
              lambda a, b: F.poisson_nll_loss(a, b, log_input=False, full=True), rates, counts,
              constants=(1,))
    var = [[0.5, 2.0, 1e-9], [1.5, 0.3, 0.8]]
    with_grad("gaussian_nll_loss", "", lambda a, b, v: F.gaussian_nll_loss(a, b, v), x, y, var)
    with_grad("gaussian_nll_loss", "full=1", lambda a, b, v: F.gaussian_nll_loss(a, b, v, full=True),
              x, y, [0.5, 2.0])
    s1, s2, sign = [0.3, -1.2, 2.5, 0.1], [1.1, 0.2, -0.7, 0.1], [1.0, -1.0, 1.0, -1.0]
    with_grad("margin_ranking_loss", "margin=0.5",
              lambda a, b, t: F.margin_ranking_loss(a, b, t, margin=0.5), s1, s2, sign)
    with_grad("hinge_embedding_loss", "margin=1.5",
              lambda a, t: F.hinge_embedding_loss(a, t, margin=1.5), s1, sign)
    with_grad("cosine_embedding_loss", "margin=0.2",
              lambda a, b, t: F.cosine_embedding_loss(a, b, t, margin=0.2), x, y, [1.0, -1.0])
    neg = [[1.3, 0.2, -0.5], [0.1, 0.9, 0.4]]
    with_grad("triplet_margin_loss", "", lambda a, p, n: F.triplet_margin_loss(a, p, n), x, y, neg)
    with_grad("triplet_margin_loss", "p=1 swap=1 margin=3",
              lambda a, p, n: F.triplet_margin_loss(a, p, n, margin=3.0, p=1, swap=True), x, y, neg)
    with_grad("multilabel_soft_margin_loss", "",
              lambda a, t: F.multilabel_soft_margin_loss(a, t), x, [[1.0, 0.0, 1.0], [0.0, 0.0, 1.0]])
    with_grad("normalize", "", lambda a: F.normalize(a), x)
    with_grad("normalize", "p=1 dim=0", lambda a: F.normalize(a, p=1.0, dim=0), x)
    with_grad("cosine_similarity", "", lambda a, b: F.cosine_similarity(a, b), x, y)
    with_grad("pairwise_distance", "", lambda a, b: F.pairwise_distance(a, b), x, y)
    with_grad("pairwise_distance", "p=3 keepdim=1",
              lambda a, b: F.pairwise_distance(a, b, p=3.0, keepdim=True), x, y)

    # Normalizations, softmin and the new shape and NaN-aware reductions.
    img = [[[0.3, -1.2, 2.5, 0.7], [1.1, 0.2, -0.7, 0.4]], [[0.5, 0.9, -0.3, 1.8], [-1.5, 0.6, 0.1, 2.2]]]
    # torch 1.13 has no F.rms_norm (2.4 added it): its formula, in torch's ops.
    with_grad("rms_norm", "", lambda a, w: F.rms_norm(a, [4], w, eps=1e-6) if hasattr(F, "rms_norm")
              else a * torch.rsqrt((a * a).mean(-1, keepdim=True) + 1e-6) * w, img,
              [0.5, 1.5, -1.0, 2.0])
    ch4 = [[[0.3, -1.2, 2.5], [1.1, 0.2, -0.7], [0.5, 0.9, -0.3], [-1.5, 0.6, 0.1]]]
    with_grad("group_norm", "num_groups=2",
              lambda a, w, b: F.group_norm(a, 2, w, b), ch4, [0.5, 1.5, -1.0, 2.0], [0.1, 0.2, 0.3, 0.4])
    with_grad("instance_norm", "", lambda a, w, b: F.instance_norm(a, weight=w, bias=b), ch4,
              [0.5, 1.5, -1.0, 2.0], [0.1, 0.2, 0.3, 0.4])
    with_grad("softmin", "dim=1", lambda a: F.softmin(a, dim=1), x)
    nanny = [[1.0, float("nan"), 2.0], [float("nan"), float("nan"), 4.0]]
    values_only("nansum", "dim=1", torch.float64, lambda a: torch.nansum(a, dim=1), nanny)
    values_only("nanmean", "dim=1", torch.float64, lambda a: torch.nanmean(a, dim=1), nanny)
    values_only("nanmean", "", torch.float64, torch.nanmean, nanny)
    with_grad("take_along_dim", "dim=1",
              lambda a: torch.take_along_dim(a, torch.tensor([[2, 0], [1, 1]]), dim=1), x)
    with_grad("movedim", "", lambda a: torch.movedim(a, 0, 2), img)
    with_grad("unflatten", "", lambda a: torch.unflatten(a, 2, (2, 2)), img)

    # Ordering (stable sorts; NaN above every number, -0.0 equal to 0.0), values and indices.
    ordered = [3.0, -0.0, float("nan"), 1.0, 0.0, float("-inf"), 1.0, 7.5, float("inf"), -2.0]
    for desc in (0, 1):
        sort = lambda a, d=desc: torch.sort(a, descending=bool(d), stable=True)
        values_only("sort_values", f"descending={desc}", torch.float64, lambda a: sort(a).values, ordered)
        values_only("sort_indices", f"descending={desc}", torch.float64, lambda a: sort(a).indices, ordered)
        values_only("sort_indices", f"descending={desc}", torch.int64, lambda a: sort(a).indices,
                    [3, -1, 3, 0, -1, 2, 3])
    distinct = [3.0, -0.5, float("nan"), 1.0, float("-inf"), 7.5, float("inf"), -2.0]
    for largest in (1, 0):
        top = lambda a, l=largest: torch.topk(a, 3, largest=bool(l))
        values_only("topk_values", f"k=3 largest={largest}", torch.float64, lambda a: top(a).values, distinct)
        values_only("topk_indices", f"k=3 largest={largest}", torch.float64, lambda a: top(a).indices, distinct)
    values_only("kthvalue_values", "k=3", torch.float64, lambda a: torch.kthvalue(a, 3).values, distinct)
    values_only("kthvalue_indices", "k=3", torch.float64, lambda a: torch.kthvalue(a, 3).indices, distinct)
    nan_rows = [[1.0, float("nan"), 3.0, float("nan")], [4.0, 1.0, 3.0, 2.0],
                [float("nan"), 1.0, float("nan"), 2.0], [float("nan")] * 4]
    for name in ("median", "nanmedian"):
        fn = getattr(torch, name)
        values_only(name + "_values", "dim=1", torch.float64, lambda a, f=fn: f(a, 1).values, nan_rows)
        # (the index PyTorch gives for a row of NaNs only depends on its selection algorithm)
        values_only(name + "_indices", "dim=1", torch.float64, lambda a, f=fn: f(a, 1).indices,
                    nan_rows[:3])
        values_only(name, "", torch.float64, fn, [4.0, 1.0, float("nan"), 2.0])
        values_only(name, "", torch.float64, fn, [4.0, 1.0, 3.0, 2.0])
    values_only("median", "", torch.int64, torch.median, [4, 1, 3, 2, 9, 9])
    with_grad("sort_values", "descending=1", lambda a: torch.sort(a, descending=True).values, SMOOTH)
    with_grad("topk_values", "k=2 largest=1", lambda a: torch.topk(a, 2).values, x)
    with_grad("kthvalue_values", "k=2", lambda a: torch.kthvalue(a, 2).values, x)
    with_grad("median_values", "dim=0", lambda a: torch.median(a, 0).values, x)
    with_grad("median", "", torch.median, SMOOTH)

    # Scans: cumprod's gradient through zeros, cummax/cummin on ties and NaNs, logcumsumexp on
    # infinities.
    with_grad("cumprod", "", lambda a: torch.cumprod(a, 0), [2.0, 0.0, 3.0, 0.0, 5.0])
    with_grad("cumprod", "", lambda a: torch.cumprod(a, 0), [1.5, -2.0, 0.0, 4.0])
    with_grad("cumprod", "", lambda a: torch.cumprod(a, 0), [0.5, -1.25, 3.0, 0.75])
    n = float("nan")
    for name in ("cummax", "cummin"):
        fn = getattr(torch, name)
        for dtype, xs in [(torch.float64, [1.0, 1.0, 0.0, 2.0, 2.0, n, 3.0, n, -1.0]),
                          (torch.int64, [3, 1, 3, 2, 5, 5, -1])]:
            values_only(name + "_values", "", dtype, lambda a, f=fn: f(a, 0).values, xs)
            values_only(name + "_indices", "", dtype, lambda a, f=fn: f(a, 0).indices, xs)
        with_grad(name + "_values", "", lambda a, f=fn: f(a, 0).values, [0.5, 2.0, -1.0, 3.0, 1.0])
    inf = float("inf")
    values_only("logcumsumexp", "", torch.float64, lambda a: torch.logcumsumexp(a, 0),
                [-inf, -inf, 0.0, 700.0, 700.0, inf, 1.0])
    with_grad("logcumsumexp", "", lambda a: torch.logcumsumexp(a, 0), SMOOTH)

    # mode: the smallest most frequent value and its last position.
    for dtype, xs in [(torch.float64, [[1.0, 3.0, 3.0, 1.0, 2.0, 2.0, 2.0], [5.0, 5.0, 4.0, 4.0, 4.0, 5.0, 0.0]]),
                      (torch.int64, [[2, 2, 1, 1, 1, 2], [3, 1, 1, 3, 2, 0]])]:
        values_only("mode_values", "dim=1", dtype, lambda a: torch.mode(a, 1).values, xs)
        values_only("mode_indices", "dim=1", dtype, lambda a: torch.mode(a, 1).indices, xs)

    # Searching and counting: NaN past the end, both sides, repeated boundaries.
    seq, vals = [1.0, 2.0, 2.0, 3.0], [n, 2.0, 0.0, 5.0, 2.5, 1.0]
    values_only("searchsorted", "right=0", torch.float64, lambda a, v: torch.searchsorted(a, v), seq, vals)
    values_only("searchsorted", "right=1", torch.float64,
                lambda a, v: torch.searchsorted(a, v, right=True), seq, vals)
    values_only("searchsorted", "right=0", torch.float64, lambda a, v: torch.searchsorted(a, v),
                [[1.0, 3.0, 5.0], [2.0, 4.0, 6.0]], [[3.0, 6.0], [3.0, 6.0]])
    values_only("bucketize", "right=1", torch.float64,
                lambda x, b: torch.bucketize(x, b, right=True), vals, seq)
    values_only("bucketize", "right=0", torch.int64, lambda x, b: torch.bucketize(x, b), [0, 1, 2, 7], [1, 2, 5])
    for part, name in [(0, "values"), (1, "inverse"), (2, "counts")]:
        values_only("unique_" + name, "", torch.int64,
                    lambda a, p=part: torch.unique(a, return_inverse=True, return_counts=True)[p],
                    [[3, 1, 3], [2, 1, 7]])
        values_only("unique_consecutive_" + name, "", torch.int64,
                    lambda a, p=part: torch.unique_consecutive(a, return_inverse=True, return_counts=True)[p],
                    [1, 1, 2, 2, 3, 1, 1, 2])
    values_only("histc", "bins=4", torch.float64, lambda a: torch.histc(a, bins=4), [1.0, 2.0, 3.0])
    values_only("histc", "bins=4", torch.float64, lambda a: torch.histc(a, bins=4), [1.0, 1.0])
    values_only("histc", "bins=4 min=0 max=4", torch.float64, lambda a: torch.histc(a, 4, 0, 4),
                [1.0, 2.0, 1.0, 4.0, 5.0, -1.0, 0.0])
    values_only("bincount", "minlength=6", torch.int64, lambda a: torch.bincount(a, minlength=6), [0, 3, 3, 1])
    values_only("bincount", "weights=1", torch.float64, lambda w: torch.bincount(torch.tensor([0, 3, 3, 1]), w), [0.5, 1.5, -2.0, 4.0])
    values_only("nonzero", "", torch.float64, torch.nonzero, [[0.0, 1.5, 0.0], [n, 0.0, -2.0]])

    # Padding, index updates, diagonals, cross, kron, cdist, with gradients.
    img3 = [[[0.3, -1.2, 2.5, 0.7], [1.1, 0.2, -0.7, 0.4], [0.5, 0.9, -0.3, 1.8]]]
    with_grad("pad", "mode=constant pad=2,1,1,2 value=0.5", lambda a: F.pad(a, (2, 1, 1, 2), value=0.5), img3)
    for mode in ("reflect", "replicate", "circular"):  # torch 1.13 pads 2 dims of 3-D/4-D inputs
        with_grad("pad", f"mode={mode} pad=2,1,1,2",
                  lambda a, m=mode: F.pad(a.unsqueeze(0), (2, 1, 1, 2), mode=m).squeeze(0), img3)
    with_grad("pad", "mode=constant pad=-1,2", lambda a: F.pad(a, (-1, 2)), img3)
    idx = torch.tensor([2, 0, 2])
    with_grad("index_add", "dim=1 alpha=2", lambda a, s: a.index_add(1, idx, s, alpha=2.0),
              [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], [[0.5, 1.5, -1.0], [2.0, -0.5, 3.0]])
    with_grad("index_copy", "dim=0", lambda a, s: a.index_copy(0, torch.tensor([1, 0]), s),
              [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], [[7.0, 8.0], [9.0, 10.0]])
    with_grad("index_fill", "dim=1 value=-2", lambda a: a.index_fill(1, torch.tensor([0, 2]), -2.0),
              [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    rows_i, cols_i = torch.tensor([0, 1, 0]), torch.tensor([2, 0, 2])
    with_grad("index_put", "accumulate=1", lambda a, v: a.index_put((rows_i, cols_i), v, accumulate=True),
              [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], [0.5, -1.0, 2.0])
    with_grad("index_put", "accumulate=0", lambda a, v: a.index_put((torch.tensor([1, 0]),), v),
              [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], [[7.0, 8.0, 9.0]])
    with_grad("diagonal", "offset=1 dim1=1 dim2=2", lambda a: torch.diagonal(a, 1, 1, 2), img3)
    with_grad("cross", "", lambda a, b: torch.cross(a, b, dim=-1), [[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]],
              [[-2.0, 0.5, 1.0], [3.0, 1.0, -1.5]])
    with_grad("kron", "", torch.kron, [[1.0, 2.0], [3.0, 4.0]], [[0.5, -1.0, 2.0]])
    with_grad("cdist", "p=2", lambda a, b: torch.cdist(a, b), [[0.3, -1.2], [1.1, 0.2], [0.5, 0.9]],
              [[1.0, 0.5], [-0.7, 0.4]])
    with_grad("cdist", "p=1", lambda a, b: torch.cdist(a, b, p=1.0), [[0.3, -1.2], [1.1, 0.2]],
              [[1.0, 0.5], [-0.7, 0.4], [0.2, 0.2]])

    # The activations added with their modules.
    with_grad("hardshrink", "lambd=0.5", lambda a: F.hardshrink(a, 0.5), SMOOTH)
    with_grad("softshrink", "lambd=0.5", lambda a: F.softshrink(a, 0.5), SMOOTH)
    with_grad("tanhshrink", "", F.tanhshrink, SMOOTH)
    with_grad("threshold", "threshold=0.3 value=-1", lambda a: F.threshold(a, 0.3, -1.0), SMOOTH)
    with_grad("glu", "dim=1", lambda a: F.glu(a, 1), [[0.3, -1.2, 2.5, 0.7], [1.1, 0.2, -0.7, 0.4]])
    with_grad("prelu", "", F.prelu, [[[0.3, -1.2], [1.1, -0.2]], [[-0.5, 0.9], [-0.3, 1.8]]], [0.25, -0.5])


def seq(*shape, step=37, offset=0):
    """Distinct values (no ties below 101 elements) in [-2, 2), as nested lists of `shape`."""
    n = 1
    for d in shape:
        n *= d
    v = torch.tensor([((i * step + offset) % 101) / 25.0 - 2.0 for i in range(n)], dtype=torch.float64)
    return v.reshape(shape).tolist()


def layers():
    """The convolution, pooling, resampling, embedding-bag and normalization layers' functions."""
    x1d, w1d = seq(1, 2, 6), seq(4, 2, 3, offset=5)
    with_grad("conv1d", "stride=2 padding=1", lambda x, w, b: F.conv1d(x, w, b, stride=2, padding=1),
              x1d, w1d, seq(4, offset=9))
    with_grad("conv1d", "dilation=2 groups=2", lambda x, w: F.conv1d(x, w, dilation=2, groups=2),
              x1d, seq(2, 1, 2, offset=3))
    x3d = seq(1, 2, 3, 4, 4)
    with_grad("conv3d", "stride=1,2,1 padding=1,0,1 dilation=1,1,2",
              lambda x, w, b: F.conv3d(x, w, b, stride=(1, 2, 1), padding=(1, 0, 1), dilation=(1, 1, 2)),
              x3d, seq(2, 2, 2, 3, 2, offset=7), seq(2, offset=1))
    with_grad("conv3d", "groups=2", lambda x, w: F.conv3d(x, w, groups=2), x3d, seq(2, 1, 2, 2, 2, offset=4))
    x2d = seq(1, 2, 3, 3)
    with_grad("conv_transpose2d", "stride=2 padding=1 output_padding=1",
              lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1),
              x2d, seq(2, 3, 2, 3, offset=11), seq(3, offset=2))
    with_grad("conv_transpose2d", "groups=2 dilation=2",
              lambda x, w: F.conv_transpose2d(x, w, groups=2, dilation=2), x2d, seq(2, 1, 3, 3, offset=6))
    with_grad("conv_transpose1d", "stride=3 padding=1 output_padding=2",
              lambda x, w, b: F.conv_transpose1d(x, w, b, stride=3, padding=1, output_padding=2),
              seq(2, 2, 4), seq(2, 3, 3, offset=8), seq(3, offset=4))
    with_grad("unfold", "kernel=2,3 padding=1 stride=2",
              lambda x: F.unfold(x, (2, 3), padding=1, stride=2), seq(1, 2, 4, 5))
    with_grad("fold", "output=3,4 kernel=2", lambda x: F.fold(x, (3, 4), 2), seq(1, 8, 6))
    with_grad("max_pool1d", "kernel=3 stride=2 padding=1 ceil_mode=1",
              lambda x: F.max_pool1d(x, 3, 2, 1, ceil_mode=True), seq(1, 2, 8))
    with_grad("avg_pool1d", "kernel=3 stride=2 padding=1 count_include_pad=0",
              lambda x: F.avg_pool1d(x, 3, 2, 1, count_include_pad=False), seq(1, 2, 8))
    with_grad("adaptive_avg_pool1d", "size=3", lambda x: F.adaptive_avg_pool1d(x, 3), seq(1, 2, 7))
    with_grad("adaptive_max_pool1d", "size=3", lambda x: F.adaptive_max_pool1d(x, 3), seq(1, 2, 7))
    pair = lambda f: (lambda x: f(x)[0], lambda x: f(x)[1])
    v, i = pair(lambda x: F.adaptive_max_pool2d(x, (2, 3), return_indices=True))
    with_grad("adaptive_max_pool2d", "size=2,3", v, seq(1, 2, 5, 7))
    values_only("adaptive_max_pool2d_indices", "size=2,3", torch.float64, i, seq(1, 2, 5, 7))
    img = seq(1, 2, 3, 4)
    for mode, size, extra in [("nearest", (5, 7), {}), ("nearest-exact", (5, 7), {}),
                              ("bilinear", (5, 7), {}), ("bilinear", (5, 7), {"align_corners": True}),
                              ("bicubic", (5, 6), {}), ("bicubic", (5, 6), {"align_corners": True}),
                              ("area", (2, 3), {}), ("bilinear", (2, 3), {})]:
        args = "mode=%s size=%d,%d" % (mode, *size) + (" align_corners=1" if extra else "")
        with_grad("interpolate", args,
                  lambda x, m=mode, s=size, e=extra: F.interpolate(x, size=s, mode=m, **e), img)
    for mode in ["nearest", "bilinear", "bicubic"]:
        with_grad("interpolate", "mode=%s scale=1.5,2" % mode,
                  lambda x, m=mode: F.interpolate(x, scale_factor=(1.5, 2.0), mode=m), img)
    with_grad("interpolate", "mode=linear size=7", lambda x: F.interpolate(x, size=7, mode="linear"),
              seq(1, 2, 4))
    with_grad("interpolate", "mode=linear size=7 align_corners=1",
              lambda x: F.interpolate(x, size=7, mode="linear", align_corners=True), seq(1, 2, 4))
    with_grad("interpolate", "mode=trilinear size=3,4,5",
              lambda x: F.interpolate(x, size=(3, 4, 5), mode="trilinear"), seq(1, 1, 2, 3, 3))
    with_grad("pixel_shuffle", "r=2", lambda x: F.pixel_shuffle(x, 2), seq(1, 8, 2, 3))
    with_grad("pixel_unshuffle", "r=2", lambda x: F.pixel_unshuffle(x, 2), seq(1, 2, 4, 6))
    # torch 1.13's channel_shuffle has no derivative: its definition, checked against it.
    shuffled = lambda x: x.view(1, 3, 2, 2, 2).transpose(1, 2).reshape(1, 6, 2, 2)
    assert torch.equal(shuffled(torch.tensor(seq(1, 6, 2, 2))), F.channel_shuffle(torch.tensor(seq(1, 6, 2, 2)), 3))
    with_grad("channel_shuffle", "groups=3", shuffled, seq(1, 6, 2, 2))
    # embedding_bag over a (6, 3) table: bags [1, 2], [], [4, 5, 1], [0, 3] of input
    # [1, 2, 4, 5, 1, 0, 3] (offsets 0 2 2 5), and as a (2, 3) batch of fixed bags.
    idx = torch.tensor([1, 2, 4, 5, 1, 0, 3])
    off = torch.tensor([0, 2, 2, 5])
    table = seq(6, 3)
    for mode in ["sum", "mean", "max"]:
        with_grad("embedding_bag", "mode=" + mode,
                  lambda w, m=mode: F.embedding_bag(idx, w, off, mode=m), table)
    with_grad("embedding_bag", "mode=mean padding_idx=1",
              lambda w: F.embedding_bag(idx, w, off, mode="mean", padding_idx=1), table)
    with_grad("embedding_bag", "mode=max padding_idx=1",
              lambda w: F.embedding_bag(idx, w, off, mode="max", padding_idx=1), table)
    with_grad("embedding_bag", "mode=sum per_sample_weights=1",
              lambda w, p: F.embedding_bag(idx, w, off, mode="sum", per_sample_weights=p), table,
              seq(7, offset=3))
    with_grad("embedding_bag", "mode=sum include_last_offset=1",
              lambda w: F.embedding_bag(idx, w, torch.tensor([0, 2, 2, 5, 7]), mode="sum",
                                        include_last_offset=True), table)
    with_grad("embedding_bag", "mode=mean batch=2x3",
              lambda w: F.embedding_bag(torch.tensor([[1, 2, 4], [5, 1, 0]]), w, mode="mean"), table)
    with_grad("embedding_bag", "mode=max batch=2x3",
              lambda w: F.embedding_bag(torch.tensor([[1, 2, 4], [5, 1, 0]]), w, mode="max"), table)
    with_grad("embedding", "max_norm=1.5",
              lambda w: F.embedding(torch.tensor([[1, 2], [4, 1]]), w.clone(), max_norm=1.5), table)
    with_grad("bilinear", "", F.bilinear, seq(3, 2), seq(3, 4, offset=2), seq(5, 2, 4, offset=6),
              seq(5, offset=1))
    with_grad("local_response_norm", "size=3", lambda x: F.local_response_norm(x, 3), seq(2, 5, 3))
    with_grad("local_response_norm", "size=4 alpha=0.1 beta=0.6 k=2",
              lambda x: F.local_response_norm(x, 4, alpha=0.1, beta=0.6, k=2.0), seq(1, 6, 2, 2))


def scatters():
    """scatter and scatter_reduce: writes, reductions with and without self, duplicates (none for
    the plain writes and no ties for amax / amin, where PyTorch's gradient splits)."""
    rows = torch.tensor([[0, 1, 2, 0], [2, 0, 1, 1]])  # (2, 4) into dim 0 of (3, 4)
    dup = torch.tensor([[0, 1, 2, 0], [0, 1, 0, 0], [2, 1, 0, 0]])  # repeated positions
    # (torch 1.13's scatter gradient needs src of index's shape: a larger src is a hand test.)
    x, src = seq(3, 4), seq(3, 4, offset=13)
    with_grad("scatter", "dim=0 index=rows", lambda a, s: torch.scatter(a, 0, rows, s), x, seq(2, 4, offset=13))
    cols = torch.tensor([[1], [3], [0]])
    with_grad("scatter", "dim=1 index=cols value=9", lambda a: torch.scatter(a, 1, cols, 9.0), x)
    # torch 1.13 has no gradient for scatter's legacy reduce: values only.
    values_only("scatter", "dim=0 index=dup reduce=add", torch.float64,
                lambda a, s: torch.scatter(a, 0, dup, s, reduce="add"), x, src)
    values_only("scatter", "dim=0 index=dup reduce=multiply", torch.float64,
                lambda a, s: torch.scatter(a, 0, dup, s, reduce="multiply"), x, src)
    for reduce in ["sum", "prod", "mean", "amax", "amin"]:
        for include_self in [True, False]:
            with_grad("scatter_reduce", "dim=0 index=dup reduce=%s include_self=%d" % (reduce, include_self),
                      lambda a, s, r=reduce, i=include_self: torch.scatter_reduce(a, 0, dup, s, r, include_self=i),
                      x, src)
    # A zero among a position's factors: the others' product is its gradient.
    zeroed = [[0.5, -1.5, 2.0, 0.0], [0.0, 2.5, -0.5, 1.5], [1.5, 0.5, 2.0, -2.0]]
    with_grad("scatter_reduce", "dim=0 index=dup reduce=prod include_self=1 zeros=1",
              lambda a, s: torch.scatter_reduce(a, 0, dup, s, "prod"), x, zeroed)
    with_grad("scatter_reduce", "dim=1 index=cols2 reduce=amax include_self=0",
              lambda a, s: torch.scatter_reduce(a, 1, torch.tensor([[0, 0, 3], [1, 2, 1], [3, 3, 3]]), s,
                                                "amax", include_self=False), x, seq(3, 3, offset=13))
    ints = lambda v: [[int(10 * e) for e in r] for r in v]
    values_only("scatter_reduce", "dim=0 index=dup reduce=mean include_self=1", torch.int64,
                lambda a, s: torch.scatter_reduce(a, 0, dup, s, "mean"), ints(x), ints(src))
def einsum_and_repeat_interleave():
    """einsum over equations of one, two and three operands; repeat_interleave's repeats."""
    cases = [
        ("ij,jk->ik", [(2, 3), (3, 4)]), ("bij,bjk->bik", [(2, 2, 3), (2, 3, 4)]),
        ("bij,bkj->bik", [(2, 2, 3), (2, 4, 3)]), ("i,j->ij", [(3,), (4,)]),
        ("i,i->", [(5,), (5,)]), ("ii->", [(3, 3)]), ("ii->i", [(3, 3)]), ("ij->ji", [(2, 3)]),
        ("ij->", [(2, 3)]), ("ij,jk", [(2, 3), (3, 4)]),
        ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]),
        ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]),
        ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]), ("ii,i->i", [(3, 3), (3,)]),
        ("Ab,bC->AC", [(2, 3), (3, 4)]), ("iB,Bj", [(2, 3), (3, 4)]),
        ("bij->jb", [(2, 3, 4)]), ("ij,j->ij", [(2, 1), (3,)]), ("i...->...", [(2, 3, 4)]),
    ]
    for eq, shapes in cases:
        with_grad("einsum", "eq=" + eq, lambda *xs, e=eq: torch.einsum(e, *xs),
                  *[seq(*s, offset=7 * i) for i, s in enumerate(shapes)])
    x = seq(3, 4)
    with_grad("repeat_interleave", "repeats=2", lambda t: torch.repeat_interleave(t, 2), x)
    with_grad("repeat_interleave", "repeats=3 dim=1", lambda t: t.repeat_interleave(3, dim=1), x)
    with_grad("repeat_interleave", "repeats=2 dim=-2", lambda t: t.repeat_interleave(2, dim=-2), x)
    with_grad("repeat_interleave", "counts=2,0,1 dim=0",
              lambda t: t.repeat_interleave(torch.tensor([2, 0, 1]), dim=0), x)
    with_grad("repeat_interleave", "counts=1,3,0,2 dim=1",
              lambda t: t.repeat_interleave(torch.tensor([1, 3, 0, 2]), dim=1), x)
    with_grad("repeat_interleave", "counts=2",
              lambda t: t.repeat_interleave(torch.tensor([2])), x)
    values_only("repeat_interleave", "repeats=0 dim=1", torch.float64,
                lambda t: t.repeat_interleave(0, dim=1), x)
    values_only("repeat_interleave", "index=1", torch.int64, torch.repeat_interleave, [2, 0, 3, 1])
def ctc():
    """F.ctc_loss: the gradient with respect to log_probs (log_softmax of fixed values, passed as
    the input); targets and lengths are inputs PyTorch gives no gradient ("none")."""
    def case(args, lp_shape, targets, input_lengths, target_lengths, blank=0, reduction="mean",
             zero_infinity=False, offset=0):
        lp = torch.tensor(seq(*lp_shape, offset=offset), dtype=torch.float64).log_softmax(-1)
        fn = lambda x, t, i, l: F.ctc_loss(x, t.long(), i.long(), l.long(), blank=blank,
                                           reduction=reduction, zero_infinity=zero_infinity)
        extra = ["blank=%d" % blank] if blank else []
        extra += [] if reduction == "mean" or "reduction=" in args else ["reduction=" + reduction]
        extra += ["zero_infinity=1"] if zero_infinity and "zero_infinity" not in args else []
        with_grad("ctc_loss", " ".join([args] + extra), fn, lp.tolist(), targets, input_lengths, target_lengths,
                  constants=(1, 2, 3))

    padded = [[1, 2, 2, 0], [3, 1, 0, 0], [2, 0, 0, 0]]
    for reduction in ["mean", "sum", "none"]:
        case("reduction=" + reduction, (6, 3, 4), padded, [6, 5, 4], [3, 2, 1], reduction=reduction)
    case("layout=concatenated", (6, 3, 4), [1, 2, 2, 3, 1, 2], [6, 5, 4], [3, 2, 1], offset=7)
    case("repeats=1", (7, 2, 3), [[1, 1, 1], [2, 2, 0]], [7, 4], [3, 2], reduction="sum", offset=3)
    case("layout=padded", (6, 2, 4), [[0, 1, 3], [3, 3, 0]], [6, 6], [3, 2], blank=2, reduction="none",
         offset=11)
    case("empty_target=1", (5, 2, 3), [[1, 2], [0, 0]], [5, 3], [2, 0], reduction="none", offset=5)
    for zero_infinity in [False, True]:
        case("impossible=1 reduction=none zero_infinity=%d" % zero_infinity, (4, 2, 3),
             [[1, 1, 1], [2, 1, 0]], [3, 4], [3, 2], reduction="none",
             zero_infinity=zero_infinity, offset=2)
    case("impossible=1", (4, 2, 3), [[1, 1, 1], [2, 1, 0]], [3, 4], [3, 2],
         zero_infinity=True, offset=2)
    case("unbatched=1", (5, 4), [3, 1], [5], [2], offset=9)
    case("unbatched=1 reduction=none", (5, 4), [3, 1], [4], [2], reduction="none", offset=9)


if __name__ == "__main__":
    main()
    layers()
    scatters()
    einsum_and_repeat_interleave()
    ctc()
