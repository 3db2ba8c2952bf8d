#!/usr/bin/env bash
# run_footprint.sh — per-rank memory of a run, per ladder step and kernel
# (docs/performance.md, "Footprint per rank"): each example runs at two P
# (its default mode, no checker) under /usr/bin/time; the table gives the
# peak RSS at both, the measured bytes per rank (the slope between them) and
# the plan's per-rank parts at P2 (windows, notify record, rank VMs, divided
# by P2), which a run refused by --memory-limit 1 prints without running.
# (--cost is not used: it records the modeled timeline, which is not part of
# a run's footprint.)
#
#   bash bench/run_footprint.sh                       (P = 2048 and 8192)
#   P1=4096 P2=16384 STEPS="01 07" bash bench/run_footprint.sh
# Steps 09, 10 and k1 need P dividing 120: they run at 60 and 120.
set -euo pipefail
cd "$(dirname "$0")/.."
P1="${P1:-2048}"
P2="${P2:-8192}"
source bench/ladder_examples.sh
echo "per-rank footprint: peak RSS at two P (no checker, default mode), slope per rank, and the plan's per-rank parts"
printf '%-30s %6s %6s %10s %10s %10s %10s %10s %10s\n' example P1 P2 "RSS1 MiB" "RSS2 MiB" "B/rank" \
  "win B/r" "rec B/r" "VM B/r"
for step in $STEPS; do
  bin="$(example_binary "$step")"
  [[ -x "$bin" ]] || continue
  name="$(basename "$bin")"
  p1="$P1" p2="$P2"
  case "$step" in 09 | 10 | k1) p1=60 p2=120 ;; esac
  { /usr/bin/time -f "RSS %M" "$bin" -d "0-$((p1 - 1))"; } >"$work/1" 2>&1 || true
  { /usr/bin/time -f "RSS %M" "$bin" -d "0-$((p2 - 1))"; } >"$work/2" 2>&1 || true
  "$bin" -d "0-$((p2 - 1))" --memory-limit 1 >"$work/plan" 2>&1 || true
  /usr/bin/python3 - "$name" "$p1" "$p2" "$work/1" "$work/2" "$work/plan" <<'PY'
import re, sys
name, p1, p2 = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
out1, out2, plan = (open(f, errors="replace").read() for f in sys.argv[4:7])
unit = {"B": 1, "KiB": 1024, "MiB": 1024**2, "GiB": 1024**3}
def parse(out):
    rss = re.findall(r"^RSS (\d+)$", out, re.M)
    ok = "\nOK" in "\n" + out
    return (int(rss[-1]) * 1024 if rss else float("nan")), ok
r1, ok1 = parse(out1)
r2, ok2 = parse(out2)
parts2 = {}
for key in ("windows", "notify record", "rank VMs"):
    m = re.search(r"[:,] " + key + r" ([0-9.]+) (B|KiB|MiB|GiB)", plan)
    parts2[key] = float(m.group(1)) * unit[m.group(2)] if m else float("nan")
if not (ok1 and ok2):
    bad = out1 if not ok1 else out2
    first = next((l for l in bad.splitlines() if l.strip() and not l.startswith("RSS")), "?")
    print(f"{name:<30} {p1:>6} {p2:>6}  did not run: {first[:100]}")
    sys.exit(0)
slope = (r2 - r1) / (p2 - p1)
print(f"{name:<30} {p1:>6} {p2:>6} {r1 / 2**20:>10.1f} {r2 / 2**20:>10.1f} {slope:>10.0f} "
      f"{parts2['windows'] / p2:>10.0f} {parts2['notify record'] / p2:>10.0f} {parts2['rank VMs'] / p2:>10.0f}")
PY
done
