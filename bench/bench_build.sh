# bench/bench_build.sh — sourced by the bench runners: sets BUILD (default
# build/bench) and, when it is not configured yet, installs the packages and
# configures it as a Release build with the benchmarks and without tests.
BUILD=${BUILD:-build/bench}
if [[ ! -f "$BUILD/build.ninja" ]]; then
  bash scripts/setup.sh
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DANYP_BUILD_BENCH=ON \
    -DANYP_BUILD_TESTS=OFF >/dev/null
fi
