"""The lab as a spaCy project: its smoke workflow runs end to end in a copy of the folder (the
corpus, statistics, partitions, a study and its report on the toy corpus), and its README's
command tables are what `spacy project document` writes from project.yml."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import srsly

from auc_ner_lab.store import ResultsStore

LAB = Path(__file__).resolve().parents[1]
AUTO_START = "<!-- WEASEL: AUTO-GENERATED DOCS START (do not remove) -->"
AUTO_END = "<!-- WEASEL: AUTO-GENERATED DOCS END (do not remove) -->"


def _section(text: str) -> str:
    return text[text.index(AUTO_START): text.index(AUTO_END)]


def test_the_readme_documents_the_project_as_it_is():
    done = subprocess.run([sys.executable, "-m", "spacy", "project", "document", str(LAB)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert _section((LAB / "README.md").read_text(encoding="utf8")) == _section(done.stdout), "run: spacy project document projects/lab --output projects/lab/README.md"


def test_every_command_of_a_workflow_is_defined_and_the_smoke_study_is_small():
    project = srsly.read_yaml(LAB / "project.yml")
    names = {c["name"] for c in project["commands"]}
    assert all(step in names for steps in project["workflows"].values() for step in steps)
    smoke = srsly.read_yaml(LAB / "studies" / "smoke.yaml")
    assert smoke["overrides"]["training.max_steps"] <= 10 and smoke["partitions"] * len(smoke["methods"]) <= 4


@pytest.mark.slow
def test_the_smoke_workflow_runs_in_a_copy_of_the_project(tmp_path):
    copy = tmp_path / "lab"
    copy.mkdir()
    shutil.copy(LAB / "project.yml", copy)
    shutil.copytree(LAB / "auc_ner_lab", copy / "auc_ner_lab", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(LAB / "assets" / "smoke_toy", copy / "assets" / "smoke_toy")
    (copy / "studies").mkdir()
    shutil.copy(LAB / "studies" / "smoke.yaml", copy / "studies")
    shutil.copytree(LAB / "configs", copy / "configs")  # the package's configs, through the link
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-m", "spacy", "project", "run", "smoke", str(copy)], cwd=copy, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    rows = ResultsStore(copy / "smoke" / "results").rows()
    assert len(rows) == 4 and all(r["status"] == "ok" for r in rows)
    assert json.loads((copy / "smoke" / "partitions" / "manifest.json").read_text())["sizes"] == [4]
    assert "| ova_auc |" in (copy / "smoke" / "report" / "report.md").read_text()
