#!/usr/bin/env bash
# run_model_sweep.sh — the figures of docs/timeline.md: modeled time of the
# all-reduces of steps 08-11 (mesh, two-phase, ring; step 11's builtin mesh
# and ring) against P, one figure per message size, with the textbook
# curves (Thakur, Rabenseifner & Gropp 2005) on the same axes, as PNG and
# SVG (gnuplot) in docs/img/, and the CSV they come from.
#
#   bash bench/run_model_sweep.sh                      # a2a3sim, the default model
#   PLATFORM=a5sim bash bench/run_model_sweep.sh
#   MODEL=my.model TAG=mine OUT=/tmp/sweep bash bench/run_model_sweep.sh
#   MODEL=models/simple/a2a3sim.model TAG=a2a3sim-simple bash bench/run_model_sweep.sh
#
# TAG names the files and the figures (default: the platform). After the
# figures it prints, per size, the smallest P from which each ring is
# faster than its mesh (the builtin ones and the hand-written ones), and
# writes them to $OUT/ring_overtakes_mesh_$TAG.csv.
#   PS=2,4,8,16 SIZES=1024,65536 bash bench/run_model_sweep.sh
#   BUILD=build/release bash bench/run_model_sweep.sh  # an existing build
set -euo pipefail
cd "$(dirname "$0")/.."
PLATFORM="${PLATFORM:-a2a3sim}"
TAG="${TAG:-$PLATFORM}"
PS="${PS:-2,3,4,6,8,12,16,24,32,48,64,96,128,192,256}"
SIZES="${SIZES:-1024,32768,262144}"
OUT="${OUT:-docs/img}"
BUILD="${BUILD:-build/bench}"  # or a configured build with -DANYP_BUILD_BENCH=ON
bash scripts/setup.sh >/dev/null
if [[ ! -f "$BUILD/CMakeCache.txt" ]]; then
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DANYP_BUILD_BENCH=ON \
    -DANYP_BUILD_TESTS=OFF -DANYP_BUILD_EXAMPLES=OFF >/dev/null
fi
cmake --build "$BUILD" -j "${JOBS:-2}" --target model_sweep >/dev/null
mkdir -p "$OUT"
csv="$OUT/model_sweep_${TAG}.csv"
model_args=(--platform "$PLATFORM")
[[ -n "${MODEL:-}" ]] && model_args+=(--model "$MODEL")
echo "running: $BUILD/bench/model_sweep ${model_args[*]} --ps $PS --sizes $SIZES --out $csv"
"$BUILD/bench/model_sweep" "${model_args[@]}" --ps "$PS" --sizes "$SIZES" --out "$csv"

data="$(mktemp -d)"
trap 'rm -rf "$data"' EXIT
IFS=',' read -r -a sizes <<<"$SIZES"
direct_label="direct: (P-1)(a + N b + n g)"
if grep -q ',direct_contended$' "$csv"; then
  direct_label="direct, shared ports: (P-1)(a + N b + n g) + (P-1)(P-2)/2 N b"
fi
for size in "${sizes[@]}"; do
  # One file per algorithm: P, modeled us, textbook us.
  for alg in mesh two_phase ring builtin_mesh builtin_ring; do
    awk -F, -v a="$alg" -v s="$size" '$1 == a && $3 == s { print $2, $5, $7 }' "$csv" \
      >"$data/$alg.dat"
  done
  label="$size B"
  ((size >= 1024)) && label="$((size / 1024)) KiB"
  for term in png svg; do
    setterm="set terminal svg size 1280,640 noenhanced dynamic"
    [[ $term == png ]] && setterm="set terminal pngcairo size 1280,640 noenhanced font ',11'"
    gnuplot <<GP
$setterm
set output "$OUT/allreduce_${TAG}_${size}.$term"
set title "All-reduce of $label per rank, modeled on $TAG (points) and textbook (lines)"
set xlabel "P (ranks)"
set ylabel "time (us)"
set logscale xy
set key outside right top
set xrange [1.8:300]
set grid
plot "$data/mesh.dat" using 1:2 with linespoints pt 7 lc 1 title "step 08 mesh", \
     "$data/two_phase.dat" using 1:2 with linespoints pt 5 lc 2 title "step 09 two-phase", \
     "$data/ring.dat" using 1:2 with linespoints pt 9 lc 3 title "step 10 ring", \
     "$data/builtin_mesh.dat" using 1:2 with linespoints pt 6 lc 4 title "step 11 builtin mesh", \
     "$data/builtin_ring.dat" using 1:2 with linespoints pt 8 lc 7 title "step 11 builtin ring", \
     "$data/mesh.dat" using 1:3 with lines dt 2 lw 2 lc 1 title "$direct_label", \
     "$data/ring.dat" using 1:3 with lines dt 2 lw 2 lc 3 title "ring: 2(P-1)a + 2(P-1)/P N b + (P-1)/P n g"
GP
  done
  echo "wrote $OUT/allreduce_${TAG}_${size}.png and .svg"
done

# Where each ring overtakes its mesh: the smallest P of the sweep from
# which the ring's modeled time stays below the mesh's.
cross="$OUT/ring_overtakes_mesh_${TAG}.csv"
echo "size,pair,from_P" >"$cross"
for size in "${sizes[@]}"; do
  for pair in "builtin_ring builtin_mesh" "ring mesh"; do
    read -r ring mesh <<<"$pair"
    from="$(awk -F, -v r="$ring" -v m="$mesh" -v s="$size" '
      $3 == s && $1 == r { t_r[$2] = $5 } $3 == s && $1 == m { t_m[$2] = $5; ps[++k] = $2 }
      END { from = "none"; for (i = k; i >= 1; --i) { p = ps[i]; if (t_r[p] < t_m[p]) from = p; else break }
            print from }' "$csv")"
    echo "$size,$ring<$mesh,$from" >>"$cross"
    echo "size $size B: $ring is faster than $mesh from P = $from"
  done
done
echo "wrote $cross"
