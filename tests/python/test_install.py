"""`cmake --install` puts the package (its .py files and the native module)
into <prefix>/lib/pythonX.Y/dist-packages, where Debian's interpreter
imports it without the source tree."""

import os
import subprocess
import sys
import sysconfig

from conftest import ROOT


def test_the_installed_package_imports_and_runs_without_the_source_tree(tmp_path):
    build = os.environ["ANYP_BUILD_DIR"]
    subprocess.run(
        ["cmake", "--install", build, "--prefix", str(tmp_path)], check=True, capture_output=True
    )
    version = sysconfig.get_python_version()
    site = tmp_path / "lib" / f"python{version}" / "dist-packages"
    assert (site / "anyp" / "language" / "distributed" / "system.py").is_file()
    example = os.path.join(ROOT, "examples", "distributed", "07_dynamic_rank_count.py")
    env = {k: v for k, v in os.environ.items() if k not in ("ANYP_BUILD_DIR", "PYTHONPATH")}
    env["PYTHONPATH"] = str(site)
    probe = (
        "import anyp, os; print(os.path.dirname(anyp._core.__file__) == " f"{str(site / 'anyp')!r})"
    )
    out = subprocess.run(
        [sys.executable, "-s", "-c", probe],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        check=False,
    )
    assert (out.returncode, out.stdout, out.stderr) == (0, "True\n", "")
    run = subprocess.run(
        [sys.executable, "-s", example, "-d", "0,1,2"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        check=False,
    )
    assert (run.returncode, run.stdout, run.stderr) == (0, "OK\n", "")
