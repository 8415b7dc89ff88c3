"""The package stands alone: importing it, building and training every method config and its
command line load no module of the lab (projects/lab) or of anything else outside the package;
no module imports from a layer above its own; and no import goes round in a circle.

Layers, each importing only from its own and those before it (read from the files with ast):
``labels``, ``extras`` -> ``data`` (files, column I/O, gold arrays) -> ``ml`` -> ``losses`` ->
``schemes`` -> ``pipeline`` -> ``training``, ``methods`` -> ``cli`` -> ``api`` -> the package root
(``__init__`` imports everything to register it, ``__main__`` runs the cli).
"""
import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "spacy_auc_ner"
LAYERS = [
    {"labels", "extras", "capabilities"},
    {"data", "outputs"},  # column files, file writing and what a command may write
    {"ml"},
    {"losses"},
    {"schemes"},
    {"pipeline"},
    {"training", "methods", "full_configs"},  # full_configs: the config command's work, over methods
    {"annotation"},  # which sentences to annotate next: a trained pipeline's confidences (training.confidences)
    {"cli"},
    {"api"},  # the declared API re-exports from every layer
    {"__init__", "__main__"},
]
LAYER = {group: i for i, groups in enumerate(LAYERS) for group in groups}


def _group(module: str) -> str:
    """'spacy_auc_ner.training.readers' -> 'training'; the package itself -> '__init__'."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts = parts[:-1]
    return ".".join(parts)


def _imports(path: Path, source: str = None):
    """(line, absolute module name) of every import of `path` (or of `source` as if it were
    that file), relative ones resolved."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    source = path.read_text(encoding="utf8") if source is None else source
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module
            yield node.lineno, target
            for alias in node.names:  # `from . import losses` imports a module too
                if f"{target}.{alias.name}".startswith("spacy_auc_ner.") and (
                    (ROOT / Path(*f"{target}.{alias.name}".split("."))).with_suffix(".py").exists()
                    or (ROOT / Path(*f"{target}.{alias.name}".split("."))).is_dir()
                ):
                    yield node.lineno, f"{target}.{alias.name}"


def test_every_module_is_in_a_layer():
    groups = {_group(_module_name(p)) for p in PACKAGE.rglob("*.py")}
    assert groups <= set(LAYER), groups - set(LAYER)


def test_no_module_imports_from_a_layer_above_its_own():
    upward = []
    for path in sorted(PACKAGE.rglob("*.py")):
        own = _group(_module_name(path))
        for line, target in _imports(path):
            top = target.split(".")[0]
            assert top not in ("auc_ner_lab", "tests", "scripts", "benchmarks"), f"{path}:{line} imports {target}"
            if top == "spacy_auc_ner" and LAYER[_group(target)] > LAYER[own]:
                upward.append(f"{path.relative_to(ROOT)}:{line}: {own} imports {target}")
    assert not upward, "\n".join(upward)


def test_the_layer_check_sees_an_upward_import():
    """The check can fail: a data module importing the pipeline is caught."""
    fake = PACKAGE / "data" / "columns.py"
    assert list(_imports(fake, "from ..pipeline.scoring import METRICS\n")) == [(1, "spacy_auc_ner.pipeline.scoring")]
    assert LAYER[_group("spacy_auc_ner.pipeline.scoring")] > LAYER[_group(_module_name(fake))]


def _cycles(graph):
    """The import cycles of ``graph`` (module -> the modules it imports): its strongly connected
    components of two modules or more (Tarjan's algorithm), each sorted."""
    index, low, stack, found = {}, {}, [], []

    def visit(module):
        index[module] = low[module] = len(index)
        stack.append(module)
        for target in graph.get(module, ()):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = []
            while not component or component[-1] != module:
                component.append(stack.pop())
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return found


def _import_graph():
    """Each module of the package -> the package's modules it imports, at the top or inside a
    function (a deferred import that closes a circle is a circle all the same)."""
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    return {name: {t for _, t in _imports(path) if t in modules and t != name} for name, path in modules.items()}


def test_no_import_cycle_in_the_package():
    assert _cycles(_import_graph()) == []


def test_the_cycle_check_sees_a_cycle():
    """The check can fail: a back arrow from spacy_training to budget (the cycle the split of
    budget.py into budget and no_dev removed) is one cycle, and one module alone is none."""
    graph = _import_graph()
    graph["spacy_auc_ner.training.spacy_training"] = {*graph["spacy_auc_ner.training.spacy_training"], "spacy_auc_ner.training.budget"}
    assert ["spacy_auc_ner.training.budget", "spacy_auc_ner.training.spacy_training"] in _cycles(graph)
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


# What a user's process loads: the package, its CLI, and every method built and trained one step
# on a toy corpus. Run in a fresh interpreter so that what this test session imported (the lab's
# tests run in it too) does not count.
_TRAIN = r"""
import sys
from pathlib import Path

import spacy
import spacy_auc_ner
import spacy_auc_ner.cli
from spacy.tokens import Doc, DocBin
from spacy.training import Example
from spacy.training.initialize import init_nlp
from spacy.util import load_config_from_str
from spacy_auc_ner.methods import method_config, method_names

corpus = Path(sys.argv[1])
vocab = spacy.blank("en").vocab
docs = [
    Doc(vocab, words="Aspirin treats breast cancer in Paris .".split(), ents=["O", "O", "B-Disease", "I-Disease", "O", "B-LOC", "O"]),
    Doc(vocab, words="John Smith lives in Berlin".split(), ents=["B-PER", "I-PER", "O", "O", "B-LOC"]),
]
DocBin(docs=docs).to_disk(corpus)
losses = {}
for name in method_names():
    overrides = {"paths.train": str(corpus), "paths.dev": str(corpus)}
    nlp = init_nlp(load_config_from_str(method_config(name, "cpu").to_str(interpolate=False), overrides=overrides, interpolate=False))
    losses[name] = nlp.update([Example(nlp.make_doc(d.text), d) for d in docs])
"""
# the modules loaded from the checkout but outside the package (the lab, tests, scripts)
_OUTSIDE = r"""
import json, sys
from pathlib import Path
import spacy_auc_ner

root = Path(spacy_auc_ner.__file__).resolve().parents[1]
files = {n: Path(m.__file__).resolve() for n, m in list(sys.modules.items()) if getattr(m, "__file__", None)}
# a virtualenv inside the checkout (.venv, CI's .venv-ci) holds installed packages, not the checkout's code
installed = {Path(p).resolve() for p in (sys.prefix, sys.exec_prefix)}
outside = sorted(
    n for n, f in files.items()
    if f.is_relative_to(root) and not f.is_relative_to(root / "spacy_auc_ner") and not any(f.is_relative_to(p) for p in installed)
)
trained = globals().get("losses", {})
print(json.dumps({"outside": outside, "trained": sorted(trained), "finite": all(v == v for l in trained.values() for v in l.values())}))
"""


def _probe(code: str, tmp_path: Path, *path: Path) -> dict:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": os.pathsep.join(str(p) for p in (ROOT, *path))}
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path / "toy.spacy")], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_the_package_its_cli_and_every_method_load_nothing_of_the_lab(tmp_path):
    from spacy_auc_ner.methods import method_names

    found = _probe(_TRAIN + _OUTSIDE, tmp_path)
    assert found["trained"] == method_names() and found["finite"]
    assert found["outside"] == []


def test_the_probe_sees_a_module_outside_the_package(tmp_path):
    """The sys.modules check can fail: a module of the checkout outside the package (here a
    helper of these tests; the lab's modules are such modules) is named."""
    found = _probe("import spacy_auc_ner.cli\nimport shared_data\n" + _OUTSIDE, tmp_path, ROOT / "tests")
    assert "shared_data" in found["outside"] and "spacy_auc_ner.cli" not in found["outside"]


def test_importing_the_package_and_its_cli_loads_nothing_outside_it(tmp_path):
    assert _probe("import spacy_auc_ner\nimport spacy_auc_ner.cli\n" + _OUTSIDE, tmp_path)["outside"] == []


def test_every_entry_point_points_into_the_package():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf8"))["project"]
    targets = [*project["scripts"].values()] + [v for group in project["entry-points"].values() for v in group.values()]
    assert len(targets) >= 30  # the console script, the factory, architectures, scorer, strategies, readers, losses
    for target in targets:
        module = target.split(":")[0]
        assert module.startswith("spacy_auc_ner."), target
        path = ROOT / Path(*module.split("."))
        assert path.with_suffix(".py").is_file() or (path / "__init__.py").is_file(), target
