"""scripts/gpu_lease/process_check.py's poison: every empty array it hands out is filled, so
that code reading an element it never wrote changes a training; and it restores the real
constructors (the check's later runs, and everything else in the process, see them again)."""
import importlib.util
from pathlib import Path

import numpy
import torch

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "gpu_lease" / "process_check.py"


def _script():
    spec = importlib.util.spec_from_file_location("process_check", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_poison_fills_numpy_and_torch_empties_then_restores_them():
    check = _script()
    real = (numpy.empty, numpy.empty_like, torch.empty, torch.empty_like)
    check.poison(True)
    try:
        assert numpy.isnan(numpy.empty((2, 3), dtype="f4")).all()
        assert (numpy.empty_like(numpy.zeros(4, dtype="i8")) == 77777).all()
        assert (numpy.empty(3, dtype="u1") == 7).all() and numpy.empty(2, dtype=bool).dtype == bool
        assert torch.isnan(torch.empty(5)).all() and (torch.empty_like(torch.zeros(2, dtype=torch.int32)) == 77777).all()
        check.poison(True)  # twice: still the real constructors underneath, not a poisoned one
        assert numpy.isnan(numpy.empty(1)).all()
    finally:
        check.poison(False)
    assert (numpy.empty, numpy.empty_like, torch.empty, torch.empty_like) == real
    assert check.FILLED["numpy"] >= 4 and check.FILLED["torch"] == 2
