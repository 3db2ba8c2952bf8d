#!/usr/bin/env bash
# scripts/check_format.sh — fails (exit 1) when a tracked C++ file is not
# clang-format clean (.clang-format at the repo root) or a tracked Python
# file is not black clean (pyproject.toml); lists the files. One clang-format
# and one black process for all files (a process per file took most of the time).
# Fix with: git ls-files '*.cpp' '*.hpp' | xargs clang-format -i
#           git ls-files '*.py' | xargs black
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bad=()
# run_listing <sed script> <command...>: the files the command's output
# names as unclean. A failure that names no file (a file black cannot
# parse, a missing tool) is reported in full and fails the check.
run_listing() {
  local script="$1" output status=0
  shift
  output="$("$@" 2>&1)" || status=$?
  local named
  named="$(sed -n "$script" <<<"$output" | sort -u)"
  if ((status != 0)) && [[ -z "$named" ]]; then
    printf '%s\n' "$output" >&2
    echo "format: '$1' failed (exit $status) without naming a file" >&2
    exit 1
  fi
  [[ -z "$named" ]] || printf '%s\n' "$named"
}
# clang-format names each unclean file in its "file:line:col: error:" lines.
mapfile -t cpp_files < <(git ls-files '*.cpp' '*.hpp')
bad_cpp="$(run_listing 's/^\([^:]*\):[0-9]*:[0-9]*: error: .*/\1/p' \
  clang-format --dry-run --Werror "${cpp_files[@]}")"
# black --check names each unclean file in a "would reformat <file>" line.
mapfile -t py_files < <(git ls-files '*.py')
bad_py="$(run_listing 's/^would reformat \(.*\)$/\1/p' \
  /usr/bin/black --check "${py_files[@]}")"
[[ -z "$bad_cpp" ]] || mapfile -t -O "${#bad[@]}" bad <<<"$bad_cpp"
[[ -z "$bad_py" ]] || mapfile -t -O "${#bad[@]}" bad <<<"$bad_py"
if ((${#bad[@]})); then
  printf 'not clang-format / black clean:\n'
  printf '  %s\n' "${bad[@]}"
  exit 1
fi
echo "format: all files clang-format and black clean"
