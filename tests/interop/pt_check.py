"""tests/interop/pt_check.py: ember's torch.save files (io::save_pt) in PyTorch itself.
  pt_check.py FROM_EMBER  loads what `interop_check write-pt` and `write-models` wrote with
                          torch.load(weights_only=True) -- weights_only=False only for the file
                          with Python floats and bytes, which torch 1.13's weights-only
                          unpickler cannot read (it can in torch 2) -- and checks values, dtypes,
                          strides, storage offsets, shared storages, Parameters, a long state
                          dict, the MLP's and CNN's state dicts (loaded strict, their outputs
                          against ember's)
"""
import collections
import math
import os
import sys

import torch

from fixture_values import DTYPES, values
from torch_check import check, check_models, failures


def storage_ptr(t: torch.Tensor) -> int:
    if hasattr(t, "untyped_storage"):  # torch 2
        return t.untyped_storage().data_ptr()
    return t.storage().data_ptr()  # torch 1.13


def load(d: str, name: str, weights_only: bool = True):
    return torch.load(os.path.join(d, name), weights_only=weights_only)


def same(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b)


def check_dtypes(d: str) -> None:
    got = load(d, "pt_dtypes.pt")
    check("pt_dtypes.pt is a dict of every dtype", type(got) is dict and
          list(got) == DTYPES + ["bfloat16"], str(list(got)))
    for name in DTYPES:
        expected = torch.from_numpy(values(name))
        check(f"pt_dtypes.pt[{name}]", same(got[name], expected), f"{got[name]} != {expected}")
    expected = torch.from_numpy(values("float32")).to(torch.bfloat16)
    check("pt_dtypes.pt[bfloat16]", same(got["bfloat16"], expected), f"{got['bfloat16']}")


def check_views(d: str) -> None:
    v = load(d, "pt_views.pt")
    base = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    expected = {"base": (base, (6, 1), 0), "row_slice": (base[1:3], (6, 1), 6),
                "transpose": (base.t(), (1, 6), 0), "step": (base[:, 1::2], (6, 2), 1)}
    for name, (value, stride, offset) in expected.items():
        t = v[name]
        check(f"pt_views.pt[{name}] values", same(t, value), f"{t} != {value}")
        check(f"pt_views.pt[{name}] stride {stride} offset {offset}",
              t.stride() == stride and t.storage_offset() == offset,
              f"stride {t.stride()} offset {t.storage_offset()}")
        check(f"pt_views.pt[{name}] shares the base's storage",
              storage_ptr(t) == storage_ptr(v["base"]))
    check("pt_views.pt: non-contiguous views stay so",
          not v["transpose"].is_contiguous() and not v["step"].is_contiguous())
    emb = torch.arange(6, dtype=torch.float64).reshape(3, 2)
    check("pt_views.pt[emb]", same(v["emb"], emb))
    check("pt_views.pt: the tied pair is one tensor", v["tied"] is v["emb"])
    v["base"][0, 0] = 100  # one storage: a write shows through every view
    check("pt_views.pt: a write to the base shows in the transpose", v["transpose"][0, 0] == 100)


def check_state_dict(d: str) -> None:
    sd = load(d, "pt_state_dict.pt")
    check("pt_state_dict.pt is an OrderedDict", type(sd) is collections.OrderedDict and
          list(sd) == ["embed.weight", "head.weight", "head.bias"], f"{type(sd)} {list(sd)}")
    w = torch.arange(15, dtype=torch.float32).reshape(5, 3) / 4
    check("pt_state_dict.pt values", same(sd["embed.weight"], w) and same(sd["head.weight"], w)
          and same(sd["head.bias"], torch.zeros(5)))
    check("pt_state_dict.pt: tied weights share one storage",
          sd["embed.weight"] is not sd["head.weight"] and
          storage_ptr(sd["embed.weight"]) == storage_ptr(sd["head.weight"]))
    model = torch.nn.ModuleDict({"embed": torch.nn.Embedding(5, 3),
                                 "head": torch.nn.Linear(3, 5)})
    model.load_state_dict(sd, strict=True)
    check("pt_state_dict.pt loads into torch modules (strict)",
          torch.equal(model["head"].weight, w))

    check_models(d, ".pt (weights_only=True)", lambda name: load(d, f"{name}.pt"))


def check_parameter(d: str) -> None:
    p = load(d, "pt_parameter.pt")
    check("pt_parameter.pt is an nn.Parameter requiring grad",
          isinstance(p, torch.nn.Parameter) and p.requires_grad, f"{type(p)}")
    check("pt_parameter.pt values", same(p.detach(), torch.tensor([0.25, -0.5, 4.0])))


def check_many(d: str) -> None:
    sd = load(d, "pt_many.pt")
    expected = collections.OrderedDict((f"t{i}", torch.full((2,), float(i))) for i in range(40))
    check("pt_many.pt: 40 tensors, memo past 256", list(sd) == list(expected) and
          all(same(sd[k], v) for k, v in expected.items()), f"{list(sd)}")


def check_nested(d: str) -> None:
    v = load(d, "pt_nested.pt")
    t = v["t"][0]
    rest = dict(v)
    rest["t"] = v["t"][1:]
    expected = {"s": "text", 7: [1, -2, True, None, False, 300, 70000], "t": ("x", (1, 2)),
                "big": 2**40, "neg": -(2**33), "min": -(2**63), "max": 2**63 - 1,
                "u": "h\u00e9llo \u20ac", "empty": [],
                "od": collections.OrderedDict([("b", ()), ("a", 1)])}
    check("pt_nested.pt values", rest == expected and list(rest) == list(expected), f"{rest}")
    check("pt_nested.pt types", type(v["t"]) is tuple and type(v["od"]) is collections.OrderedDict
          and type(v[7][2]) is bool and type(v[7][0]) is int)
    check("pt_nested.pt tensor", same(t, torch.tensor([1.0, 2.0])))


def check_floats(d: str) -> None:
    v = load(d, "pt_floats.pt", weights_only=False)
    check("pt_floats.pt values", v["lr"] == 0.01 and v["betas"] == (0.9, 0.999) and
          math.copysign(1, v["neg_zero"]) == -1 and v["inf"] == math.inf and
          v["blob"] == b"\x00\x01\xff" and same(v["w"], torch.tensor([1.5])), f"{v}")
    try:
        load(d, "pt_floats.pt", weights_only=True)
        loads = True
    except Exception as e:  # torch 1.13: "Unsupported operand 71" (BINFLOAT)
        loads = False
        print(f"torch {torch.__version__} weights_only=True refuses floats: {e}")
    if torch.__version__.startswith("1."):
        check("pt_floats.pt: torch 1.13's weights_only unpickler refuses floats, as documented",
              not loads)
    else:
        check("pt_floats.pt loads weights_only in torch 2", loads)


if __name__ == "__main__":
    directory = sys.argv[1]
    for f in (check_dtypes, check_views, check_state_dict, check_parameter, check_many,
              check_nested, check_floats):
        try:
            f(directory)
        except Exception as e:  # a file torch cannot load at all
            failures.append(f"{f.__name__}: {type(e).__name__}: {e}")
    for f in failures:
        print("FAIL", f)
    print(f"pt_check: torch {torch.__version__}, {len(failures)} failures")
    sys.exit(1 if failures else 0)
