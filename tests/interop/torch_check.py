"""tests/interop/torch_check.py: ember's files in PyTorch itself, and PyTorch's in ember.
  torch_check.py check FROM_EMBER  loads what `interop_check write` and `write-models` wrote:
                                   every dtype through safetensors.torch and torch.from_numpy,
                                   and the MLP and CNN state dicts into the same torch.nn models
                                   (strict), whose outputs must match ember's
  torch_check.py write OUT         saves PyTorch models' state dicts, inputs and outputs with
                                   safetensors.torch, for `interop_check read-models OUT`
"""
import os
import sys

import numpy as np
import torch
from safetensors.torch import load_file, save_file

from fixture_values import DTYPES, values


def make_mlp() -> torch.nn.Sequential:
    return torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))


def make_cnn() -> torch.nn.Sequential:
    return torch.nn.Sequential(
        torch.nn.Conv2d(1, 4, 3, padding=1), torch.nn.BatchNorm2d(4), torch.nn.ReLU(),
        torch.nn.MaxPool2d(2), torch.nn.Flatten(), torch.nn.Linear(4 * 4 * 4, 3))


failures = []


def check(what: str, ok: bool, detail: str = "") -> None:
    if ok:
        print(f"ok {what}")
    else:
        failures.append(f"{what} {detail}")


def check_models(d: str, what: str, load_state) -> None:
    """ember's MLP and CNN state dicts, load_state("mlp") and load_state("cnn"), in the same
    torch.nn models (strict); their outputs against ember's (io.safetensors)."""
    data = load_file(os.path.join(d, "io.safetensors"))
    for name, model in [("mlp", make_mlp()), ("cnn", make_cnn())]:
        model.load_state_dict(load_state(name), strict=True)  # raises on missing or unexpected keys
        model.eval()
        with torch.no_grad():
            y = model(data[f"x_{name}"])
        expected = data[f"y_{name}"]
        check(f"ember {name}{what} in torch", y.shape == expected.shape and
              torch.allclose(y, expected, rtol=1e-5, atol=1e-6), f"{y} != {expected}")


def check_ember(d: str) -> None:
    tensors = load_file(os.path.join(d, "all.safetensors"))
    for name in DTYPES:
        expected = torch.from_numpy(values(name))
        got = tensors[name]
        check(f"all.safetensors[{name}] in torch",
              got.dtype == expected.dtype and torch.equal(got, expected), f"{got} != {expected}")
        from_npy = torch.from_numpy(np.load(os.path.join(d, f"{name}.npy")))
        check(f"{name}.npy in torch", torch.equal(from_npy, expected))

    check_models(d, "", lambda name: load_file(os.path.join(d, f"{name}.safetensors")))
    bf = load_file(os.path.join(d, "bfloat16.safetensors"))
    expected = torch.from_numpy(values("float32")).to(torch.bfloat16)
    check("ember's bfloat16 values in torch", bf["values"].dtype == torch.bfloat16 and
          torch.equal(bf["values"], expected), f"{bf['values']} != {expected}")
    mlp16 = make_mlp().to(torch.bfloat16)
    mlp16.load_state_dict(load_file(os.path.join(d, "mlp_bfloat16.safetensors")), strict=True)
    with torch.no_grad():
        y = mlp16(bf["x_mlp"])
    check("ember bfloat16 mlp in torch", y.dtype == torch.bfloat16 and
          torch.allclose(y.float(), bf["y_mlp"].float(), rtol=1.6e-2, atol=2e-2),
          f"{y} != {bf['y_mlp']}")
    bn = load_file(os.path.join(d, "cnn.safetensors"))
    check("BatchNorm statistics were trained",
          bn["1.num_batches_tracked"].item() == 1 and not torch.all(bn["1.running_var"] == 1))


def write(out: str) -> None:
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(1)
    mlp, cnn = make_mlp(), make_cnn()
    with torch.no_grad():
        cnn(torch.randn(6, 1, 8, 8) * 2 + 0.5)  # train-mode pass: running statistics move
    mlp.eval()
    cnn.eval()
    x_mlp, x_cnn = torch.randn(5, 4), torch.randn(2, 1, 8, 8)
    with torch.no_grad():
        tensors = {"x_mlp": x_mlp, "y_mlp": mlp(x_mlp), "x_cnn": x_cnn, "y_cnn": cnn(x_cnn)}
    save_file(mlp.state_dict(), os.path.join(out, "mlp.safetensors"))
    save_file(cnn.state_dict(), os.path.join(out, "cnn.safetensors"))
    save_file(tensors, os.path.join(out, "io.safetensors"))
    mlp16 = mlp.to(torch.bfloat16)
    x16 = x_mlp.to(torch.bfloat16)
    with torch.no_grad():
        bf = {"values": torch.from_numpy(values("float32")).to(torch.bfloat16), "x_mlp": x16,
              "y_mlp": mlp16(x16)}
    save_file(bf, os.path.join(out, "bfloat16.safetensors"))
    save_file(mlp16.state_dict(), os.path.join(out, "mlp_bfloat16.safetensors"))
    print(f"wrote PyTorch {torch.__version__} models to {out}")


if __name__ == "__main__":
    mode, path = sys.argv[1], sys.argv[2]
    if mode == "check":
        check_ember(path)
    elif mode == "write":
        write(path)
    else:
        sys.exit(f"unknown mode {mode}")
    for f in failures:
        print("FAIL", f)
    sys.exit(1 if failures else 0)
