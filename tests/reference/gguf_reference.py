#!/usr/bin/env python3
"""tests/reference/gguf_reference.py: hand-made GGUF fixtures for the GGUF reader (issue 35).

Builds GGUF files byte by byte with struct (no gguf package needed), following the format's
documentation (ggml's docs/gguf.md and the block formats of ggml-common.h), and computes the
values each tensor must read as independently with numpy: every quantized block is packed from
values chosen here (scales, mins, quants), and the expected floats come from those chosen values
by the formula of the format, never from the packed bytes. Run with any Python that has numpy
(.venv/bin/python this_file). Writes into tests/reference/fixtures/gguf/:

- all_types_v3.gguf: version 3, general.alignment 64, metadata of every value type (the 12
  scalar types, an array of each, an array of arrays, an empty array), and one tensor of each type
  ember reads: F32 (2-D and 3-D), F16, BF16, Q8_0, Q4_0, Q4_1, Q4_K, Q5_K, Q6_K; their data is
  laid out in the reverse of the info order with gaps between them.
  all_types_expected.safetensors: each tensor's expected values (float32; F16 and BF16 tensors
  as their own dtype), under the same names, in ember's shape order (GGUF's ne reversed).
- v2_default_alignment.gguf: version 2 without general.alignment (so 32), an F32 and a Q8_0
  tensor whose data follow each other at the 32-byte boundary.
- llama_tiny.gguf: a 2-layer Llama (general.architecture "llama", 4 heads, 2 key/value heads,
  hidden 32, llama.cpp's tensor names) whose q and k weights are stored permuted as llama.cpp's
  converter does (rows reshaped to (heads, 2, head_dim / 2) and the two last of those swapped);
  layer 1's attn_q and attn_k are Q8_0, the rest F32. llama_tiny_hf.safetensors: the same weights under the Hugging Face names in Hugging Face's
  row order (what gguf_to_hf_llama must return).

and the fuzz seed corpus fuzz/corpus/gguf/ (valid_* small files -- valid_llama a one-layer Llama
the fuzz target also maps to the Hugging Face names --, valid_tokenizer a byte-level BPE tokenizer
in the metadata that the target turns into tokenizer.json and runs, valid_spm_tokenizer a
SentencePiece one --, invalid_* ones the reader must refuse).

If PyPI's gguf package is importable (pip install gguf in a scratch venv), the script also checks
its own files against it: gguf.GGUFReader reads the metadata and the tensor infos back, and
gguf.quants.dequantize must give the expected values exactly. That is a cross-check only; nothing
here depends on it.
"""
import json
import os
import struct

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "fixtures", "gguf")
CORPUS = os.path.join(HERE, "..", "..", "fuzz", "corpus", "gguf")

# metadata value types
U8, I8, U16, I16, U32, I32, F32, BOOL, STRING, ARRAY, U64, I64, F64 = range(13)
SCALAR_FORMAT = {U8: "<B", I8: "<b", U16: "<H", I16: "<h", U32: "<I", I32: "<i", F32: "<f",
                 BOOL: "<?", U64: "<Q", I64: "<q", F64: "<d"}
# ggml tensor types: number, elements per block, bytes per block
TYPES = {"F32": (0, 1, 4), "F16": (1, 1, 2), "Q4_0": (2, 32, 18), "Q4_1": (3, 32, 20),
         "Q8_0": (8, 32, 34), "Q4_K": (12, 256, 144), "Q5_K": (13, 256, 176),
         "Q6_K": (14, 256, 210), "BF16": (30, 1, 2)}

rng = np.random.default_rng(35)


# ---------------------------------------------------------------- the container

def gstr(s) -> bytes:
    b = s.encode("utf-8") if isinstance(s, str) else s
    return struct.pack("<Q", len(b)) + b


def value(t: int, v) -> bytes:
    if t == STRING:
        return gstr(v)
    if t == ARRAY:
        elem_type, items = v
        out = struct.pack("<IQ", elem_type, len(items))
        return out + b"".join(value(elem_type, x) for x in items)
    return struct.pack(SCALAR_FORMAT[t], v)


def kv(key: str, t: int, v) -> bytes:
    return gstr(key) + struct.pack("<I", t) + value(t, v)


def gguf(version: int, metadata: list, tensors: list, alignment: int = 32, order=None,
         gap: int = 0) -> bytes:
    """tensors: (name, type name, ember shape, data bytes). Data placed in `order` (indices, the
    info order by default), each at the next multiple of the alignment plus `gap` alignments."""
    order = list(range(len(tensors))) if order is None else order
    offsets = [0] * len(tensors)
    data = b""
    for i in order:
        data += b"\0" * ((-len(data)) % alignment)
        data += b"\0" * (gap * alignment)
        offsets[i] = len(data)
        data += tensors[i][3]
    head = b"GGUF" + struct.pack("<IQQ", version, len(tensors), len(metadata))
    head += b"".join(kv(*m) for m in metadata)
    for (name, tname, shape, _), off in zip(tensors, offsets):
        ne = list(reversed(shape))
        head += gstr(name) + struct.pack("<I", len(ne)) + struct.pack(f"<{len(ne)}Q", *ne)
        number = TYPES[tname][0] if isinstance(tname, str) else tname  # a raw number: broken files
        head += struct.pack("<IQ", number, off)
    head += b"\0" * ((-len(head)) % alignment)
    return head + data


def safetensors(tensors: dict) -> bytes:
    """A safetensors file by hand (dtype from the numpy dtype; bfloat16 given as uint16 bits)."""
    header, data = {}, b""
    for name, (dtype, a) in tensors.items():
        raw = np.ascontiguousarray(a).tobytes()
        header[name] = {"dtype": dtype, "shape": list(a.shape),
                        "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    h = json.dumps(header).encode()
    h += b" " * ((-len(h)) % 8)
    return struct.pack("<Q", len(h)) + h + data


# ---------------------------------------------------------------- the block formats

def f16(x) -> np.float16:
    return np.float16(x)


def f16_bytes(x: np.float16) -> bytes:
    return np.array([x], dtype="<f2").tobytes()


def pack_nibbles(lo: np.ndarray, hi: np.ndarray) -> bytes:
    return (lo.astype(np.uint8) | (hi.astype(np.uint8) << 4)).tobytes()


def q8_0(d: float, q: np.ndarray):
    """One block: q int8[32]; value q * d."""
    d = f16(d)
    data = f16_bytes(d) + q.astype(np.int8).tobytes()
    return data, q.astype(np.float32) * np.float32(d)


def q4_0(d: float, q: np.ndarray):
    """q in 0..15 [32]; value (q - 8) * d; element j < 16 low nibble of byte j, j + 16 high."""
    d = f16(d)
    data = f16_bytes(d) + pack_nibbles(q[:16], q[16:])
    return data, (q.astype(np.float32) - np.float32(8)) * np.float32(d)


def q4_1(d: float, m: float, q: np.ndarray):
    """q in 0..15 [32]; value q * d + m."""
    d, m = f16(d), f16(m)
    data = f16_bytes(d) + f16_bytes(m) + pack_nibbles(q[:16], q[16:])
    return data, q.astype(np.float32) * np.float32(d) + np.float32(m)


def k_scales(sc: np.ndarray, mn: np.ndarray) -> bytes:
    """Eight 6-bit scales and mins in 12 bytes: bytes 0-3 sc[0..3] with the top two bits of
    sc[4..7] in bits 6-7; bytes 4-7 mn[0..3] with the top two bits of mn[4..7]; bytes 8-11 the low
    nibbles of sc[4..7] (low) and mn[4..7] (high)."""
    b = bytearray(12)
    for j in range(4):
        b[j] = int(sc[j]) | ((int(sc[j + 4]) >> 4) << 6)
        b[j + 4] = int(mn[j]) | ((int(mn[j + 4]) >> 4) << 6)
        b[j + 8] = (int(sc[j + 4]) & 15) | ((int(mn[j + 4]) & 15) << 4)
    return bytes(b)


def k_quants_order(q: np.ndarray) -> tuple:
    """The 128 bytes of 4-bit quants of a Q4_K/Q5_K super-block: for c in 0..3 the 32 bytes hold
    elements 64c + l (low nibbles) and 64c + 32 + l (high nibbles)."""
    lo = np.concatenate([q[64 * c:64 * c + 32] for c in range(4)])
    hi = np.concatenate([q[64 * c + 32:64 * c + 64] for c in range(4)])
    return lo, hi


def q4_k(d: float, dmin: float, sc: np.ndarray, mn: np.ndarray, q: np.ndarray):
    """Super-block of 256: 8 sub-blocks of 32, value (d * sc[s]) * q - dmin * mn[s]."""
    d, dmin = f16(d), f16(dmin)
    lo, hi = k_quants_order(q)
    data = f16_bytes(d) + f16_bytes(dmin) + k_scales(sc, mn) + pack_nibbles(lo, hi)
    s = np.repeat(np.arange(8), 32)
    scale = np.float32(d) * sc[s].astype(np.float32)
    minimum = np.float32(dmin) * mn[s].astype(np.float32)
    return data, scale * q.astype(np.float32) - minimum


def q5_k(d: float, dmin: float, sc: np.ndarray, mn: np.ndarray, q: np.ndarray):
    """As Q4_K with 5-bit q: the fifth bit of element 64c + l is bit 2c of qh[l], of element
    64c + 32 + l bit 2c + 1."""
    d, dmin = f16(d), f16(dmin)
    qh = np.zeros(32, dtype=np.uint8)
    for c in range(4):
        for l in range(32):
            qh[l] |= ((int(q[64 * c + l]) >> 4) & 1) << (2 * c)
            qh[l] |= ((int(q[64 * c + 32 + l]) >> 4) & 1) << (2 * c + 1)
    lo, hi = k_quants_order(q & 15)
    data = (f16_bytes(d) + f16_bytes(dmin) + k_scales(sc, mn) + qh.tobytes() +
            pack_nibbles(lo, hi))
    s = np.repeat(np.arange(8), 32)
    scale = np.float32(d) * sc[s].astype(np.float32)
    minimum = np.float32(dmin) * mn[s].astype(np.float32)
    return data, scale * q.astype(np.float32) - minimum


def q6_k(d: float, sc: np.ndarray, q: np.ndarray):
    """Super-block of 256, 16 sub-blocks of 16 with int8 scales; q 6-bit; value
    (d * sc[e // 16]) * (q - 32). Layout ql[128] (low 4 bits), qh[64] (top 2 bits), scales[16], d.
    Each half h of 128 elements: element 128h + 32k + l (k = 0..3, l < 32) has its low bits in
    ql[64h + l + 32 * (k % 2)] (low nibble for k < 2, high for k >= 2) and its top bits in bits
    2k, 2k + 1 of qh[32h + l]."""
    d = f16(d)
    ql = np.zeros(128, dtype=np.uint8)
    qh = np.zeros(64, dtype=np.uint8)
    for h in range(2):
        for k in range(4):
            for l in range(32):
                v = int(q[128 * h + 32 * k + l])
                i = 64 * h + l + 32 * (k % 2)
                ql[i] |= (v & 15) << (4 if k >= 2 else 0)
                qh[32 * h + l] |= (v >> 4) << (2 * k)
    data = ql.tobytes() + qh.tobytes() + sc.astype(np.int8).tobytes() + f16_bytes(d)
    scale = np.float32(d) * sc[np.arange(256) // 16].astype(np.float32)
    return data, scale * (q.astype(np.float32) - np.float32(32))


def quantized_tensor(kind: str, rows: int, cols: int):
    """A [rows, cols] tensor of `kind` from chosen block values; returns (bytes, expected)."""
    per_block = TYPES[kind][1]
    data, values = b"", []
    ds = [0.0123, -0.5, 2.0, 1e-6, 0.25, 3.5, -0.03125, 0.75]  # 1e-6 is a float16 subnormal
    for b in range(rows * cols // per_block):
        d = ds[b % len(ds)]
        if kind == "Q8_0":
            q = rng.integers(-128, 128, 32)
            q[:2] = [-128, 127]
            blk = q8_0(d, q)
        elif kind == "Q4_0":
            q = rng.integers(0, 16, 32)
            q[:2] = [0, 15]
            blk = q4_0(d, q)
        elif kind == "Q4_1":
            q = rng.integers(0, 16, 32)
            blk = q4_1(d, -1.5 + b, q)
        elif kind in ("Q4_K", "Q5_K"):
            bits = 4 if kind == "Q4_K" else 5
            q = rng.integers(0, 1 << bits, 256)
            q[:2] = [0, (1 << bits) - 1]
            sc = rng.integers(0, 64, 8)
            mn = rng.integers(0, 64, 8)
            sc[[0, 7]] = [63, 48]  # top bits set in the low and the high half
            mn[[3, 4]] = [0, 63]
            f = q4_k if kind == "Q4_K" else q5_k
            blk = f(d, 0.01 * (b + 1), sc, mn, q)
        elif kind == "Q6_K":
            q = rng.integers(0, 64, 256)
            q[:2] = [0, 63]
            sc = rng.integers(-128, 128, 16)
            sc[:2] = [-128, 127]
            blk = q6_k(d, sc, q)
        data += blk[0]
        values.append(blk[1])
    return data, np.concatenate(values).astype(np.float32).reshape(rows, cols)


# ---------------------------------------------------------------- the fixtures

def all_types():
    scalars = [("u8", U8, 200), ("i8", I8, -100), ("u16", U16, 60000), ("i16", I16, -30000),
               ("u32", U32, 4000000000), ("i32", I32, -2000000000), ("f32", F32, 1.5),
               ("bool", BOOL, True), ("string", STRING, "h\u00e9llo \u2713"),
               ("u64", U64, 2**63 + 5), ("i64", I64, -2**62), ("f64", F64, 0.1)]
    arrays = {U8: [0, 255], I8: [-128, 127], U16: [1, 65535], I16: [-32768, 32767],
              U32: [7, 2**32 - 1], I32: [-(2**31), 5], F32: [0.5, -2.0], BOOL: [False, True],
              STRING: ["a", "", "\u00fc\u00df"], U64: [2**64 - 1], I64: [-(2**63), 1],
              F64: [1e300, -0.25]}
    names = {U8: "u8", I8: "i8", U16: "u16", I16: "i16", U32: "u32", I32: "i32", F32: "f32",
             BOOL: "bool", STRING: "string", U64: "u64", I64: "i64", F64: "f64"}
    meta = [("general.architecture", STRING, "ember-test"), ("general.alignment", U32, 64)]
    meta += [("test." + n, t, v) for n, t, v in scalars]
    meta += [("test.array." + names[t], ARRAY, (t, v)) for t, v in arrays.items()]
    meta += [("test.array.nested", ARRAY, (ARRAY, [(I32, [1, 2]), (I32, [3]), (I32, [])])),
             ("test.array.empty", ARRAY, (F32, []))]

    tensors, expected = [], {}
    a = np.array([[1.0, -2.5, 3.25], [0.0, -0.0, 1e-30]], dtype=np.float32)
    tensors.append(("f32", "F32", a.shape, a.astype("<f4").tobytes()))
    expected["f32"] = ("F32", a)
    a3 = (np.arange(24, dtype=np.float32) - 11.5).reshape(2, 3, 4)
    tensors.append(("f32_3d", "F32", a3.shape, a3.astype("<f4").tobytes()))
    expected["f32_3d"] = ("F32", a3)
    h = np.array([[1.0, -2.0], [65504.0, 6e-8], [0.333, -1e-3]], dtype=np.float16)
    tensors.append(("f16", "F16", h.shape, h.astype("<f2").tobytes()))
    expected["f16"] = ("F16", h)
    bf = np.array([[0x3f80, 0xc020, 0x7f7f, 0x0001], [0x4049, 0xbf00, 0x0000, 0x8000]],
                  dtype=np.uint16)  # 1, -2.5, the largest, a subnormal; 3.140625, -0.5, 0, -0
    tensors.append(("bf16", "BF16", bf.shape, bf.astype("<u2").tobytes()))
    expected["bf16"] = ("BF16", bf)
    for kind, rows, cols in [("Q8_0", 2, 64), ("Q4_0", 3, 32), ("Q4_1", 2, 64),
                             ("Q4_K", 2, 256), ("Q5_K", 2, 256), ("Q6_K", 2, 256)]:
        data, values = quantized_tensor(kind, rows, cols)
        name = kind.lower()
        tensors.append((name, kind, (rows, cols), data))
        expected[name] = ("F32", values)
    order = list(reversed(range(len(tensors))))
    return gguf(3, meta, tensors, alignment=64, order=order, gap=1), meta, tensors, expected


def permute(w: np.ndarray, heads: int) -> np.ndarray:
    """llama.cpp's converter on a q or k weight (or bias): rows seen as (heads, 2, head_dim / 2)
    with the last two swapped."""
    return (w.reshape(heads, 2, w.shape[0] // heads // 2, *w.shape[1:])
            .swapaxes(1, 2).reshape(w.shape))


def llama_tiny(hidden=32, heads=4, kv_heads=2, ffn=32, vocab=12, layers=2):
    head_dim = hidden // heads
    meta = [("general.architecture", STRING, "llama"), ("general.name", STRING, "tiny"),
            ("llama.context_length", U32, 64), ("llama.embedding_length", U32, hidden),
            ("llama.block_count", U32, layers), ("llama.feed_forward_length", U32, ffn),
            ("llama.attention.head_count", U32, heads),
            ("llama.attention.head_count_kv", U32, kv_heads),
            ("llama.attention.layer_norm_rms_epsilon", F32, 1e-5),
            ("llama.rope.freq_base", F32, 500000.0), ("llama.vocab_size", U32, vocab)]

    def w(*shape):
        return rng.standard_normal(shape).astype(np.float32)

    gg, hf, stored_values = [], {}, {}

    def f32(gname, hname, a, stored=None):
        stored = a if stored is None else stored
        gg.append((gname, "F32", a.shape, stored.astype("<f4").tobytes()))
        hf[hname] = ("F32", a)

    f32("token_embd.weight", "model.embed_tokens.weight", w(vocab, hidden))
    for i in range(layers):
        p, h = f"blk.{i}.", f"model.layers.{i}."
        f32(p + "attn_norm.weight", h + "input_layernorm.weight", w(hidden))
        for g, name, rows, n in [("attn_q", "q_proj", hidden, heads),
                                 ("attn_k", "k_proj", kv_heads * head_dim, kv_heads)]:
            if i == 0:
                a = w(rows, hidden)
                f32(p + g + ".weight", h + "self_attn." + name + ".weight", a, permute(a, n))
            else:
                # stored Q8_0 as the converter leaves it (permuted); Hugging Face's weight is
                # the dequantized one with rows put back: stored row r is HF row perm[r]
                data, stored = quantized_tensor("Q8_0", rows, hidden)
                perm = permute(np.arange(rows), n)
                a = np.empty_like(stored)
                a[perm] = stored
                gg.append((p + g + ".weight", "Q8_0", (rows, hidden), data))
                stored_values[p + g + ".weight"] = ("F32", stored)
                hf[h + "self_attn." + name + ".weight"] = ("F32", a)
        f32(p + "attn_v.weight", h + "self_attn.v_proj.weight", w(kv_heads * head_dim, hidden))
        f32(p + "attn_output.weight", h + "self_attn.o_proj.weight", w(hidden, hidden))
        f32(p + "ffn_norm.weight", h + "post_attention_layernorm.weight", w(hidden))
        f32(p + "ffn_gate.weight", h + "mlp.gate_proj.weight", w(ffn, hidden))
        f32(p + "ffn_up.weight", h + "mlp.up_proj.weight", w(ffn, hidden))
        f32(p + "ffn_down.weight", h + "mlp.down_proj.weight", w(hidden, ffn))
    f32("output_norm.weight", "model.norm.weight", w(hidden))
    f32("output.weight", "lm_head.weight", w(vocab, hidden))
    return gguf(3, meta, gg), hf, meta, gg, stored_values


def byte_level_chars() -> list:
    """GPT-2's ByteLevel alphabet: the character each byte 0..255 stands for."""
    keep = list(range(33, 127)) + list(range(161, 173)) + list(range(174, 256))
    chars, extra = {}, 0
    for b in range(256):
        if b in keep:
            chars[b] = chr(b)
        else:
            chars[b] = chr(256 + extra)
            extra += 1
    return [chars[b] for b in range(256)]


def tokenizer_only() -> bytes:
    """A GGUF with no tensors and a byte-level BPE tokenizer in its metadata: every byte's
    token, three merges, a BOS and an EOS special token."""
    tokens = byte_level_chars() + ["He", "ll", "Hell", "<s>", "</s>"]
    merges = ["H e", "l l", "He ll"]
    types = [1] * (len(tokens) - 2) + [3, 3]
    return gguf(3, [("tokenizer.ggml.model", STRING, "gpt2"),
                    ("tokenizer.ggml.pre", STRING, "llama-bpe"),
                    ("tokenizer.ggml.tokens", ARRAY, (STRING, tokens)),
                    ("tokenizer.ggml.token_type", ARRAY, (I32, types)),
                    ("tokenizer.ggml.merges", ARRAY, (STRING, merges)),
                    ("tokenizer.ggml.bos_token_id", U32, len(tokens) - 2),
                    ("tokenizer.ggml.eos_token_id", U32, len(tokens) - 1)], [])


def spm_tokenizer_only() -> bytes:
    """A GGUF with no tensors and a SentencePiece BPE tokenizer ("llama") in its metadata: unknown,
    BOS and EOS, the 256 byte tokens, a few pieces with falling scores and no merges."""
    pieces = ["\u2581", "\u2581H", "el", "lo", "\u2581Hel", "\u2581Hello", "l", "e", "o", "H"]
    tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)] + pieces
    types = [2, 3, 3] + [6] * 256 + [1] * len(pieces)
    scores = [0.0] * 259 + [-float(i) for i in range(len(pieces))]
    return gguf(3, [("tokenizer.ggml.model", STRING, "llama"),
                    ("tokenizer.ggml.tokens", ARRAY, (STRING, tokens)),
                    ("tokenizer.ggml.scores", ARRAY, (F32, scores)),
                    ("tokenizer.ggml.token_type", ARRAY, (I32, types)),
                    ("tokenizer.ggml.bos_token_id", U32, 1),
                    ("tokenizer.ggml.eos_token_id", U32, 2)], [])


def cross_check(path: str, meta: list, tensors: list, expected: dict) -> None:
    try:
        import gguf as gg
    except ImportError:
        print("gguf package not importable: cross-check skipped")
        return
    from gguf import quants
    r = gg.GGUFReader(path)
    for key, t, v in meta:
        assert key in r.fields, key
        elem = v[0] if t == ARRAY else t
        if elem == ARRAY:
            continue  # the package's contents() flattens arrays of arrays
        got = r.fields[key].contents()
        want = v[1] if t == ARRAY else v
        if elem == F32:
            want = np.float32(want).tolist()
        assert got == want, (key, got, want)
    by_name = {t.name: t for t in r.tensors}
    for name, kind, shape, data in tensors:
        t = by_name[name]
        assert t.tensor_type.name == kind, (name, t.tensor_type.name)
        assert list(t.shape) == list(reversed(shape)), (name, t.shape)
        raw = np.frombuffer(data, dtype=np.uint8)
        if kind in ("F32", "F16", "BF16"):
            continue
        got = quants.dequantize(raw.reshape(shape[0], -1), gg.GGMLQuantizationType[kind])
        want = expected[name][1]
        assert got.shape == want.shape, (name, got.shape, want.shape)
        assert np.array_equal(got.astype(np.float32), want), (
            name, np.abs(got - want).max())
    print(f"the gguf package agrees on {os.path.basename(path)}")


def put(path: str, data: bytes) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def main():
    os.makedirs(OUT, exist_ok=True)
    data, meta, tensors, expected = all_types()
    put(os.path.join(OUT, "all_types_v3.gguf"), data)
    put(os.path.join(OUT, "all_types_expected.safetensors"), safetensors(expected))
    cross_check(os.path.join(OUT, "all_types_v3.gguf"), meta, tensors, expected)

    q, qv = quantized_tensor("Q8_0", 1, 64)
    a = np.array([[1.0, 2.0, 3.0]], dtype=np.float32)
    v2 = gguf(2, [("general.name", STRING, "v2")],
              [("a", "F32", a.shape, a.tobytes()), ("q", "Q8_0", (1, 64), q)])
    put(os.path.join(OUT, "v2_default_alignment.gguf"), v2)
    put(os.path.join(OUT, "v2_expected.safetensors"),
        safetensors({"a": ("F32", a), "q": ("F32", qv)}))

    llama, hf, llama_meta, llama_tensors, stored = llama_tiny()
    put(os.path.join(OUT, "llama_tiny.gguf"), llama)
    cross_check(os.path.join(OUT, "llama_tiny.gguf"), llama_meta, llama_tensors, stored)
    put(os.path.join(OUT, "llama_tiny_hf.safetensors"), safetensors(hf))

    # the fuzz seeds: small valid files and broken ones
    put(os.path.join(CORPUS, "valid_all_types"), data)
    put(os.path.join(CORPUS, "valid_v2"), v2)
    put(os.path.join(CORPUS, "valid_no_tensors"),
        gguf(3, [("general.name", STRING, "empty"), ("x", ARRAY, (ARRAY, [(U8, [1])]))], []))
    put(os.path.join(CORPUS, "valid_llama"), llama_tiny(8, 2, 1, 8, 4, 1)[0])
    put(os.path.join(CORPUS, "valid_tokenizer"), tokenizer_only())
    put(os.path.join(CORPUS, "valid_spm_tokenizer"), spm_tokenizer_only())
    put(os.path.join(CORPUS, "invalid_spm_scores"),
        spm_tokenizer_only().replace(b"tokenizer.ggml.scores", b"tokenizer.ggml.scorez"))
    put(os.path.join(CORPUS, "invalid_tokenizer_merge"),
        tokenizer_only().replace(b"He ll", b"He zz"))
    put(os.path.join(CORPUS, "invalid_truncated"), data[: len(data) // 2])
    put(os.path.join(CORPUS, "invalid_v1"), b"GGUF" + struct.pack("<III", 1, 0, 0))
    put(os.path.join(CORPUS, "invalid_big_endian"), b"GGUF" + struct.pack(">IQQ", 3, 0, 0))
    put(os.path.join(CORPUS, "invalid_huge_counts"), b"GGUF" + struct.pack("<IQQ", 3, 2**62, 2**62))
    put(os.path.join(CORPUS, "invalid_string_length"),
        b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", 2**63) + b"key")
    put(os.path.join(CORPUS, "invalid_iq2_type"), gguf(3, [], [("t", 16, (256,), b"\0" * 66)]))
    past_end = gguf(3, [], [("t", "F32", (8,), b"\0" * 32)])
    put(os.path.join(CORPUS, "invalid_past_end"), past_end[:-4])
    print("wrote", OUT, "and", CORPUS)


if __name__ == "__main__":
    main()
