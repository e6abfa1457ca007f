#!/usr/bin/env python3
"""Writes transformer_reference.txt: PyTorch's MultiheadAttention, TransformerEncoderLayer,
TransformerDecoderLayer, TransformerEncoder and Transformer on small fixed inputs -- parameters
(state-dict names), inputs, masks, outputs, attention weights and the gradients of a fixed
scalar loss with respect to the inputs and every parameter -- for tests/test_transformer.cpp.

Run once with PyTorch (Debian's python3-torch 1.13 wrote the committed file):
    python3 tests/reference/transformer_reference.py > tests/reference/transformer_reference.txt

Format (as rnn_reference.txt): `case NAME key=value ...`, one tensor per line
`NAME SHAPE VALUES...` (shape "2x3x4", or "scalar"), `end`. Tensors: `param.P` by state-dict
name; inputs `query`, `key`, `value` (MultiheadAttention; `key`/`value` absent when they are
the query: self-attention on one tensor) or `src`, `tgt`, `memory`; masks `bool.M` (0/1, true
meaning "leave out" as PyTorch's module masks) or `float.M` (added); `w_out` and `w_weights`
(loss weights), `output`, `weights`; `grad.X` for each input X and `grad.param.P`. The loss is
sum(output * w_out) [+ sum(weights * w_weights)]. Modules run in eval mode (no dropout) in
float64; parameters, inputs and loss weights are rounded to 4 decimals before PyTorch runs,
results are written to 10 significant digits.
"""
import torch
from torch import nn

torch.manual_seed(0)
E, H = 8, 2


def fmt(t):
    shape = "x".join(str(s) for s in t.shape) if t.dim() else "scalar"
    return shape + " " + " ".join(f"{v:.10g}" for v in t.detach().reshape(-1).double().tolist())


def short(t):
    return t.double().round(decimals=4)


def options_line(name, opts):
    return "case " + name + " " + " ".join(f"{k}={int(v) if isinstance(v, bool) else v}"
                                          for k, v in opts.items())


def prepare(module):
    module = module.double().eval()
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(short(p))
    for pname, p in module.state_dict().items():
        print(f"param.{pname} {fmt(p)}")
    return module


def emit_inputs(inputs):
    out = {}
    for name, t in inputs.items():
        t = short(t).requires_grad_()
        print(f"{name} {fmt(t)}")
        out[name] = t
    return out


def emit_masks(masks):
    out = {}
    for name, m in masks.items():
        if m.dtype == torch.bool:
            print(f"bool.{name} {fmt(m.double())}")
            out[name] = m
        else:
            m = short(m)
            print(f"float.{name} {fmt(m)}")
            out[name] = m
    return out


def finish(module, inputs, output, weights=None):
    w_out = short(torch.randn(output.shape))
    print(f"w_out {fmt(w_out)}")
    loss = (output * w_out).sum()
    if weights is not None:
        w_weights = short(torch.randn(weights.shape))
        print(f"w_weights {fmt(w_weights)}")
        loss = loss + (weights * w_weights).sum()
    print(f"output {fmt(output)}")
    if weights is not None:
        print(f"weights {fmt(weights)}")
    loss.backward()
    for name, t in inputs.items():
        print(f"grad.{name} {fmt(t.grad)}")
    for pname, p in module.named_parameters():
        print(f"grad.param.{pname} {fmt(p.grad)}")
    print("end")


def mha_case(name, L, S, N, mha_opts, self_attention, masks, need_weights=True, average=True):
    opts = dict(embed_dim=E, num_heads=H, L=L, S=S, N=N, need_weights=need_weights,
                average_attn_weights=average, self_attention=self_attention)
    opts.update(mha_opts)
    print(options_line(name, opts))
    module = prepare(nn.MultiheadAttention(E, H, **mha_opts))
    batch_first = mha_opts.get("batch_first", False)
    kdim, vdim = mha_opts.get("kdim", E), mha_opts.get("vdim", E)

    def shaped(seq, dim):
        if N == 0:
            return torch.randn(seq, dim)
        return torch.randn(N, seq, dim) if batch_first else torch.randn(seq, N, dim)

    if self_attention:
        inputs = emit_inputs({"query": shaped(L, E)})
        q = k = v = inputs["query"]
    else:
        inputs = emit_inputs({"query": shaped(L, E), "key": shaped(S, kdim),
                              "value": shaped(S, vdim)})
        q, k, v = inputs["query"], inputs["key"], inputs["value"]
    m = emit_masks(masks)
    out, weights = module(q, k, v, key_padding_mask=m.get("key_padding_mask"),
                          need_weights=need_weights, attn_mask=m.get("attn_mask"),
                          average_attn_weights=average)
    finish(module, inputs, out, weights if need_weights else None)


def causal(n):
    return torch.triu(torch.full((n, n), float("-inf")), 1)


def padding(N, S, last):
    m = torch.zeros(N, S, dtype=torch.bool)
    m[:, S - last:] = True
    m[0, :] = False
    return m


def encoder_layer_case(name, S, N, layer_opts, masks):
    opts = dict(d_model=E, nhead=H, S=S, N=N, dim_feedforward=16)
    opts.update(layer_opts)
    print(options_line(name, opts))
    module = prepare(nn.TransformerEncoderLayer(E, H, dim_feedforward=16, dropout=0.0,
                                                **layer_opts))
    bf = layer_opts.get("batch_first", False)
    inputs = emit_inputs({"src": torch.randn(N, S, E) if bf else torch.randn(S, N, E)})
    m = emit_masks(masks)
    out = module(inputs["src"], src_mask=m.get("src_mask"),
                 src_key_padding_mask=m.get("src_key_padding_mask"))
    finish(module, inputs, out)


def decoder_layer_case(name, T, S, N, layer_opts, masks):
    opts = dict(d_model=E, nhead=H, T=T, S=S, N=N, dim_feedforward=16)
    opts.update(layer_opts)
    print(options_line(name, opts))
    module = prepare(nn.TransformerDecoderLayer(E, H, dim_feedforward=16, dropout=0.0,
                                                **layer_opts))
    bf = layer_opts.get("batch_first", False)
    shape = (lambda n: (N, n, E)) if bf else (lambda n: (n, N, E))
    inputs = emit_inputs({"tgt": torch.randn(*shape(T)), "memory": torch.randn(*shape(S))})
    m = emit_masks(masks)
    out = module(inputs["tgt"], inputs["memory"], tgt_mask=m.get("tgt_mask"),
                 memory_mask=m.get("memory_mask"),
                 tgt_key_padding_mask=m.get("tgt_key_padding_mask"),
                 memory_key_padding_mask=m.get("memory_key_padding_mask"))
    finish(module, inputs, out)


def encoder_case(name, S, N, layers):
    print(options_line(name, dict(d_model=E, nhead=H, S=S, N=N, dim_feedforward=16,
                                  num_layers=layers, norm=True)))
    layer = nn.TransformerEncoderLayer(E, H, dim_feedforward=16, dropout=0.0)
    module = prepare(nn.TransformerEncoder(layer, layers, norm=nn.LayerNorm(E),
                                           enable_nested_tensor=False))
    inputs = emit_inputs({"src": torch.randn(S, N, E)})
    m = emit_masks({"src_mask": causal(S)})
    out = module(inputs["src"], mask=m["src_mask"])
    finish(module, inputs, out)


def transformer_case(name, S, T, N):
    print(options_line(name, dict(d_model=E, nhead=H, S=S, T=T, N=N, dim_feedforward=16,
                                  num_encoder_layers=1, num_decoder_layers=2)))
    module = prepare(nn.Transformer(E, H, 1, 2, dim_feedforward=16, dropout=0.0))
    inputs = emit_inputs({"src": torch.randn(S, N, E), "tgt": torch.randn(T, N, E)})
    m = emit_masks({"tgt_mask": causal(T), "src_key_padding_mask": padding(N, S, 1)})
    out = module(inputs["src"], inputs["tgt"], tgt_mask=m["tgt_mask"],
                 src_key_padding_mask=m["src_key_padding_mask"],
                 memory_key_padding_mask=m["src_key_padding_mask"])
    finish(module, inputs, out)


def main():
    mha_case("mha_self", 4, 4, 2, {}, True, {})
    mha_case("mha_cross_kdim_vdim", 3, 5, 2, {"kdim": 6, "vdim": 5, "batch_first": True}, False,
             {"key_padding_mask": padding(2, 5, 2)}, average=False)
    mha_case("mha_bias_kv_zero_attn", 4, 3, 2, {"add_bias_kv": True, "add_zero_attn": True},
             False, {"attn_mask": torch.randn(4, 3)}, need_weights=False)
    mha_case("mha_3d_bool_mask_and_padding", 3, 4, 2, {}, False,
             {"attn_mask": torch.rand(2 * H, 3, 4) > 0.7, "key_padding_mask": padding(2, 4, 1)},
             need_weights=False)
    mha_case("mha_unbatched_no_bias", 3, 3, 0, {"bias": False}, True, {"attn_mask": causal(3)})
    encoder_layer_case("encoder_layer_post_norm", 5, 2, {},
                       {"src_mask": causal(5), "src_key_padding_mask": padding(2, 5, 2)})
    encoder_layer_case("encoder_layer_norm_first_gelu_batch_first", 4, 3,
                       {"norm_first": True, "activation": "gelu", "batch_first": True}, {})
    decoder_layer_case("decoder_layer_post_norm", 4, 5, 2, {},
                       {"tgt_mask": causal(4), "memory_key_padding_mask": padding(2, 5, 1)})
    decoder_layer_case("decoder_layer_norm_first_batch_first", 3, 4, 2,
                       {"norm_first": True, "batch_first": True},
                       {"memory_mask": torch.randn(3, 4)})
    encoder_case("encoder_two_layers_norm", 4, 2, 2)
    transformer_case("transformer", 5, 4, 2)


if __name__ == "__main__":
    main()
