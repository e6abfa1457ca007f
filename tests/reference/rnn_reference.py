#!/usr/bin/env python3
"""Writes rnn_reference.txt: PyTorch's RNN, LSTM, GRU and their cells on small fixed inputs --
parameters, inputs, initial states, outputs, final states and the gradients of a fixed scalar
loss with respect to the input, the initial states and every parameter -- for
tests/test_rnn.cpp.

Run once with PyTorch (Debian's python3-torch 1.13 wrote the committed file):
    python3 tests/reference/rnn_reference.py > tests/reference/rnn_reference.txt

Format: a case starts with a line `case NAME key=value ...` (the module and its options) and
ends with `end`; between them one tensor per line, `NAME SHAPE VALUES...`, the shape being sizes
joined with "x" ("2x3x4"). The tensors: `param.P` (by PyTorch's parameter name), `input`,
`h0`, `c0` (when given), `w_out`, `w_h`, `w_c` (the fixed loss weights), `output`, `h_n`, `c_n`,
and `grad.X` for X among input, h0, c0 and `param.P`. The loss is
    sum(output * w_out) + sum(h_n * w_h) [+ sum(c_n * w_c)]
where, for a cell, `output` is its new h and `c_n` its new c. Everything is float64; parameters, inputs and loss weights are rounded to 4 decimals
before PyTorch runs, results are written to 10 significant digits.
"""
import torch

torch.manual_seed(0)
INPUT_SIZE, HIDDEN_SIZE = 3, 4


def fmt(t):
    shape = "x".join(str(s) for s in t.shape) if t.dim() else "scalar"
    return shape + " " + " ".join(f"{v:.10g}" for v in t.detach().reshape(-1).tolist())


def short(t):
    """t rounded to 4 decimals, so that the file holds exactly the values PyTorch ran on."""
    return t.double().round(decimals=4)


def emit(name, mode, opts, module, input, states):
    options = {"mode": mode, "input_size": INPUT_SIZE, "hidden_size": HIDDEN_SIZE}
    options.update({k: int(v) if isinstance(v, bool) else v for k, v in opts.items()})
    module = module.double()
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(short(p))
    print("case " + name + " " + " ".join(f"{k}={v}" for k, v in options.items()))
    for pname, p in module.named_parameters():
        print(f"param.{pname} {fmt(p)}")
    input = short(input).requires_grad_()
    states = [short(s).requires_grad_() for s in states]
    print(f"input {fmt(input)}")
    for sname, s in zip(["h0", "c0"], states):
        print(f"{sname} {fmt(s)}")
    is_lstm = options["mode"].startswith("LSTM")
    is_cell = options["mode"].endswith("Cell")
    if is_cell:
        hx = (tuple(states) if is_lstm else states[0]) if states else None
        result = module(input, hx)
        if is_lstm:
            output, c_n = result
        else:
            output, c_n = result, None
        h_n = output
    else:
        hx = (tuple(states) if is_lstm else states[0]) if states else None
        output, h = module(input, hx)
        h_n, c_n = h if is_lstm else (h, None)
    w_out = short(torch.randn(output.shape))
    w_h = short(torch.randn(h_n.shape))
    loss = (output * w_out).sum() + (h_n * w_h).sum()
    print(f"w_out {fmt(w_out)}")
    print(f"w_h {fmt(w_h)}")
    if c_n is not None:
        w_c = short(torch.randn(c_n.shape))
        loss = loss + (c_n * w_c).sum()
        print(f"w_c {fmt(w_c)}")
    loss.backward()
    print(f"output {fmt(output)}")
    if not is_cell:
        print(f"h_n {fmt(h_n)}")
    if c_n is not None:
        print(f"c_n {fmt(c_n)}")
    print(f"grad.input {fmt(input.grad)}")
    for sname, s in zip(["h0", "c0"], states):
        print(f"grad.{sname} {fmt(s.grad)}")
    for pname, p in module.named_parameters():
        print(f"grad.param.{pname} {fmt(p.grad)}")
    print("end")


LAYERS = {"RNN": torch.nn.RNN, "LSTM": torch.nn.LSTM, "GRU": torch.nn.GRU}

# name, mode, options, sequence length, batch (0: unbatched), whether h0 (and c0) are given
CASES = [
    ("rnn_tanh", "RNN", {}, 5, 2, True),
    ("rnn_relu_2layer_bidir", "RNN", {"nonlinearity": "relu", "num_layers": 2,
                                      "bidirectional": True}, 3, 2, True),
    ("rnn_batch_first_nobias", "RNN", {"batch_first": True, "bias": False}, 4, 2, False),
    ("lstm", "LSTM", {}, 5, 2, True),
    ("lstm_2layer_bidir_batch_first", "LSTM", {"num_layers": 2, "bidirectional": True,
                                               "batch_first": True}, 3, 2, True),
    ("lstm_proj", "LSTM", {"proj_size": 2, "num_layers": 2}, 4, 2, True),
    ("lstm_proj_bidir_unbatched", "LSTM", {"proj_size": 3, "bidirectional": True}, 3, 0, False),
    ("gru", "GRU", {}, 5, 2, True),
    ("gru_2layer_bidir", "GRU", {"num_layers": 2, "bidirectional": True}, 3, 2, True),
    ("gru_batch_first_nobias", "GRU", {"batch_first": True, "bias": False}, 3, 2, False),
    ("gru_unbatched_3layer", "GRU", {"num_layers": 3}, 4, 0, True),
    ("rnn_unbatched_bidir", "RNN", {"bidirectional": True}, 3, 0, True),
]

for name, mode, opts, length, batch, with_h0 in CASES:
    module = LAYERS[mode](INPUT_SIZE, HIDDEN_SIZE, **opts)
    d = 2 if opts.get("bidirectional") else 1
    layers = opts.get("num_layers", 1)
    h_size = opts.get("proj_size", 0) or HIDDEN_SIZE
    if batch == 0:
        shape, hshape, cshape = (length, INPUT_SIZE), (d * layers, h_size), (d * layers, HIDDEN_SIZE)
    else:
        shape = (batch, length, INPUT_SIZE) if opts.get("batch_first") else (length, batch,
                                                                               INPUT_SIZE)
        hshape, cshape = (d * layers, batch, h_size), (d * layers, batch, HIDDEN_SIZE)
    states = []
    if with_h0:
        states = [torch.randn(hshape)] + ([torch.randn(cshape)] if mode == "LSTM" else [])
    emit(name, mode, opts, module, torch.randn(shape), states)

CELLS = {"RNNCell": torch.nn.RNNCell, "LSTMCell": torch.nn.LSTMCell, "GRUCell": torch.nn.GRUCell}
# name, mode, options, batch (0: unbatched), whether hx is given
CELL_CASES = [
    ("rnn_cell", "RNNCell", {}, 3, True),
    ("rnn_cell_relu_nobias", "RNNCell", {"nonlinearity": "relu", "bias": False}, 2, True),
    ("lstm_cell", "LSTMCell", {}, 3, True),
    ("lstm_cell_unbatched", "LSTMCell", {}, 0, True),
    ("gru_cell", "GRUCell", {}, 3, True),
    ("gru_cell_no_hx", "GRUCell", {}, 2, False),
]
for name, mode, opts, batch, with_hx in CELL_CASES:
    module = CELLS[mode](INPUT_SIZE, HIDDEN_SIZE, **opts)
    shape = (batch, INPUT_SIZE) if batch else (INPUT_SIZE,)
    hshape = (batch, HIDDEN_SIZE) if batch else (HIDDEN_SIZE,)
    states = []
    if with_hx:
        states = [torch.randn(hshape)] + ([torch.randn(hshape)] if mode == "LSTMCell" else [])
    emit(name, mode, opts, module, torch.randn(shape), states)
