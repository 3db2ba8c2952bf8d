#!/usr/bin/env bash
# run_decision_curves.sh — the figures of docs/collectives.md §6: for each
# platform model, the allreduce algorithm AllreduceMode::Auto runs at every
# P = 2 .. 1024 and 8 B .. 64 MiB per rank, beside Open MPI 4.1's choice for
# the same point, and every candidate's modeled time against P at three
# sizes, as PNG and SVG (gnuplot) in docs/img/ with the CSV they come from.
# Open MPI's choices come from its tuned rules (bench/openmpi_tuned_rules.hpp);
# where mpicc is installed, bench/openmpi_choice_probe.c first observes the
# installed Open MPI's real choice under mpirun at P = 2 .. 32 and the
# script reports how many points agree with the rules.
#
#   bash bench/run_decision_curves.sh                    # a2a3sim and a5sim
#   PLATFORMS=a5sim bash bench/run_decision_curves.sh
#   PROBE_PS=2,4 OUT=/tmp/curves bash bench/run_decision_curves.sh
#   BUILD=build/bench bash bench/run_decision_curves.sh  # an existing build
set -euo pipefail
cd "$(dirname "$0")/.."
PLATFORMS="${PLATFORMS:-a2a3sim a5sim}"
PS="${PS:-2,3,4,6,8,12,16,24,32,48,64,96,128,192,256,384,512,768,1024}"
SIZES="${SIZES:-8,32,128,512,2048,8192,32768,131072,524288,2097152,8388608,33554432,67108864}"
PROBE_PS="${PROBE_PS:-2,3,4,5,6,8,12,16,24,32}"
OUT="${OUT:-docs/img}"
BUILD="${BUILD:-build/bench}"  # or a configured build with -DANYP_BUILD_BENCH=ON
bash scripts/setup.sh >/dev/null
if [[ ! -f "$BUILD/CMakeCache.txt" ]]; then
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DANYP_BUILD_BENCH=ON \
    -DANYP_BUILD_TESTS=OFF -DANYP_BUILD_EXAMPLES=OFF >/dev/null
fi
cmake --build "$BUILD" -j "${JOBS:-2}" --target decision_curves >/dev/null
mkdir -p "$OUT"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
IFS=',' read -r -a sizes <<<"$SIZES"

for platform in $PLATFORMS; do
  csv="$OUT/decision_curves_${platform}.csv"
  echo "running: $BUILD/bench/decision_curves --platform $platform --ps $PS --sizes $SIZES --out $csv"
  "$BUILD/bench/decision_curves" --platform "$platform" --ps "$PS" --sizes "$SIZES" --out "$csv"
done

# Open MPI's observed choices against the transcribed rules (the rules do
# not depend on the platform: any CSV holds them).
if command -v mpicc >/dev/null && command -v mpirun >/dev/null; then
  mpicc -O2 -rdynamic bench/openmpi_choice_probe.c -o "$work/probe" -ldl
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 TMPDIR="$work"
  IFS=',' read -r -a probe_ps <<<"$PROBE_PS"
  for P in "${probe_ps[@]}"; do
    mpirun --oversubscribe -n "$P" "$work/probe" "${sizes[@]}" >>"$work/observed.csv"
  done
  rules="$OUT/decision_curves_${PLATFORMS%% *}.csv"
  awk -F, 'NR == FNR { seen[$1 "," $2] = $3; next }
           FNR > 1 && $5 == 1 && ($1 "," $2) in seen {
             n++; if (seen[$1 "," $2] == $6) same++
             else print "  differs: P=" $1 " bytes=" $2 ": observed " seen[$1 "," $2] ", rules " $6 }
           END { printf "Open MPI %s here, observed under mpirun: %d of %d points agree with the rules\n",
                        ver, same, n }' ver="$(mpirun --version | head -1 | awk '{print $NF}')" \
    "$work/observed.csv" "$rules"
else
  echo "mpicc not found: Open MPI's choices are the transcribed rules only"
fi

algorithms=(Mesh Ring RecursiveDoubling Rabenseifner Tree)
openmpi=(basic_linear nonoverlapping recursive_doubling ring segmented_ring rabenseifner)
for platform in $PLATFORMS; do
  csv="$OUT/decision_curves_${platform}.csv"
  # The choice maps: one file per algorithm of the points where it runs.
  for a in "${algorithms[@]}"; do
    awk -F, -v a="$a" '$3 == a && $5 == 1 { print $1, $2 }' "$csv" >"$work/auto_$a.dat"
  done
  for a in "${openmpi[@]}"; do
    awk -F, -v a="$a" 'FNR > 1 && $5 == 1 && $6 == a { print $1, $2 }' "$csv" >"$work/ompi_$a.dat"
  done
  # The candidates against P at three sizes.
  for size in 8 32768 67108864; do
    for a in "${algorithms[@]}"; do
      awk -F, -v a="$a" -v s="$size" '$3 == a && $2 == s { print $1, $4 }' "$csv" \
        >"$work/time_${size}_$a.dat"
    done
  done
  for term in png svg; do
    setterm="set terminal svg size 1400,620 noenhanced dynamic"
    [[ $term == png ]] && setterm="set terminal pngcairo size 1400,620 noenhanced font ',11'"
    gnuplot <<GP
$setterm
set output "$OUT/allreduce_choice_${platform}.$term"
set multiplot layout 1,2 title "Allreduce algorithm per (P, bytes per rank): anyp Auto on $platform (left), Open MPI 4.1 tuned rules (right)"
set logscale x 2
set logscale y 2
set xrange [1.7:1200]
set yrange [4:1.3e8]
set xlabel "P (ranks)"
set ylabel "bytes per rank"
set ytics ("8 B" 8, "128 B" 128, "2 KiB" 2048, "32 KiB" 32768, "512 KiB" 524288, "8 MiB" 8388608, "64 MiB" 67108864)
set key outside bottom center horizontal
set grid
set title "anyp AllreduceMode::Auto (modeled on $platform)"
plot "$work/auto_Mesh.dat" with points pt 5 ps 1.6 lc rgb "#1f77b4" title "Mesh", \
     "$work/auto_Ring.dat" with points pt 5 ps 1.6 lc rgb "#2ca02c" title "Ring", \
     "$work/auto_RecursiveDoubling.dat" with points pt 5 ps 1.6 lc rgb "#ff7f0e" title "RecursiveDoubling", \
     "$work/auto_Rabenseifner.dat" with points pt 5 ps 1.6 lc rgb "#d62728" title "Rabenseifner", \
     "$work/auto_Tree.dat" with points pt 5 ps 1.6 lc rgb "#9467bd" title "Tree"
set title "Open MPI 4.1 coll/tuned fixed rules (measured clusters)"
plot "$work/ompi_basic_linear.dat" with points pt 5 ps 1.6 lc rgb "#1f77b4" title "basic_linear", \
     "$work/ompi_ring.dat" with points pt 5 ps 1.6 lc rgb "#2ca02c" title "ring", \
     "$work/ompi_segmented_ring.dat" with points pt 4 ps 1.6 lc rgb "#2ca02c" title "segmented_ring", \
     "$work/ompi_recursive_doubling.dat" with points pt 5 ps 1.6 lc rgb "#ff7f0e" title "recursive_doubling", \
     "$work/ompi_rabenseifner.dat" with points pt 5 ps 1.6 lc rgb "#d62728" title "rabenseifner", \
     "$work/ompi_nonoverlapping.dat" with points pt 5 ps 1.6 lc rgb "#9467bd" title "nonoverlapping (reduce + bcast)"
unset multiplot
GP
    gnuplot <<GP
$setterm
set output "$OUT/allreduce_candidates_${platform}.$term"
set multiplot layout 1,3 title "Every allreduce candidate's modeled time (Auto's estimate) against P on $platform"
set logscale xy
set xrange [1.7:1200]
set xlabel "P (ranks)"
set ylabel "time (us)"
set key top left
set grid
do for [i = 1:3] {
  s = word("8 32768 67108864", i)
  set title (i == 1 ? "8 B" : i == 2 ? "32 KiB" : "64 MiB")." per rank"
  plot "$work/time_".s."_Mesh.dat" with linespoints pt 7 lc rgb "#1f77b4" title "Mesh", \
       "$work/time_".s."_Ring.dat" with linespoints pt 7 lc rgb "#2ca02c" title "Ring", \
       "$work/time_".s."_RecursiveDoubling.dat" with linespoints pt 7 lc rgb "#ff7f0e" title "RecursiveDoubling", \
       "$work/time_".s."_Rabenseifner.dat" with linespoints pt 7 lc rgb "#d62728" title "Rabenseifner", \
       "$work/time_".s."_Tree.dat" with linespoints pt 7 lc rgb "#9467bd" title "Tree"
}
unset multiplot
GP
  done
  echo "wrote $OUT/allreduce_choice_${platform}.png/.svg and $OUT/allreduce_candidates_${platform}.png/.svg"
  # How often the two agree, by family.
  awk -F, 'FNR > 1 && $5 == 1 { n++; a = $3; o = $6
             same += (a == "Ring" && (o == "ring" || o == "segmented_ring")) ||
                     (a == "RecursiveDoubling" && o == "recursive_doubling") ||
                     (a == "Rabenseifner" && o == "rabenseifner") ||
                     (a == "Mesh" && o == "basic_linear") || (a == "Tree" && o == "nonoverlapping")
             count[a]++ }
           END { printf "%s: Auto and Open MPI pick the same family at %d of %d points; Auto:", p, same, n
                 for (k in count) printf " %s %d", k, count[k]; printf "\n" }' p="$platform" "$csv"
done
