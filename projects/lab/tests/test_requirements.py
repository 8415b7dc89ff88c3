"""The lab's own requirements: a missing one is a one-line error naming requirements.txt."""
import sys
from pathlib import Path

import pytest

from auc_ner_lab.requirements import MissingRequirement, require

LAB = Path(__file__).resolve().parents[1]


def test_present_module_is_returned():
    assert require("json", "x").dumps([1]) == "[1]"


def test_missing_module_names_the_requirements_file(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import fails as if not installed
    with pytest.raises(MissingRequirement, match=r"^plotting needs matplotlib, which is not installed .*: pip install -r projects/lab/requirements.txt "):
        require("matplotlib", "plotting")


def test_the_library_does_not_carry_the_labs_requirements():
    """scipy, matplotlib and Ray are the lab's (requirements.txt), not the library's."""
    import tomllib

    project = tomllib.loads((LAB.parents[1] / "pyproject.toml").read_text())["project"]
    declared = " ".join(project["dependencies"] + [d for ds in project["optional-dependencies"].values() for d in ds])
    lab = [line.split()[0] for line in (LAB / "requirements.txt").read_text().splitlines() if line.strip() and not line.startswith("#")]
    for name in ("scipy", "matplotlib", "ray"):
        assert name not in declared and any(req.startswith(name) for req in lab)
