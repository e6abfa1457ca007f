#!/usr/bin/env bash
# tests/cuda_emu/coverage.sh [BUILD_DIR]: line coverage (gcov) of the CUDA kernel files
# (src/backend/cuda/*.cu, kernels and their launchers) in the emulated device's tests. Builds the
# release preset into BUILD_DIR (default build/cuda-emu-coverage) with the kernel files at -O0
# --coverage, runs CTest's cuda_emu tests, and prints per file the executed share of the lines
# gcov counts, the total, every kernel (__global__) that never ran, and the lines never run.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build/cuda-emu-coverage}
cmake --preset release -B "$build" -DEMBER_BUILD_TESTS=ON -DEMBER_CUDA_EMU_COVERAGE=ON >/dev/null
cmake --build "$build" --target ember_cuda_emu_tests >/dev/null
find "$build" -name '*.gcda' -delete
(cd "$build" && ctest -L cuda_emu -j "$(nproc)" --output-on-failure >/dev/null)
objdir="$build/tests/cuda_emu/CMakeFiles/ember_cuda_emu_backend.dir/kernels"
out="$build/coverage"
rm -rf "$out" && mkdir -p "$out"
(cd "$out" && for o in "$OLDPWD/$objdir"/*.o; do gcov -p -o "$o" "${o%.o}" >/dev/null 2>&1 || true; done)
python3 - "$out" <<'PY'
import glob, os, re, sys
out = sys.argv[1]
total = run = 0
unrun_kernels, rows, missed = [], [], []
for path in sorted(glob.glob(os.path.join(out, "*src#backend#cuda#*.cu.gcov"))):
    name = os.path.basename(path).split("#")[-1][:-5]
    lines = []
    in_instantiation = False  # gcov lists each template instantiation again between dashes
    for line in open(path, errors="replace"):
        if line.startswith("------------------"):
            in_instantiation = False
            continue
        if line.startswith("_Z") or line.startswith("ember::"):
            in_instantiation = True
        if in_instantiation:
            continue
        parts = line.split(":", 2)
        if len(parts) < 3:
            continue
        count, number, text = parts[0].strip(), parts[1].strip(), parts[2]
        if number == "0":
            continue
        lines.append((count, int(number), text.rstrip("\n")))
    counted = [(c, n, t) for c, n, t in lines if c != "-"]
    hit = [x for x in counted if not x[0].startswith("#") and not x[0].startswith("=")]
    total += len(counted)
    run += len(hit)
    rows.append((name, len(hit), len(counted)))
    missed += [f"{name}:{n}: {t.strip()}" for c, n, t in counted if c.startswith("#") or c.startswith("=")]
    # A kernel ran when the first counted line from its __global__ line on has a count.
    for i, (c, n, t) in enumerate(lines):
        if "__global__" not in t:
            continue
        m = re.search(r"(\w+)\(", t.split("__launch_bounds__")[0].split("__global__ void")[-1])
        if not m and i + 1 < len(lines):
            m = re.search(r"(\w+)\(", lines[i + 1][2])
        later = [x for x in lines[i:] if x[0] != "-"]
        if later and (later[0][0].startswith("#") or later[0][0].startswith("=")):
            unrun_kernels.append(f"{name}: {m.group(1) if m else '?'}")
for name, h, c in rows:
    print(f"{name:28s} {h:5d} / {c:5d} lines  {100.0 * h / max(c, 1):5.1f} %")
print(f"{'total':28s} {run:5d} / {total:5d} lines  {100.0 * run / max(total, 1):5.1f} %")
print("kernels never launched:", ", ".join(unrun_kernels) if unrun_kernels else "none")
print("lines never run:")
for m in missed:
    print("  " + m)
PY
