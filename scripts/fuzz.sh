#!/usr/bin/env bash
# scripts/fuzz.sh — libFuzzer (Debian's clang) on the entry points that read
# outside text (docs/testing.md):
#   cost_model    a --model file (runtime/timeline/cost_model.cpp)
#   device_list   a -d list of the example command line (cli/device_list.cpp)
#   python        mutants of the Python examples (scripts/fuzz_python.py): no
#                 internal exception escapes the Python front-end
#   programs      random well-formed programs against a host reference, across
#                 P, schedules, the race checker, verify and the MPI engine
#                 (scripts/fuzz_programs.py): differential fuzzing
#
#   bash scripts/fuzz.sh [SECONDS]    fuzz each target for SECONDS (default 20)
#
# Each target starts from its seed corpus (fuzz/corpus/<target>/, which holds
# every input that once found a bug) into a scratch copy, with ASan and UBSan;
# a crash, a sanitizer report or a broken property of the target stops the
# script with exit 1, the input saved as build/fuzz/crash-*. Needs the release
# build's generated sources (scripts/build.sh release) and clang++-14 with
# libclang-rt-14-dev (scripts/setup.sh installs them).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SECONDS_EACH="${1:-20}"
OUT="$ROOT/build/fuzz"
mkdir -p "$OUT"
GENERATED="$ROOT/build/release/generated"
if [[ ! -f "$GENERATED/platform_models.cpp" ]]; then
  echo "fuzz.sh: $GENERATED/platform_models.cpp is missing: run scripts/build.sh release first" >&2
  exit 2
fi
FLAGS=(-std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
  -I"$ROOT/include" -I"$ROOT/src" -I"$GENERATED")

# target -> the sources it is built from (besides fuzz/<target>_fuzzer.cpp).
declare -A SOURCES=(
  [cost_model]="src/runtime/timeline/cost_model.cpp $GENERATED/platform_models.cpp"
  [device_list]="src/cli/device_list.cpp"
)

for target in cost_model device_list; do
  read -r -a sources <<<"${SOURCES[$target]}"
  paths=()
  for s in "${sources[@]}"; do [[ "$s" = /* ]] && paths+=("$s") || paths+=("$ROOT/$s"); done
  clang++-14 "${FLAGS[@]}" "$ROOT/fuzz/${target}_fuzzer.cpp" "${paths[@]}" -o "$OUT/${target}_fuzzer"
  corpus="$OUT/corpus_$target"
  rm -rf "$corpus" && cp -r "$ROOT/fuzz/corpus/$target" "$corpus"
  dict=()
  [[ -f "$ROOT/fuzz/$target.dict" ]] && dict=(-dict="$ROOT/fuzz/$target.dict")
  echo "fuzz: $target for ${SECONDS_EACH} s"
  (cd "$OUT" && ./"${target}_fuzzer" -max_total_time="$SECONDS_EACH" -print_final_stats=1 \
    "${dict[@]}" "$corpus" 2>"$OUT/$target.log") || {
    tail -40 "$OUT/$target.log"
    echo "fuzz: $target found a bug (input: $OUT/crash-*)" >&2
    exit 1
  }
  grep -E "^stat::number_of_executed_units|^stat::new_units_added" "$OUT/$target.log" |
    sed "s/^/  $target: /"
done

# The mutants come from FUZZ_SEED (default 1): 100 per second asked for, in
# at most 6 times as long, so that CI's slice is the same mutants on any
# machine (pick another seed, or FUZZ_SEED=$RANDOM, to explore).
echo "fuzz: python, $((100 * SECONDS_EACH)) mutants"
ANYP_BUILD_DIR="${ANYP_BUILD_DIR:-$ROOT/build/release}" \
  /usr/bin/python3 "$ROOT/scripts/fuzz_python.py" "$((6 * SECONDS_EACH))" \
  --seed "${FUZZ_SEED:-1}" --count "$((100 * SECONDS_EACH))"

# Programs: SECONDS_EACH of seed FUZZ_SEED's programs (count-bound, so CI's
# slice is the same programs on any machine), every 4th on the MPI engine.
echo "fuzz: programs, $SECONDS_EACH generated programs"
ANYP_BUILD_DIR="${ANYP_BUILD_DIR:-$ROOT/build/release}" \
  /usr/bin/python3 "$ROOT/scripts/fuzz_programs.py" "$((10 * SECONDS_EACH))" \
  --seed "${FUZZ_SEED:-1}" --count "$SECONDS_EACH"
