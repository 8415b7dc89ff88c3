"""The project's main workflow, run by `spacy project run` step by step on a toy corpus (the
smoke test explosion/projects keep beside a component): every path, var and dependency of
project.yml up to the scored model, in a copy of the project, training cut to a few steps
through spaCy's SPACY_CONFIG_OVERRIDES. The lab's project has its own smoke workflow
(projects/lab/tests/test_lab_project.py)."""
import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import srsly

from spacy_auc_ner.data.columns import Sentence, write_columns

sys.path.insert(0, str(Path(__file__).parent))
from study_toy_corpus import SENTENCES  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
# the steps of the workflow `all`
STEPS = ["configs", "corpus", "draw", "train", "evaluate"]


def test_the_smoke_test_runs_the_main_workflow():
    assert srsly.read_yaml(ROOT / "project.yml")["workflows"]["all"] == STEPS


@pytest.mark.slow
def test_the_main_workflow_trains_and_scores_on_a_toy_corpus(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(ROOT / "project.yml", project)
    shutil.copytree(ROOT / "configs", project / "configs")  # the files the link points to: configs/full/ lands here
    lab = project / "projects" / "lab"  # corpus and draw call the lab's corpus and partition tools
    shutil.copytree(ROOT / "projects" / "lab" / "auc_ner_lab", lab / "auc_ner_lab", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "projects" / "lab" / "lab.py", lab)
    data = tmp_path / "data"
    (data / "ncbi_disease").mkdir(parents=True)
    sentences = [Sentence(tuple(text.split()), tuple(tags)) for text, tags in SENTENCES]
    for split in ("train", "dev", "test"):
        write_columns(data / "ncbi_disease" / f"{split}.tsv", sentences * (2 if split == "train" else 1))
    env = {**os.environ, "SPACY_CONFIG_OVERRIDES": "--training.max_steps 4 --training.eval_frequency 2"}
    for step in STEPS:
        done = subprocess.run(
            [sys.executable, "-m", "spacy", "project", "run", step, str(project), "--vars.data_dir", str(data), "--vars.n_train", "5"],
            cwd=project, env=env, capture_output=True, text=True,
        )
        assert done.returncode == 0, f"{step}: {done.stdout[-1500:]}{done.stderr[-1500:]}"
    assert (project / "configs" / "full" / "ova_auc.cfg").is_file() and (project / "configs" / "full" / "spacy_ner_trf.cfg").is_file()
    assert (project / "partitions" / "ncbi_disease" / "n5-p0.spacy").is_file()
    metrics = json.loads((project / "metrics" / "ncbi_disease-ova_auc.json").read_text())
    scores = {k: v for k, v in metrics.items() if k.startswith("ents_") and isinstance(v, float)}
    assert {"ents_f", "ents_untyped_f", "ents_seqeval_micro_f"} <= set(scores)
    assert all(math.isfinite(v) and 0 <= v <= 1 for v in scores.values())


def test_no_tracked_file_holds_a_merge_conflict_marker():
    """A merge resolved by `git add` with its markers still in (it happened to four lab
    documents once) is caught here, not by a reader."""
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout.split(b"\0")
    marked = []
    for name in filter(None, files):
        path = ROOT / name.decode("utf8")
        if path.suffix not in {".py", ".md", ".cfg", ".yml", ".yaml", ".toml", ".txt", ".sh"} or not path.is_file():
            continue
        lines = path.read_text(encoding="utf8", errors="replace").splitlines()
        if any(line.startswith(("<<<<<<< ", ">>>>>>> ")) for line in lines):
            marked.append(str(name, "utf8"))
    assert not marked
