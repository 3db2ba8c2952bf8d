#!/usr/bin/python3
"""check_layers.py — no #include in src/ or include/ runs back up a floor.

The floors, lowest first (docs/design.md §1 draws them):

  0  vocabulary  anyp/{dtype,errors,host_tensor,host_worker,collective_algorithms,run_config,
                 arg_ref,run_stats,timeline}.hpp,
                 src/common/, src/host/
  1  ir          src/ir/
  2  runtime     src/runtime/ (of the IR only ir/op_attrs.hpp)
  3  frontend    anyp/{pl,pld}.hpp, src/frontend/       compiler  src/compiler/
  4  engines     anyp/engines.hpp, src/engines/
  5  api         anyp/{compiled_program,session,explore,anyp}.hpp, src/api/
  6  cli         anyp/{example_cli,timeline_output}.hpp, src/cli/

A file may include its own floor's group and anything below; never a floor
above, nor another group of its floor (the frontend and the compiler meet
only in the API, which traces and hands the IR over). Within the runtime,
the observers (the race checker, the timeline, the cost counter) stand below
the rank VM: they include no runtime/rank_vm*.hpp. Within the engines, the
threads and MPI engines know nothing of each other; only the registry
(engines/engine_registry.*) knows every engine. A public header's own .cpp
(anyp/<name>.hpp's <name>.cpp) lives on the header's floor, so that no
definition sits above the declaration's users.

Run: /usr/bin/python3 scripts/check_layers.py   (exit 1 and one line per
offending include, else "layers: ... includes, none runs up a floor").
"""

from __future__ import annotations

import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)

VOCABULARY = {
    "dtype",
    "errors",
    "host_tensor",
    "host_worker",
    "collective_algorithms",
    "run_config",
    "arg_ref",
    "run_stats",
    "timeline",
}
PUBLIC = {
    **{name: (0, "vocabulary") for name in VOCABULARY},
    "pl": (3, "frontend"),
    "pld": (3, "frontend"),
    "engines": (4, "engines"),
    "compiled_program": (5, "api"),
    "session": (5, "api"),
    "explore": (5, "api"),
    "verify": (5, "api"),
    "anyp": (5, "api"),
    "example_cli": (6, "cli"),
    "timeline_output": (6, "cli"),
}
SOURCE = {
    "common": (0, "vocabulary"),
    "host": (0, "vocabulary"),
    "ir": (1, "ir"),
    "runtime": (2, "runtime"),
    "frontend": (3, "frontend"),
    "compiler": (3, "compiler"),
    "engines": (4, "engines"),
    "api": (5, "api"),
    "cli": (6, "cli"),
}


def floor_of(path: str) -> tuple[int, str] | None:
    """(floor, group) of a repository path or an include target."""
    parts = pathlib.PurePosixPath(path).parts
    if parts[:2] == ("include", "anyp"):
        parts = parts[1:]
    if parts and parts[0] == "anyp" and len(parts) == 2:
        return PUBLIC.get(pathlib.PurePosixPath(parts[1]).stem)
    if parts and parts[0] == "src":
        parts = parts[1:]
    if parts and parts[0] in SOURCE:
        return SOURCE[parts[0]]
    return None


def problems_of(file: pathlib.Path) -> list[str]:
    rel = file.relative_to(ROOT).as_posix()
    mine = floor_of(rel)
    if mine is None:
        return [f"{rel}: not on any floor (add its directory to scripts/check_layers.py)"]
    found = []
    for target in INCLUDE.findall(file.read_text()):
        theirs = floor_of(target)
        if theirs is None:
            continue  # a generated file or a third-party header
        why = ""
        if theirs[0] > mine[0]:
            why = f"runs up from {mine[1]} (floor {mine[0]}) to {theirs[1]} (floor {theirs[0]})"
        elif theirs[0] == mine[0] and theirs[1] != mine[1]:
            why = f"crosses from {mine[1]} to {theirs[1]} on floor {mine[0]}"
        elif mine[1] == "runtime" and theirs[1] == "ir" and target != "ir/op_attrs.hpp":
            why = "the runtime takes only ir/op_attrs.hpp from the IR"
        elif re.match(r"src/runtime/(race/|timeline/|cost_counter)", rel) and re.match(
            r"runtime/rank_vm", target
        ):
            why = "an observer includes the rank VM (observers stand below it)"
        elif (rel.startswith("src/engines/threads/") and target.startswith("engines/mpi/")) or (
            rel.startswith("src/engines/mpi/") and target.startswith("engines/threads/")
        ):
            why = "one engine includes another (only engines/engine_registry knows every engine)"
        if why:
            found.append(f'{rel}: #include "{target}" {why}')
    # A public header's definitions live on its floor: anyp/<name>.hpp's
    # <name>.cpp sits on the header's floor, not above it.
    own = f"anyp/{file.stem}.hpp"
    if rel.endswith(".cpp") and own in INCLUDE.findall(file.read_text()):
        theirs = floor_of(own)
        if theirs is not None and theirs[0] != mine[0]:
            found.append(
                f'{rel}: defines "{own}" (floor {theirs[0]}, {theirs[1]}) on floor '
                f"{mine[0]} ({mine[1]}); a public header's .cpp lives on its floor"
            )
    return found


def main() -> int:
    files = sorted(
        p
        for base in ("src", "include")
        for p in (ROOT / base).rglob("*")
        if p.suffix in (".cpp", ".hpp", ".in")
    )
    problems = [line for f in files for line in problems_of(f)]
    for line in problems:
        print(line)
    if problems:
        print(f"layers: {len(problems)} includes run up or across a floor", file=sys.stderr)
        return 1
    count = sum(len(INCLUDE.findall(f.read_text())) for f in files)
    print(f"layers: {len(files)} files, {count} includes, none runs up a floor")
    return 0


if __name__ == "__main__":
    sys.exit(main())
