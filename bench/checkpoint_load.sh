#!/usr/bin/env bash
# bench/checkpoint_load.sh EMBER_CHECKPOINT_LOAD PYTHON [DIR] [MIB]: load time and peak memory of
# a MIB-MiB (default 1024) checkpoint in ember and in torch.load, on the same files: a state_dict
# of 16 float32 tensors written by PYTHON's torch.save (zip), the same in the legacy format, and
# as a .safetensors file. Each load runs in a fresh process, three times after a warm-up read (the
# page cache holds the file: this measures the reader, not the disk); medians are printed.
set -euo pipefail
loader=$1 python=$2 dir=${3:-$(mktemp -d)} mib=${4:-1024}
"$python" - "$dir" "$mib" <<'PY'
import collections, json, os, struct, sys
import torch
d, mib = sys.argv[1], int(sys.argv[2])
n = mib * 1024 * 1024 // 4 // 16
sd = collections.OrderedDict((f"layer{i}.weight", torch.full((n,), float(i))) for i in range(16))
if not os.path.exists(f"{d}/zip.pt"):
    torch.save(sd, f"{d}/zip.pt")
    torch.save(sd, f"{d}/legacy.pt", _use_new_zipfile_serialization=False)
    header, off = {}, 0
    for k, t in sd.items():
        header[k] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [off, off + t.numel() * 4]}
        off += t.numel() * 4
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(f"{d}/model.safetensors", "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h)
        for t in sd.values():
            f.write(t.numpy().tobytes())
PY
median() { sort -n | sed -n 2p; }
for file in zip.pt legacy.pt model.safetensors; do
  cat "$dir/$file" > /dev/null
  ember=() torch=()
  for _ in 1 2 3; do
    ember+=("$("$loader" "$dir/$file")")
    torch+=("$("$python" - "$dir/$file" <<'PY'
import resource, sys, time
import torch
path = sys.argv[1]
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter()
if path.endswith(".safetensors"):
    from safetensors.torch import load_file
    sd = load_file(path)
else:
    sd = torch.load(path, weights_only=path.endswith(".pt"))
took = time.perf_counter() - start
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(f"load_s={took:.3f} peak_rss_before_MiB={before/1024:.1f} peak_rss_after_MiB={after/1024:.1f}")
PY
)")
  done
  field() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p"; }
  e_s=$(printf '%s\n' "${ember[@]}" | field load_s | median)
  e_rise=$(printf '%s\n' "${ember[@]}" | awk '{for(i=1;i<=NF;i++){split($i,a,"=");v[a[1]]=a[2]} print v["peak_rss_after_MiB"]-v["peak_rss_before_MiB"]}' | median)
  t_s=$(printf '%s\n' "${torch[@]}" | field load_s | median)
  t_rise=$(printf '%s\n' "${torch[@]}" | awk '{for(i=1;i<=NF;i++){split($i,a,"=");v[a[1]]=a[2]} print v["peak_rss_after_MiB"]-v["peak_rss_before_MiB"]}' | median)
  echo "$file ($(du -m "$dir/$file" | cut -f1) MiB): ember ${e_s} s, peak RSS +${e_rise} MiB | torch ${t_s} s, peak RSS +${t_rise} MiB"
done
