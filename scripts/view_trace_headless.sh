#!/usr/bin/env bash
# view_trace_headless.sh -- a reproducible visual check of an anyp Chrome trace
# (the JSON that an example writes with --trace FILE): opens it in the speedscope
# trace viewer inside headless Chromium and writes a PNG screenshot, with no
# display and no network beyond the npm registry.
#
# Usage: scripts/view_trace_headless.sh TRACE.json OUT.png [OPTIONS]
#   OPTIONS go to scripts/view_trace_headless.mjs:
#     --threads "rank 0,rank 0 dma 0"   tracks to show, stacked top to bottom
#                                       (default: the first track and up to three
#                                       of its "dma N" tracks)
#     --view time-ordered|left-heavy|sandwich   (default time-ordered)
#     --width 1400 --height 800         size of the whole PNG
#     --raw                             view the file as it is; by default a
#                                       temporary copy gets zero-length "(align)"
#                                       slices so every track spans [0, makespan]
#                                       (speedscope starts each track at its own
#                                       first slice otherwise)
# Example:
#   build/release/examples/07_dynamic_rank_count -d 0,1,2,3 \
#       --model models/a2a3sim.model --trace /tmp/step07.json
#   scripts/view_trace_headless.sh /tmp/step07.json /tmp/step07.png
#
# Needs node (v18+), npm and Debian's Chromium at /usr/bin/chromium
# (apt-get install chromium). speedscope and playwright-core are installed with
# npm on first use into $ANYP_TRACE_VIEWER_CACHE (default
# ${XDG_CACHE_HOME:-/tmp}/anyp-trace-viewer), never into the repo; playwright-core
# drives the system Chromium and downloads no browser.
#
# Exit status: 0 ok; 1 error; 2 the PNG was written but speedscope's importer
# warned that slices of one track do not nest (listed on stderr).
set -euo pipefail

usage() {
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
}

if [[ $# -ge 1 && ( $1 == -h || $1 == --help ) ]]; then
  usage
  exit 0
fi
if [[ $# -lt 2 ]]; then
  usage >&2
  exit 1
fi
trace=$1
out=$2
shift 2

chromium=${ANYP_CHROMIUM:-/usr/bin/chromium}
speedscope_version=${ANYP_SPEEDSCOPE_VERSION:-1.25.0}
playwright_version=${ANYP_PLAYWRIGHT_CORE_VERSION:-1.65.2}
cache=${ANYP_TRACE_VIEWER_CACHE:-${XDG_CACHE_HOME:-/tmp}/anyp-trace-viewer}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

die() {
  echo "view_trace_headless.sh: $*" >&2
  exit 1
}

[[ -x $chromium ]] || die "$chromium not found: install Debian's Chromium first (as root): apt-get install chromium"
command -v node >/dev/null || die "node not found (needs Node.js 18 or later and npm)"
command -v npm >/dev/null || die "npm not found (needs Node.js 18 or later and npm)"
[[ -f $trace ]] || die "no trace file $trace"
mkdir -p "$(dirname "$out")"

installed_version() { # package -> its version in the cache, or nothing
  node -e 'try { console.log(require(process.argv[1]).version) } catch (e) {}' \
    "$cache/node_modules/$1/package.json" 2>/dev/null || true
}

if [[ $(installed_version speedscope) != "$speedscope_version" ||
      $(installed_version playwright-core) != "$playwright_version" ]]; then
  echo "view_trace_headless.sh: installing speedscope@$speedscope_version and" \
    "playwright-core@$playwright_version into $cache" >&2
  mkdir -p "$cache"
  [[ -f $cache/package.json ]] || echo '{"name": "anyp-trace-viewer", "private": true}' >"$cache/package.json"
  (cd "$cache" && npm install --no-audit --no-fund --loglevel=error \
    "speedscope@$speedscope_version" "playwright-core@$playwright_version") >&2 ||
    die "npm install into $cache failed"
fi
[[ -f $cache/node_modules/speedscope/dist/release/index.html ]] ||
  die "speedscope in $cache has no dist/release/index.html"

exec node "$here/view_trace_headless.mjs" --trace "$trace" --out "$out" \
  --chromium "$chromium" --speedscope-dir "$cache/node_modules/speedscope" "$@"
