#!/usr/bin/env bash
# scripts/ccache_report.sh — the compiler cache's hit rate since a snapshot.
#
#   bash scripts/ccache_report.sh snapshot <file>    save ccache's counters
#   bash scripts/ccache_report.sh since <file> [what] print hits, misses and
#                                                     the hit rate since then
#
# A hit is a direct or preprocessed hit; a miss is a compile ccache ran and
# stored; "not cacheable" counts compiles ccache passed through (links,
# a precompiled header it could not use, ...). Prints nothing useful and
# exits 0 when ccache is not installed (builds then run without it).
set -euo pipefail

mode="${1:-}"
file="${2:-}"
what="${3:-this run}"
if ! command -v ccache >/dev/null 2>&1; then
  [[ "$mode" == since ]] && echo "ccache: not installed (compiled without a cache)"
  exit 0
fi
case "$mode" in
  snapshot)
    ccache --print-stats >"$file"
    ;;
  since)
    ccache --print-stats | awk -v what="$what" -F'\t' '
      NR == FNR { before[$1] = $2; next }
      { now[$1] = $2 }
      END {
        hits = (now["direct_cache_hit"] - before["direct_cache_hit"]) + \
               (now["preprocessed_cache_hit"] - before["preprocessed_cache_hit"])
        misses = now["cache_miss"] - before["cache_miss"]
        passed = 0
        for (k in now)
          if (k ~ /^(could_not_|unsupported_|bad_|compiler_produced_|no_input_file|multiple_source_files|output_to_stdout|preprocessor_error|compile_failed|internal_error)/)
            passed += now[k] - before[k]
        total = hits + misses
        rate = total ? 100.0 * hits / total : 0
        printf "ccache (%s): %d hits, %d misses of %d compiles: hit rate %.1f%%; %d not cacheable; cache %.0f MiB\n", \
               what, hits, misses, total, rate, passed, now["cache_size_kibibyte"] / 1024
      }' "$file" -
    ;;
  *)
    echo "usage: $0 snapshot|since <file> [what]" >&2
    exit 2
    ;;
esac
