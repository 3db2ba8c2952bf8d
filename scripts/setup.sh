#!/usr/bin/env bash
# scripts/setup.sh — installs the Debian 12 packages anyp needs to build,
# test and format. Idempotent: packages already installed are skipped, and
# `apt-get update` runs only when something is missing. Uses sudo only when
# not running as root.
set -euo pipefail

# Everything the project needs, one place. libgmock-dev is not required by
# find_package(GTest) on Debian 12 (its gmock targets are optional) but keeps
# gmock available to unit tests. libopenmpi-dev + openmpi-bin: the MPI
# engine and mpirun (the build works without them, minus that engine).
# gnuplot-nox: the figures of bench/run_model_sweep.sh (docs/timeline.md).
# libopenblas-dev, libeigen3-dev: the sgemm baselines of bench/compute_bench
# (the matmul kernel itself is anyp's own; neither links into anyp).
# python3, python3-pytest: the docs checks (tests/docs/, Debian's
# /usr/bin/python3, never the first python3 on PATH). valgrind: the
# instruction counts of bench/run_hot_path.sh. python3-dev, pybind11-dev: the
# Python package's native module (anyp._core); python3-numpy, python3-torch:
# the arrays it takes; python-is-python3: the `python` command the seed's
# examples are run with. black: the Python formatter (scripts/check_format.sh).
# clang-14, libclang-rt-14-dev: libFuzzer for scripts/fuzz.sh (docs/testing.md).
# ccache: the compiler cache scripts/build.sh puts in front of g++ (a fresh
# clone on the same machine reuses the working tree's objects); mold: the
# faster linker scripts/build.sh uses when present (docs/development.md).
PACKAGES=(
  cmake
  ninja-build
  g++
  ccache
  mold
  libgtest-dev
  libgmock-dev
  libbenchmark-dev
  libcli11-dev
  nlohmann-json3-dev
  clang-format
  clang-14
  libclang-rt-14-dev
  time
  libopenmpi-dev
  openmpi-bin
  gnuplot-nox
  libopenblas-dev
  libeigen3-dev
  python3
  python3-pytest
  valgrind
  python3-dev
  pybind11-dev
  python3-numpy
  python3-torch
  python-is-python3
  black
)

is_installed() {
  [[ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true)" == "install ok installed" ]]
}

missing=()
for pkg in "${PACKAGES[@]}"; do
  is_installed "$pkg" || missing+=("$pkg")
done

if ((${#missing[@]} == 0)); then
  echo "setup: all ${#PACKAGES[@]} packages already installed"
  exit 0
fi

SUDO=()
if [[ "$(id -u)" -ne 0 ]]; then
  if command -v sudo >/dev/null 2>&1; then
    SUDO=(sudo)
  else
    echo "setup: not root and sudo is not available; install these packages: ${missing[*]}" >&2
    exit 1
  fi
fi

echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
echo "setup: done"
