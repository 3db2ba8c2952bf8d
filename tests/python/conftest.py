"""Pytest set-up for anyp's Python package tests: the package from the
source tree (python/), its native module from the build directory that
ctest names in $ANYP_BUILD_DIR (default build/release)."""

import os
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))
os.environ.setdefault("ANYP_BUILD_DIR", os.path.join(ROOT, "build", "release"))
