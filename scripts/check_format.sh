#!/usr/bin/env bash
# scripts/check_format.sh — fails (exit 1) when a tracked C++ file is not
# clang-format clean (.clang-format at the repo root) or a tracked Python
# file is not black clean (pyproject.toml); lists the files.
# Fix with: git ls-files '*.cpp' '*.hpp' | xargs clang-format -i
#           git ls-files '*.py' | xargs black
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bad=()
while IFS= read -r file; do
  if ! clang-format --dry-run --Werror "$file" >/dev/null 2>&1; then bad+=("$file"); fi
done < <(git ls-files '*.cpp' '*.hpp')
while IFS= read -r file; do
  if ! /usr/bin/black --quiet --check "$file" >/dev/null 2>&1; then bad+=("$file"); fi
done < <(git ls-files '*.py')
if ((${#bad[@]})); then
  printf 'not clang-format / black clean:\n'
  printf '  %s\n' "${bad[@]}"
  exit 1
fi
echo "format: all files clang-format and black clean"
