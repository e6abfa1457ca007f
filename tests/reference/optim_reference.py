#!/usr/bin/env python3
"""tests/reference/optim_reference.py: reference numbers for tests/test_optim.cpp.

Implements PyTorch's optimizer update rules and learning-rate schedules in plain numpy (float64),
independently of ember, and prints the values pasted into the C++ tests. Run: python3 this_file.

Sources: the algorithm boxes of the torch.optim docs (SGD, Adam, AdamW) and the single-tensor
implementations in torch/optim/{sgd,adam,adamw}.py they describe. Where the two disagree -- SGD
with maximize and weight_decay together: the box applies maximize at the end, the code negates
the gradient first -- this follows the code, which is what gives PyTorch's numbers. The schedules
use the chainable (recursive) forms of torch/optim/lr_scheduler.py's get_lr, not closed forms, so
they check ember's closed forms independently; OneCycleLR uses its phase table and annealing
functions.
"""
import math

import numpy as np

P0 = np.array([1.0, -2.0, 3.0])
C = np.array([0.5, -1.0, 2.0])
STEPS = 4


def grad_of(p):
    """The fixed gradient used at every step: a function of the current parameter."""
    return 0.2 * p * p * p + p - C


def sgd(lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False, maximize=False):
    p, buf, out = P0.copy(), None, []
    for _ in range(STEPS):
        g = grad_of(p)
        g = -g if maximize else g
        if weight_decay != 0:
            g = g + weight_decay * p
        if momentum != 0:
            buf = g.copy() if buf is None else momentum * buf + (1 - dampening) * g
            g = g + momentum * buf if nesterov else buf
        p = p - lr * g
        out.append(p.copy())
    return out


def adam(lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False, maximize=False,
         decoupled=False):
    b1, b2 = betas
    p = P0.copy()
    m, v, vmax = np.zeros(3), np.zeros(3), np.zeros(3)
    out, amsgrad_mattered = [], False
    for t in range(1, STEPS + 1):
        g = grad_of(p)
        g = -g if maximize else g
        if decoupled:
            p = p * (1 - lr * weight_decay)
        elif weight_decay != 0:
            g = g + weight_decay * p
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        bc1, bc2 = 1 - b1 ** t, 1 - b2 ** t
        if amsgrad:
            vmax = np.maximum(vmax, v)
            amsgrad_mattered |= bool(np.any(vmax != v))
            denom = np.sqrt(vmax) / math.sqrt(bc2) + eps
        else:
            denom = np.sqrt(v) / math.sqrt(bc2) + eps
        p = p - (lr / bc1) * (m / denom)
        out.append(p.copy())
    return out, amsgrad_mattered


# --- schedules: the lr after construction (epoch 0) and after each of `n` step() calls


def step_lr(base, step_size, gamma, n):
    lr, out = base, [base]
    for epoch in range(1, n + 1):
        if epoch % step_size == 0:
            lr = lr * gamma
        out.append(lr)
    return out


def multi_step_lr(base, milestones, gamma, n):
    lr, out = base, [base]
    for epoch in range(1, n + 1):
        lr = lr * gamma ** milestones.count(epoch)
        out.append(lr)
    return out


def exponential_lr(base, gamma, n):
    lr, out = base, [base]
    for _ in range(1, n + 1):
        lr = lr * gamma
        out.append(lr)
    return out


def cosine_annealing_lr(base, t_max, eta_min, n):
    lr, out = base, [base]
    for epoch in range(1, n + 1):
        if (epoch - 1 - t_max) % (2 * t_max) == 0:
            lr = lr + (base - eta_min) * (1 - math.cos(math.pi / t_max)) / 2
        else:
            lr = ((1 + math.cos(math.pi * epoch / t_max)) /
                  (1 + math.cos(math.pi * (epoch - 1) / t_max)) * (lr - eta_min) + eta_min)
        out.append(lr)
    return out


def linear_lr(base, start, end, total, n):
    lr = base * start
    out = [lr]
    for epoch in range(1, n + 1):
        if epoch <= total:
            lr = lr * (1 + (end - start) / (total * start + (epoch - 1) * (end - start)))
        out.append(lr)
    return out


def one_cycle(max_lr, total_steps, pct_start=0.3, anneal="cos", div_factor=25.0,
              final_div_factor=1e4, base_momentum=0.85, max_momentum=0.95, three_phase=False):
    initial = max_lr / div_factor
    min_lr = initial / final_div_factor
    if three_phase:
        phases = [(float(pct_start * total_steps) - 1, initial, max_lr, max_momentum, base_momentum),
                  (float(2 * pct_start * total_steps) - 2, max_lr, initial, base_momentum,
                   max_momentum),
                  (total_steps - 1, initial, min_lr, max_momentum, max_momentum)]
    else:
        phases = [(float(pct_start * total_steps) - 1, initial, max_lr, max_momentum, base_momentum),
                  (total_steps - 1, max_lr, min_lr, base_momentum, max_momentum)]

    def f(start, end, pct):
        if anneal == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    lrs, moms = [], []
    for step in range(total_steps + 1):  # PyTorch raises only past total_steps
        start_step = 0.0
        for i, (end_step, lr0, lr1, m0, m1) in enumerate(phases):
            if step <= end_step or i == len(phases) - 1:
                pct = (step - start_step) / (end_step - start_step)
                lrs.append(f(lr0, lr1, pct))
                moms.append(f(m0, m1, pct))
                break
            start_step = end_step
    return lrs, moms


def fmt(values):
    return "{" + ", ".join(repr(float(v)) for v in values) + "}"


def print_trajectory(name, traj):
    print(f"// {name}")
    print("{" + ", ".join(fmt(p) for p in traj) + "}")


def main():
    print("// parameter after each of", STEPS, "steps; p0 =", fmt(P0), "grad = 0.2 p^3 + p - C, C =",
          fmt(C))
    print_trajectory("SGD lr=0.1", sgd(0.1))
    print_trajectory("SGD lr=0.1 momentum=0.9", sgd(0.1, momentum=0.9))
    print_trajectory("SGD lr=0.1 momentum=0.9 dampening=0.5", sgd(0.1, momentum=0.9, dampening=0.5))
    print_trajectory("SGD lr=0.1 momentum=0.9 nesterov", sgd(0.1, momentum=0.9, nesterov=True))
    print_trajectory("SGD lr=0.1 momentum=0.9 weight_decay=0.1",
                     sgd(0.1, momentum=0.9, weight_decay=0.1))
    print_trajectory("SGD lr=0.01 momentum=0.5 maximize", sgd(0.01, momentum=0.5, maximize=True))
    print_trajectory("SGD lr=0.01 weight_decay=0.1 maximize",
                     sgd(0.01, weight_decay=0.1, maximize=True))
    for name, kw in [("Adam lr=0.1", dict(lr=0.1)),
                     ("Adam lr=0.1 betas=(0.8,0.99) eps=1e-3", dict(lr=0.1, betas=(0.8, 0.99), eps=1e-3)),
                     ("Adam lr=0.1 weight_decay=0.5", dict(lr=0.1, weight_decay=0.5)),
                     ("Adam lr=0.5 betas=(0.9,0.5) amsgrad", dict(lr=0.5, betas=(0.9, 0.5), amsgrad=True)),
                     ("Adam lr=0.5 betas=(0.9,0.5) amsgrad weight_decay=0.5",
                      dict(lr=0.5, betas=(0.9, 0.5), amsgrad=True, weight_decay=0.5)),
                     ("Adam lr=0.1 maximize", dict(lr=0.1, maximize=True)),
                     ("AdamW lr=0.1 weight_decay=0.01",
                      dict(lr=0.1, weight_decay=0.01, decoupled=True)),
                     ("AdamW lr=0.5 betas=(0.9,0.5) weight_decay=0.5 amsgrad",
                      dict(lr=0.5, betas=(0.9, 0.5), weight_decay=0.5, amsgrad=True,
                           decoupled=True))]:
        traj, mattered = adam(**kw)
        if kw.get("amsgrad"):
            name += f" (max_exp_avg_sq differs from exp_avg_sq: {mattered})"
        print_trajectory(name, traj)

    print("// schedules: lr at epochs 0..n")
    print("// StepLR base=0.1 step_size=3 gamma=0.5, n=10\n" + fmt(step_lr(0.1, 3, 0.5, 10)))
    print("// StepLR base=0.01 step_size=3 gamma=0.5, n=10\n" + fmt(step_lr(0.01, 3, 0.5, 10)))
    print("// MultiStepLR base=0.1 milestones=[2,5,5,8] gamma=0.1, n=10\n" +
          fmt(multi_step_lr(0.1, [2, 5, 5, 8], 0.1, 10)))
    print("// ExponentialLR base=0.1 gamma=0.9, n=6\n" + fmt(exponential_lr(0.1, 0.9, 6)))
    print("// CosineAnnealingLR base=0.1 T_max=5 eta_min=0.001, n=12\n" +
          fmt(cosine_annealing_lr(0.1, 5, 0.001, 12)))
    print("// LinearLR base=0.1 start=1/3 end=1 total=4, n=7\n" +
          fmt(linear_lr(0.1, 1.0 / 3, 1.0, 4, 7)))
    print("// LinearLR base=0.1 start=1 end=0.25 total=3, n=5\n" +
          fmt(linear_lr(0.1, 1.0, 0.25, 3, 5)))
    lrs, moms = one_cycle(0.1, 10)
    print("// OneCycleLR max_lr=0.1 total_steps=10 (cos), lr then momentum at steps 0..10\n" +
          fmt(lrs) + "\n" + fmt(moms))
    lrs, moms = one_cycle(0.1, 10, anneal="linear", three_phase=True)
    print("// OneCycleLR max_lr=0.1 total_steps=10 linear three_phase, lr then momentum\n" +
          fmt(lrs) + "\n" + fmt(moms))


if __name__ == "__main__":
    main()
