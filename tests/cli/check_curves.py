#!/usr/bin/env python3
"""tests/cli/check_curves.py SVG [--log]: curves.svg is valid SVG that renders (rsvg-convert, when
installed: CI installs librsvg2-bin), its two charts have 4 to 8 round-number ticks on each
value axis and 3 to 8 on each step axis, with grid lines, both axis titles and a legend above the plot box; --log: the loss chart's
value axis is logarithmic."""
import struct
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

path, want_log = sys.argv[1], "--log" in sys.argv[2:]
ns = "{http://www.w3.org/2000/svg}"
root = ET.parse(path).getroot()  # raises on malformed XML
assert root.tag == ns + "svg", root.tag
texts = [(t.get("class"), t.text or "", t) for t in root.iter(ns + "text")]
ticks_y = [t for c, t, _ in texts if c == "tick-y"]
ticks_x = [t for c, t, _ in texts if c == "tick-x"]
titles = [t for c, t, _ in texts if c == "axis-title"]
grid = [g for g in root.iter(ns + "line") if g.get("class") == "grid"]
legend = [e for c, _, e in texts if c == "legend"]
assert len(titles) == 4, titles  # x and y of both charts
# 4-8 per value axis; the step axes have 5-8 too unless the run has fewer steps (1 epoch: 0, 1, 2).
assert 8 <= len(ticks_y) <= 16 and 6 <= len(ticks_x) <= 16, (ticks_y, ticks_x)
assert len(grid) == len(ticks_y) + len(ticks_x), len(grid)
for tick in ticks_y + ticks_x:
    float(tick)  # every label a number
    assert len(tick) <= 8, tick  # round numbers, not 0.123456789
rects = [r for r in root.iter(ns + "rect") if r.get("stroke")]
assert len(rects) == 2, rects  # the two plot boxes
top = min(float(r.get("y")) for r in rects)
assert legend and all(float(e.get("y")) < top for e in legend), "the legend is inside a plot"
assert ("(log scale)" in titles[1]) == want_log, titles

with tempfile.NamedTemporaryFile(suffix=".png") as png:
    try:
        subprocess.run(["rsvg-convert", path, "-o", png.name], check=True)
    except FileNotFoundError:
        print("check_curves: rsvg-convert is not installed; rendering not checked")
        sys.exit(0)
    head = open(png.name, "rb").read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n", head
    width, height = struct.unpack(">II", head[16:24])
    assert (width, height) == (int(root.get("width")), int(root.get("height"))), (width, height)
print(f"check_curves: {path}: {len(ticks_y)} value and {len(ticks_x)} step ticks, rendered")
