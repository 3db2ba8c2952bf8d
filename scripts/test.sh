#!/usr/bin/env bash
# scripts/test.sh — the README's second command and what CI runs (.ci/run).
#
#   bash scripts/test.sh            release + ASan/UBSan + TSan (runtime tests)
#   bash scripts/test.sh --quick    release only
#
# Stages, stopping at the first failure:
#   1. setup                 scripts/setup.sh (then scripts/check_format.sh)
#   2. release               build, ctest (all tests, the MPI engine's under mpirun too,
#                            the Python package's as python.<file>), then PyPTO's
#                            tutorial programs (../shared/pypto/run_examples.sh, when
#                            it is there; $PYPTO_EXAMPLES names another place)
#   3. asan (address,ubsan)  build, ctest (all tests but label `mpi`: Open MPI's own
#                            allocations at MPI_Init/MPI_Finalize read as leaks)
#   4. fuzz                  scripts/fuzz.sh 20: libFuzzer on the cost-model and -d
#                            list parsers, 20 s each after their seed corpus, and
#                            2 000 mutants of the Python examples (seed 1)
#   5. tsan (thread)         build (library and runtime tests only), ctest -L runtime,
#                            but the timeline's fidelity tests (modeled arithmetic over
#                            long runs, checked in the release and ASan stages),
#                            every run's workers recruited at its start
# Parallelism is $JOBS (default 2) for both the build and ctest. A stage
# whose ctest selects no test fails (--no-tests=error). Each ctest stage
# prints its test count and its 20 slowest tests; the run ends with a table
# of every stage's time and test count, and the compiler cache's hit rate
# (scripts/ccache_report.sh). docs/development.md has the figures.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export JOBS="${JOBS:-2}"

QUICK=0
for arg in "$@"; do
  case "$arg" in
    --quick) QUICK=1 ;;
    -h | --help)
      sed -n '2,20p' "$0"
      exit 0
      ;;
    *)
      echo "test.sh: unknown argument '$arg' (use --quick)" >&2
      exit 2
      ;;
  esac
done

LOGS="$(mktemp -d "${TMPDIR:-/tmp}/anyp-test.XXXXXX")"
trap 'rm -rf "$LOGS"' EXIT
SUMMARY=()  # one line per stage: name, seconds, tests

banner() {
  echo
  echo "========================================================================"
  echo "== $*"
  echo "========================================================================"
}

# timed <stage name> <command...>: runs the command, records its seconds.
timed() {
  local name="$1" start=$SECONDS
  shift
  "$@"
  SUMMARY+=("$(printf '%-28s %6d s' "$name" $((SECONDS - start)))")
}

# run_ctest <config> [extra ctest args...]: the stage's tests, then their
# count and the 20 slowest (from ctest's own per-test times).
run_ctest() {
  local config="$1" start=$SECONDS log="$LOGS/ctest-$1.log"
  shift
  banner "$config: ctest $*"
  (cd "build/$config" &&
    "${RUN_PREFIX[@]}" ctest --output-on-failure --no-tests=error -j "$JOBS" "$@") | tee "$log"
  local count
  count="$(sed -n 's/.* tests failed out of \([0-9]*\)$/\1/p' "$log" | tail -n 1)"
  echo
  echo "$config: the 20 slowest of its ${count:-?} tests (seconds):"
  # (awk, not head: head would close the pipe early and fail it under pipefail)
  sed -n 's/^ *[0-9]*\/[0-9]* Test *#[0-9]*: \([^ ]*\) .* \([0-9.]*\) sec$/\2 \1/p' "$log" |
    sort -rn | awk 'NR <= 20 { printf "  %8.2f  %s\n", $1, $2 }'
  SUMMARY+=("$(printf '%-28s %6d s  %5s tests' "$config: ctest" $((SECONDS - start)) "${count:-?}")")
}
RUN_PREFIX=()  # a command wrapper for a stage (setarch for TSan, see below)

bash scripts/ccache_report.sh snapshot "$LOGS/ccache.start"

banner "setup: system packages"
timed "setup" bash scripts/setup.sh

banner "format: clang-format"
timed "format" bash scripts/check_format.sh

banner "release: build (RelWithDebInfo)"
timed "release: build" bash scripts/build.sh release
run_ctest release

# PyPTO's own tutorial programs 01-16, unchanged but their imports, at
# P = 2, 3, 4, 5, 8 in every mode, on this checkout's release build: the
# conformance check (docs/python.md). Its script and PyPTO's files live
# beside the repository, never in it ($PYPTO_EXAMPLES, default ../shared/pypto).
PYPTO_EXAMPLES="${PYPTO_EXAMPLES:-$ROOT/../shared/pypto}"
if [[ -f "$PYPTO_EXAMPLES/run_examples.sh" ]]; then
  banner "pypto: PyPTO's tutorial programs ($PYPTO_EXAMPLES/run_examples.sh)"
  timed "pypto: tutorial programs" bash "$PYPTO_EXAMPLES/run_examples.sh" "$ROOT"
else
  echo "pypto: skipped, $PYPTO_EXAMPLES/run_examples.sh is not on this machine"
fi

finish() {
  banner "test.sh: $1"
  printf '%s\n' "${SUMMARY[@]}"
  bash scripts/ccache_report.sh since "$LOGS/ccache.start" "this run"
}

if ((QUICK)); then
  finish "--quick: release stage passed"
  exit 0
fi

# Sanitizer runtime options: fail loudly, with stacks, on the first report.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}"

banner "asan: build (address,undefined)"
timed "asan: build" bash scripts/build.sh asan
run_ctest asan -LE mpi

# Fuzzing (docs/testing.md): a cheap slice, every seed (each input that once
# found a bug) and 20 s of new inputs per C++ target, seed 1's first 2 000
# Python mutants.
banner "fuzz: the cost-model and -d list parsers, the Python front-end"
timed "fuzz" bash scripts/fuzz.sh 20

# GCC 12's TSan cannot place its shadow memory when the kernel randomizes
# mmap with more than 28 bits (vm.mmap_rnd_bits, raised on newer kernels):
# then build (gtest discovery runs the binaries) and test with ASLR off.
if [[ -r /proc/sys/vm/mmap_rnd_bits ]] && (("$(cat /proc/sys/vm/mmap_rnd_bits)" > 28)) &&
  command -v setarch >/dev/null 2>&1; then
  RUN_PREFIX=(setarch "$(uname -m)" -R)
  echo "tsan: vm.mmap_rnd_bits > 28, running the TSan stage under: ${RUN_PREFIX[*]}"
fi

banner "tsan: build (thread)"
# Only the `runtime` tests run under TSan: build the library and their
# executable, no examples and no other test executable.
timed "tsan: build" env TARGETS=anyp_runtime_tests "${RUN_PREFIX[@]}" \
  bash scripts/build.sh tsan -DANYP_BUILD_EXAMPLES=OFF
# The fidelity tests check the model's arithmetic against closed formulas
# on long runs; they share every engine path with the other runtime tests,
# which TSan does see, and they run in the release and ASan stages.
# Every run recruits its second worker at its first slice here (not only
# once its ranks show enough tile compute), so that TSan sees the
# signal-bound programs on two workers at once too
# (tests/support/recruit_at_start.hpp).
ANYP_TEST_RECRUIT_AT_START=1 run_ctest tsan -L runtime -E Fidelity

finish "all stages passed"
