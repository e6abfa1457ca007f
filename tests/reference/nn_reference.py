#!/usr/bin/env python3
"""tests/reference/nn_reference.py: reference numbers for tests/test_losses.cpp and tests/test_nn.cpp.

Implements the losses and layers straight from the formulas in PyTorch's documentation
(torch.nn.CrossEntropyLoss, NLLLoss, BCELoss, BCEWithLogitsLoss, MSELoss, L1Loss, LayerNorm,
GELU) in plain numpy float64, independently of ember, and prints the values pasted into the C++
tests. Run: python3 this_file.
"""
import math

import numpy as np

# --- inputs shared with the C++ tests
X = np.array([[1.0, 2.0, 0.5], [0.1, -1.0, 3.0], [2.0, 2.0, -2.0], [0.0, 0.5, 1.0]])  # (N=4, C=3)
T = np.array([0, 2, 1, 2])
W = np.array([0.2, 1.0, 3.0])
# (N=2, C=3, d=2) logits and (N=2, d=2) targets
X3 = np.array([[[1.0, -1.0], [0.5, 2.0], [0.0, 0.3]], [[-0.5, 1.5], [2.5, 0.0], [1.0, -2.0]]])
T3 = np.array([[2, 1], [0, 0]])
# probability targets for X
P = np.array([[0.7, 0.2, 0.1], [0.0, 0.0, 1.0], [0.25, 0.5, 0.25], [1 / 3, 1 / 3, 1 / 3]])


def log_softmax(x, axis):
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


def ce_indices(x, t, w=None, ignore_index=-100, eps=0.0, reduction="mean"):
    """CrossEntropyLoss with class indices, from its documented formula: per element
    l_n = (1 - eps) * w[y_n] * -log p[n, y_n] + eps / C * sum_c w[c] * -log p[n, c], zero where
    y_n == ignore_index; "mean" divides both sums by sum_n w[y_n] over the kept elements."""
    C = x.shape[1]
    lp = log_softmax(x, 1)
    lp = np.moveaxis(lp, 1, -1).reshape(-1, C)
    t = t.reshape(-1)
    w = np.ones(C) if w is None else w
    keep = t != ignore_index
    nll = np.zeros(len(t))
    smooth = np.zeros(len(t))
    wt = np.zeros(len(t))
    for n in range(len(t)):
        if keep[n]:
            nll[n] = -w[t[n]] * lp[n, t[n]]
            smooth[n] = -(w * lp[n]).sum()
            wt[n] = w[t[n]]
    if reduction == "none":
        return (1 - eps) * nll + eps / C * smooth
    if reduction == "sum":
        return (1 - eps) * nll.sum() + eps / C * smooth.sum()
    return (1 - eps) * nll.sum() / wt.sum() + eps / C * smooth.sum() / wt.sum()


def ce_probs(x, p, w=None, eps=0.0, reduction="mean"):
    """CrossEntropyLoss with class probabilities: l_n = -sum_c w[c] q[n, c] log p[n, c] with
    q = p * (1 - eps) + eps / C; "mean" divides by N."""
    C = x.shape[1]
    q = p * (1 - eps) + eps / C
    w = np.ones(C) if w is None else w
    l = -(w * q * log_softmax(x, 1)).sum(axis=1)
    return {"none": l, "sum": l.sum(), "mean": l.mean()}[reduction]


def bce(x, y, w=None):
    with np.errstate(divide="ignore"):
        lx = np.maximum(np.log(x), -100.0)
        l1x = np.maximum(np.log(1 - x), -100.0)
    l = -(y * lx + (1 - y) * l1x)
    return l if w is None else w * l


def bce_logits(x, y, pos_weight=None):
    """-[p y log s(x) + (1 - y) log(1 - s(x))], with log s(x) = -log(1 + e^-x) evaluated by
    logaddexp so large |x| stays exact."""
    log_sig = -np.logaddexp(0.0, -x)
    log_one_minus_sig = -np.logaddexp(0.0, x)
    p = 1.0 if pos_weight is None else pos_weight
    return -(p * y * log_sig + (1 - y) * log_one_minus_sig)


def fmt(values):
    return "{" + ", ".join(repr(float(v)) for v in np.ravel(values)) + "}"


def main():
    print("// cross_entropy, class indices")
    for red in ["none", "mean", "sum"]:
        print(f"// plain {red}: {fmt(ce_indices(X, T, reduction=red))}")
        print(f"// weighted {red}: {fmt(ce_indices(X, T, w=W, reduction=red))}")
        print(f"// ignore_index=1 {red}: {fmt(ce_indices(X, T, ignore_index=1, reduction=red))}")
        print(f"// ignore_index=1 weighted {red}: "
              f"{fmt(ce_indices(X, T, w=W, ignore_index=1, reduction=red))}")
        print(f"// smoothing 0.1 {red}: {fmt(ce_indices(X, T, eps=0.1, reduction=red))}")
        print(f"// smoothing 0.1 weighted {red}: {fmt(ce_indices(X, T, w=W, eps=0.1, reduction=red))}")
        print(f"// smoothing 0.2 weighted ignore_index=1 {red}: "
              f"{fmt(ce_indices(X, T, w=W, eps=0.2, ignore_index=1, reduction=red))}")
        print(f"// (N,C,d) {red}: {fmt(ce_indices(X3, T3, reduction=red))}")
        print(f"// (N,C,d) weighted smoothing 0.1 {red}: "
              f"{fmt(ce_indices(X3, T3, w=W, eps=0.1, reduction=red))}")
        print(f"// probs {red}: {fmt(ce_probs(X, P, reduction=red))}")
        print(f"// probs weighted smoothing 0.1 {red}: {fmt(ce_probs(X, P, w=W, eps=0.1, reduction=red))}")
    print(f"// (C) input, target 2: {fmt(ce_indices(X[1:2], np.array([2])))}")
    print("// nll_loss on log_softmax(X): equals cross_entropy above")
    print(f"// log_softmax(X): {fmt(log_softmax(X, 1))}")

    xb = np.array([0.9, 0.2, 0.0, 1.0, 0.0, 1.0])
    yb = np.array([1.0, 0.0, 0.0, 1.0, 1.0, 0.0])
    wb = np.array([1.0, 2.0, 1.0, 1.0, 0.5, 0.25])
    print(f"// bce none: {fmt(bce(xb, yb))} mean: {float(bce(xb, yb).mean())!r} sum: {float(bce(xb, yb).sum())!r}")
    print(f"// bce weighted none: {fmt(bce(xb, yb, wb))} mean: {float(bce(xb, yb, wb).mean())!r}")
    xl = np.array([100.0, -100.0, 0.5, -2.0, 3.0, 0.0])
    yl = np.array([0.0, 1.0, 1.0, 0.0, 0.3, 1.0])
    print(f"// bce_with_logits none: {fmt(bce_logits(xl, yl))} mean: {float(bce_logits(xl, yl).mean())!r}")
    xl2 = np.array([[0.5, -1.0, 2.0], [-0.3, 0.8, -2.5]])
    yl2 = np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 0.5]])
    pw = np.array([2.0, 0.5, 3.0])
    print(f"// bce_with_logits pos_weight none: {fmt(bce_logits(xl2, yl2, pw))} "
          f"sum: {float(bce_logits(xl2, yl2, pw).sum())!r}")
    # x = 100, y = 1 with pos_weight 2: the loss is 2 * log(1 + e^-100) ~ 2 * 3.7e-44
    print(f"// bce_with_logits pos_weight 2 at x=+-100: {fmt(bce_logits(np.array([100.0, -100.0]), np.array([1.0, 1.0]), 2.0))}")

    print("// layers")
    xg = np.array([-3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0])
    print("// gelu exact: " + fmt([v * 0.5 * (1 + math.erf(v / math.sqrt(2))) for v in xg]))
    print("// gelu tanh: " + fmt([0.5 * v * (1 + math.tanh(math.sqrt(2 / math.pi) *
                                                         (v + 0.044715 * v ** 3))) for v in xg]))
    xn = np.array([[1.0, 2.0, 3.0, 4.0], [-1.0, 0.0, 2.0, 5.0]])
    g = np.array([1.0, 0.5, 2.0, -1.0])
    b = np.array([0.0, 0.1, -0.2, 0.3])
    mu = xn.mean(axis=1, keepdims=True)
    var = ((xn - mu) ** 2).mean(axis=1, keepdims=True)  # biased, as LayerNorm documents
    y = (xn - mu) / np.sqrt(var + 1e-5)
    print("// layer_norm plain: " + fmt(y))
    print("// layer_norm affine: " + fmt(y * g + b))
    xn2 = xn.reshape(2, 2, 2)
    mu2 = xn2.mean(axis=(1, 2), keepdims=True)
    var2 = ((xn2 - mu2) ** 2).mean(axis=(1, 2), keepdims=True)
    print("// layer_norm over (2, 2), eps=0.1: " + fmt((xn2 - mu2) / np.sqrt(var2 + 0.1)))


if __name__ == "__main__":
    main()
