# bench/ladder_examples.sh — sourced by the runners that run the ladder's
# example programs (run_footprint, run_timeline_cost, run_workers): sets
# BUILD (default build/release, built first; another BUILD is used as it
# is), EX (its examples), work (a scratch directory removed on exit),
# STEPS (default: every step and kernel, "01 02 ... k7"), and
# example_binary STEP (prints the step's program, or nothing).
BUILD="${BUILD:-build/release}"
[[ "$BUILD" == build/release ]] && bash scripts/build.sh release >/dev/null
EX="$BUILD/examples"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
STEPS="${STEPS:-$(cd "$EX" && ls | grep -E '^(0|1|k)[0-9k]' | sed -E 's/_.*//' | tr '\n' ' ')}"
example_binary() {
  ls "$EX"/"$1"_* 2>/dev/null | head -1
}
