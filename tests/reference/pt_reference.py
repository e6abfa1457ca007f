#!/usr/bin/env python3
"""tests/reference/pt_reference.py: PyTorch checkpoint fixtures for the .pt reader (issue 34).

Writes small torch.save files into tests/reference/fixtures/pt/ with Debian's torch 1.13 (run:
.venv-torch/bin/python this_file). The files are committed; the script is kept so they can be
remade and so each file's contents are documented here:

- dtypes_{zip,legacy}_p{2,4}.pt, dtypes_zip_p5.pt: one tensor of each of ember's dtypes, values
  0..5 (bool: i % 2)
- complex.pt, int16.pt, int8.pt: a tensor of a dtype ember lacks (the reader must refuse it by name)
- views_{zip,legacy}.pt: tensors sharing one storage -- the base, a slice with a storage offset,
  a transpose (non-contiguous), a strided step view -- plus a tied pair (the same tensor twice)
- nested.pt: dict with str and int keys, list, tuple, str, int, float, bool, None, torch.Size
- state_dict.pt: an OrderedDict state_dict of a small nn.Sequential (Linear, LayerNorm, Linear)
- parameter.pt: a bare nn.Parameter
- optim_{sgd,adam,adamw}.pt: {"model": state_dict, "optim": optimizer.state_dict()} after three
  steps on a fixed problem, and optim_{...}_next.pt: the parameters after one more step (what
  ember must reproduce after load_state_dict)
- malicious.pt: a zip whose pickle calls os.system (GLOBAL 'posix system'); must be refused
  with the global named, and nothing run

Every file written here is checked to load again with torch.load -- weights_only=True for protocol
2; torch 1.13's weights-only unpickler refuses protocol 4's FRAME opcode ("Unsupported operand
149"), so the p4 files are checked with the full unpickler; so are nested.pt and the optimizer
checkpoints, whose Python floats are BINFLOAT
(opcode 71), which that unpickler lacks too. Both are limits ember's writer must respect. malicious.pt must be refused.
"""
import collections
import io
import os
import pickle
import zipfile

import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "pt")

# ember's dtypes; int16 and int8 (which ember lacks) are in unsupported_*.pt with complex
DTYPES = [
    torch.float64, torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.int32,
    torch.uint8, torch.bool,
]


def path(name):
    return os.path.join(OUT, name)


def save(obj, name, legacy=False, protocol=2, weights_only=True):
    torch.save(obj, path(name), _use_new_zipfile_serialization=not legacy,
               pickle_protocol=protocol)
    # torch 1.13's weights_only unpickler has no FRAME opcode (protocol 4+): those files are
    # checked with the full unpickler (they are ours); ember's writer must use protocol 2.
    back = torch.load(path(name), weights_only=weights_only and protocol == 2)
    assert type(back) is type(obj), name


def dtype_tensors():
    out = collections.OrderedDict()
    for dt in DTYPES:
        vals = torch.arange(6, dtype=torch.float64)
        t = (vals.long() % 2).bool() if dt == torch.bool else vals.to(dt)
        out[str(dt).replace("torch.", "")] = t.reshape(2, 3)
    return out


def views():
    base = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    emb = torch.arange(6, dtype=torch.float32).reshape(3, 2)
    return {
        "base": base,
        "row_slice": base[1:3],          # storage offset 6
        "transpose": base.t(),           # strides (1, 6)
        "step": base[:, 1::2],           # strides (6, 2), offset 1
        "emb": emb,
        "tied": emb,                     # the same tensor: one storage, loaded once
    }


def nested():
    return {
        "s": "text",
        7: [1, -2, 3.5, True, None],
        "t": (torch.tensor([1.0, 2.0]), "x", (1, 2)),
        "size": torch.Size([2, 3]),
        "big": 2**40,
        "neg": -(2**33),
        "bytes": b"\x00\xffab",  # protocol 2: a call of _codecs.encode(str, 'latin1')
    }


def model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.LayerNorm(4), torch.nn.Linear(4, 2))


def optim_fixture(name, make):
    m = model()
    opt = make(m.parameters())
    x = torch.linspace(-1.0, 1.0, 15).reshape(5, 3)
    y = torch.linspace(0.5, -0.5, 10).reshape(5, 2)

    def step():
        opt.zero_grad()
        torch.nn.functional.mse_loss(m(x), y).backward()
        opt.step()

    for _ in range(3):
        step()
    # param_groups hold Python floats (BINFLOAT): not loadable weights-only in torch 1.13
    save({"model": m.state_dict(), "optim": opt.state_dict()}, f"optim_{name}.pt",
         weights_only=False)
    step()
    save(m.state_dict(), f"optim_{name}_next.pt")


class _System:
    """Pickles as a call of os.system: what a malicious checkpoint contains."""

    def __reduce__(self):
        return (os.system, ("echo ember-pt-fixture-should-never-run",))


def malicious():
    data = pickle.dumps({"w": _System()}, protocol=2)
    assert b"system" in data
    with zipfile.ZipFile(path("malicious.pt"), "w", zipfile.ZIP_STORED) as z:
        z.writestr("malicious/data.pkl", data)
        z.writestr("malicious/version", "3\n")
    try:
        torch.load(path("malicious.pt"), weights_only=True)
    except pickle.UnpicklingError:
        return
    raise AssertionError("torch loaded malicious.pt with weights_only=True")


def main():
    os.makedirs(OUT, exist_ok=True)
    for legacy in (False, True):
        for protocol in (2, 4) if legacy else (2, 4, 5):
            kind = "legacy" if legacy else "zip"
            save(dtype_tensors(), f"dtypes_{kind}_p{protocol}.pt", legacy, protocol)
        save(views(), f"views_{'legacy' if legacy else 'zip'}.pt", legacy)
    torch.save({"c": torch.tensor([1 + 2j, 3 - 4j], dtype=torch.complex64)}, path("complex.pt"))
    for dt in (torch.int16, torch.int8):
        save({"w": torch.arange(4, dtype=dt)}, f"{str(dt).replace('torch.', '')}.pt")
    # a Python float is BINFLOAT ('G'), which torch 1.13's weights-only unpickler also lacks
    save(nested(), "nested.pt", weights_only=False)
    save(model().state_dict(), "state_dict.pt")
    save(torch.nn.Parameter(torch.tensor([0.25, -0.5])), "parameter.pt")
    optim_fixture("sgd", lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, weight_decay=0.01))
    optim_fixture("adam", lambda p: torch.optim.Adam(p, lr=0.01, betas=(0.8, 0.99)))
    optim_fixture("adamw", lambda p: torch.optim.AdamW(p, lr=0.01, weight_decay=0.1))
    malicious()
    with io.open(path("README"), "w") as f:
        f.write("Written by tests/reference/pt_reference.py (torch %s); see its docstring.\n"
                % torch.__version__)


if __name__ == "__main__":
    main()
