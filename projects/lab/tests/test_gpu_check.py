"""benchmarks/gpu_check.sh on a machine without a GPU: one clear line and exit status 1,
before any step runs (on a GPU machine it is the check itself, see docs/gpu.md); every Python
file it runs exists."""
import re
import subprocess
import sys
from pathlib import Path

import pytest
from thinc.util import has_cupy_gpu

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(has_cupy_gpu, reason="a GPU is here: the script would run its steps")
def test_without_a_gpu_the_script_stops_with_one_line(tmp_path):
    done = subprocess.run(["bash", str(ROOT / "benchmarks" / "gpu_check.sh"), str(tmp_path / "corpus"), str(tmp_path / "out")],
                          env={"PYTHON": sys.executable, "PATH": "/usr/bin:/bin"}, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("gpu_check.sh: ") and ("cupy is not installed" in last or "finds no CUDA GPU" in last)
    assert "Traceback" not in done.stderr and "== device tests" not in done.stdout


def test_every_python_file_the_script_runs_exists():
    """The script runs from projects/lab (it cd's there): each .py path it names resolves from
    there (the device tests live in the repository's root tests/)."""
    script = (ROOT / "benchmarks" / "gpu_check.sh").read_text()
    commands = "\n".join(line for line in script.splitlines() if not line.lstrip().startswith("#"))
    paths = set(re.findall(r"(?<![\w$/.-])((?:\.\./)*[\w-]+(?:/[\w.-]+)*\.py)\b", commands))
    assert {"../../tests/test_device_mixing.py", "../../tests/test_loss_contract.py"} <= paths
    missing = [p for p in paths if not (ROOT / p).exists()]
    assert not missing, missing
