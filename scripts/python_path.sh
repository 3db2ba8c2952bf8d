#!/usr/bin/env bash
# scripts/python_path.sh — makes `import anyp` work from this source tree for
# Debian's /usr/bin/python3 (and `python`, python-is-python3), without pip:
# writes anyp-source-tree.pth, naming <repo>/python, into that interpreter's
# user site-packages. The package finds its native module in
# <repo>/build/release/python/anyp/ (or $ANYP_BUILD_DIR/python/anyp/).
# Another python3 first on PATH is not touched: run the examples with
# /usr/bin/python3 or `python` there (docs/python.md).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SITE="$(/usr/bin/python3 -c 'import site; print(site.getusersitepackages())')"
mkdir -p "$SITE"
echo "$ROOT/python" >"$SITE/anyp-source-tree.pth"
echo "python: $SITE/anyp-source-tree.pth -> $ROOT/python"
