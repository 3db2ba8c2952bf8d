#!/usr/bin/env bash
# scripts/quickstart.sh — the README's first command: installs what is
# needed, builds the release tree and runs step 07 (dynamic rank count) in
# both modes at P = 2, 3 and 4. Fails if any run fails.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

bash scripts/setup.sh
bash scripts/build.sh release

EXAMPLE=build/release/examples/07_dynamic_rank_count
for devices in 0,1 0,1,2 0,1,2,3; do
  for mode in put get; do
    echo "\$ $EXAMPLE --mode $mode -d $devices"
    "$EXAMPLE" --mode "$mode" -d "$devices"
  done
done
echo "quickstart: all runs passed"
