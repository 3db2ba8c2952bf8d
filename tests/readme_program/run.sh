#!/usr/bin/env bash
# tests/readme_program/run.sh — the README's "Writing your first program",
# built and run as the README says (ctest `readme_program`): its C++ block
# becomes ring_shift.cpp and its CMake block CMakeLists.txt in a scratch
# directory; the build tree is installed into "$HOME/anyp" (HOME is a
# scratch directory too) by the README's own command; the README's bash
# block then configures, builds and runs it, and every line marked `# OK`
# must print exactly "OK". Then the flags the example command line offers
# must take effect on this program, which reports with
# anyp::cli::report(checks) and hands over no stats: --cost prints the card
# (and the memory block), --timeline the timeline, --trace FILE writes the
# trace, --explore 10 prints OK once, and --check-races runs checked.
#
#   bash tests/readme_program/run.sh <repository root> <anyp build dir>
set -euo pipefail

if (($# != 2)); then
  echo "usage: $0 <repository root> <anyp build dir>" >&2
  exit 2
fi
ROOT="$(cd "$1" && pwd)"
BUILD_DIR="$(cd "$2" && pwd)"
README="$ROOT/README.md"
WORK="$BUILD_DIR/readme_program"
rm -rf "$WORK"
mkdir -p "$WORK/home" "$WORK/program"
export HOME="$WORK/home"

# block <language> <n>: the n-th (1-based) fenced block of that language
# after the heading "## Writing your first program", without its fences.
block() {
  awk -v lang="$1" -v want="$2" '
    /^## / { in_section = ($0 == "## Writing your first program") }
    in_section && !inside && $0 == "```" lang { inside = 1; n++; next }
    inside && $0 == "```" { inside = 0; next }
    inside && n == want { print }
  ' "$README"
}

block cpp 1 >"$WORK/program/ring_shift.cpp"
block cmake 1 >"$WORK/program/CMakeLists.txt"
install_commands="$(block bash 1)"
build_commands="$(block bash 2)"
for part in ring_shift.cpp CMakeLists.txt; do
  [[ -s "$WORK/program/$part" ]] || { echo "readme_program: no $part in the README" >&2; exit 1; }
done
[[ -n "$build_commands" ]] || { echo "readme_program: no build commands in the README" >&2; exit 1; }

# The README installs with `cmake --install build/release --prefix "$HOME/anyp"`:
# the same command, on this build tree.
install_line="$(grep '^cmake --install ' <<<"$install_commands")"
[[ -n "$install_line" ]] || { echo "readme_program: no install command in the README" >&2; exit 1; }
echo "== ${install_line/build\/release/$BUILD_DIR}"
eval "${install_line/build\/release/\"$BUILD_DIR\"}" >/dev/null

cd "$WORK/program"
while IFS= read -r line; do
  [[ -z "$line" ]] && continue
  command="${line%%#*}"
  echo "\$ $command"
  if [[ "$line" == *"# OK"* ]]; then
    output="$(eval "$command")"
    if [[ "$output" != "OK" ]]; then
      echo "readme_program: expected OK from '$command', got: $output" >&2
      exit 1
    fi
  else
    eval "$command" >/dev/null
  fi
done <<<"$build_commands"

program=./build/ring_shift
expect() {  # expect <description> <command...>: runs it, leaves stdout in $output
  local what="$1"
  shift
  echo "\$ $*"
  if ! output="$("$@")"; then
    echo "readme_program: '$*' failed ($what)" >&2
    exit 1
  fi
}

expect "cost card" "$program" -d 0,1,2 --cost
[[ "$(head -n 2 <<<"$output")" == $'OK\ncost card (P=3)' ]] ||
  { echo "readme_program: --cost printed no card:"$'\n'"$output" >&2; exit 1; }
grep -q '^memory (this process, planned before the run): ' <<<"$output" ||
  { echo "readme_program: --cost printed no memory block" >&2; exit 1; }

expect "timeline" "$program" -d 0,1,2,3 --timeline
[[ "$(sed -n 2p <<<"$output")" == "timeline (model a2a3sim, P=4): makespan "* ]] ||
  { echo "readme_program: --timeline printed no timeline:"$'\n'"$output" >&2; exit 1; }

expect "trace" "$program" -d 0,1 --trace "$WORK/trace.json"
[[ "$output" == "OK" && -s "$WORK/trace.json" ]] ||
  { echo "readme_program: --trace wrote no trace" >&2; exit 1; }
grep -q '"traceEvents"' "$WORK/trace.json" ||
  { echo "readme_program: the trace has no traceEvents" >&2; exit 1; }

expect "explore" "$program" -d 0,1,2 --explore 10
[[ "$output" == "OK" ]] ||
  { echo "readme_program: --explore 10 printed:"$'\n'"$output" >&2; exit 1; }

expect "check races" "$program" -d 0,1,2,3,4 --check-races
[[ "$output" == "OK" ]] || { echo "readme_program: --check-races printed: $output" >&2; exit 1; }

echo "readme_program: OK"
