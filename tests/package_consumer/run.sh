#!/usr/bin/env bash
# tests/package_consumer/run.sh — the CMake package test (ctest
# `package_consumer`): installs an anyp build tree into a scratch prefix,
# configures tests/package_consumer against it with CMAKE_PREFIX_PATH only,
# builds it, runs it and expects exactly "OK" on stdout.
#
#   bash tests/package_consumer/run.sh <anyp build dir>     (e.g. build/release)
#
# The compiler, generator and sanitizer flags (ANYP_SANITIZE) are taken from
# the build dir's CMakeCache.txt, so a sanitized library links. Scratch files
# go to <build dir>/package_consumer/ and are recreated on every run.
set -euo pipefail

if (($# != 1)); then
  echo "usage: $0 <anyp build dir>" >&2
  exit 2
fi
BUILD_DIR="$(cd "$1" && pwd)"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE="$BUILD_DIR/CMakeCache.txt"
[[ -f "$CACHE" ]] || { echo "package_consumer: no CMakeCache.txt in $BUILD_DIR" >&2; exit 2; }

cache_value() {  # cache_value <NAME>: the value of NAME:<TYPE>=value, or ""
  sed -n "s/^$1:[A-Z]*=//p" "$CACHE" | head -n 1
}

WORK="$BUILD_DIR/package_consumer"
PREFIX="$WORK/prefix"
CONSUMER_BUILD="$WORK/build"
rm -rf "$WORK"
mkdir -p "$WORK"

echo "== install $BUILD_DIR -> $PREFIX"
cmake --install "$BUILD_DIR" --prefix "$PREFIX"

configure_args=(
  -S "$HERE" -B "$CONSUMER_BUILD"
  "-DCMAKE_PREFIX_PATH=$PREFIX"
  "-DCMAKE_BUILD_TYPE=RelWithDebInfo"
)
cxx="$(cache_value CMAKE_CXX_COMPILER)"
[[ -n "$cxx" ]] && configure_args+=("-DCMAKE_CXX_COMPILER=$cxx")
generator="$(cache_value CMAKE_GENERATOR)"
[[ -n "$generator" ]] && configure_args+=(-G "$generator")
sanitize="$(cache_value ANYP_SANITIZE)"
if [[ -n "$sanitize" ]]; then
  configure_args+=(
    "-DCMAKE_CXX_FLAGS=-fsanitize=$sanitize -fno-omit-frame-pointer"
    "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=$sanitize"
  )
fi

echo "== configure the consumer"
cmake "${configure_args[@]}"
# It must have found the package just installed, not another copy.
found="$(sed -n 's/^anyp_DIR:[A-Z]*=//p' "$CONSUMER_BUILD/CMakeCache.txt")"
if [[ "$found" != "$PREFIX"/* ]]; then
  echo "package_consumer: found anyp at '$found', expected under $PREFIX" >&2
  exit 1
fi

echo "== build the consumer"
cmake --build "$CONSUMER_BUILD" -j "${JOBS:-2}"

echo "== run the consumer"
status=0
output="$("$CONSUMER_BUILD/anyp_package_consumer")" || status=$?
echo "$output"
if ((status != 0)) || [[ "$output" != "OK" ]]; then
  echo "package_consumer: expected exit 0 and stdout 'OK', got exit $status" >&2
  exit 1
fi
echo "package_consumer: OK"
