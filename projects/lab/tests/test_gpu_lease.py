"""scripts/gpu_lease on a machine without a GPU: the commit its rows name (issue 45: pack.sh
refuses a tree with uncommitted changes; setup.sh's tree_stamp.py check refuses a copy that is
not the stamped commit; a row of the copy names what a CPU row of the clean tree names)."""
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from auc_ner_lab import provenance
from auc_ner_lab.runner import run_study
from auc_ner_lab.spec import parse_spec
from lab_helpers import QUIET, rows

LEASE = Path(__file__).resolve().parents[1] / "scripts" / "gpu_lease"
GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]


def _stamp():
    spec = importlib.util.spec_from_file_location("tree_stamp", LEASE / "tree_stamp.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _repo(tmp_path: Path) -> Path:
    """A checkout with code, an executable, a link, and a results store whose rows change."""
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "code.py").write_text("x = 1\n")
    (repo / "run.sh").write_text("#!/bin/sh\n")
    (repo / "run.sh").chmod(0o755)
    os.symlink("pkg", repo / "link")
    (repo / "projects" / "lab" / "results" / "s").mkdir(parents=True)
    (repo / "projects" / "lab" / "results" / "s" / "row.json").write_text("{}\n")
    subprocess.run(GIT + ["init", "-q", str(repo)], check=True)
    subprocess.run(GIT + ["-C", str(repo), "add", "."], check=True)
    subprocess.run(GIT + ["-C", str(repo), "commit", "-qm", "first"], check=True)
    return repo


def _tool(repo: Path, *args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(LEASE / "tree_stamp.py"), *args], cwd=cwd or repo,
                          capture_output=True, text=True, timeout=60)


def _head(repo: Path) -> str:
    return subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()


def test_its_changes_are_the_runners():
    """What the stamp refuses is what a CPU row calls "+changes" (`provenance.git_commit`)."""
    assert _stamp().CODE_PATHS == provenance._CODE_PATHS


def test_a_dirty_tree_is_refused_in_one_line_and_nothing_is_stamped(tmp_path):
    repo = _repo(tmp_path)
    (repo / "pkg" / "code.py").write_text("x = 2\n")
    done = _tool(repo, "write", ".gpuC")
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        "tree_stamp.py: refusing to pack a working tree with uncommitted changes (1 tracked files outside "
        "projects/lab/results/, first: pkg/code.py): commit them, then pack (GPU rows name the commit only)"]
    assert not (repo / ".gpuC").exists()
    # rows a campaign appends (results/) and untracked files are not changes, as for a CPU row
    (repo / "pkg" / "code.py").write_text("x = 1\n")
    (repo / "projects" / "lab" / "results" / "s" / "row.json").write_text('{"new": 1}\n')
    (repo / "projects" / "lab" / "results" / "s" / "new.json").write_text("{}\n")
    (repo / "notes.txt").write_text("untracked\n")
    assert _tool(repo, "write", ".gpuC").returncode == 0
    assert (repo / ".gpuC" / "commit").read_text() == _head(repo) + "\n"


def test_the_copy_without_git_checks_against_the_stamp_and_names_the_commit(tmp_path):
    repo = _repo(tmp_path)
    assert _tool(repo, "write", ".gpuC").returncode == 0
    copy = tmp_path / "copy"  # what a call carries: the files, no .git; results moved away
    shutil.copytree(repo, copy, symlinks=True, ignore=shutil.ignore_patterns(".git"))
    shutil.rmtree(copy / "projects" / "lab" / "results")
    done = _tool(copy, "check", ".gpuC")
    assert done.returncode == 0 and done.stdout == _head(repo) + "\n"
    for change in (lambda: (copy / "pkg" / "code.py").write_text("x = 2\n"), lambda: (copy / "run.sh").unlink(),
                   lambda: ((copy / "link").unlink(), os.symlink("elsewhere", copy / "link"))):
        shutil.rmtree(copy)
        shutil.copytree(repo, copy, symlinks=True, ignore=shutil.ignore_patterns(".git"))
        change()
        done = _tool(copy, "check", ".gpuC")
        assert done.returncode == 1 and done.stdout == ""
        line, = done.stderr.strip().splitlines()
        assert line.startswith(f"tree_stamp.py: this tree is not commit {_head(repo)[:12]} that .gpuC was packed at (1 files differ")


def test_setup_refuses_a_copy_that_is_not_the_commit_before_it_unpacks_anything(tmp_path):
    """setup.sh (sourced by the run scripts from the copy's root) checks the stamp first: a copy
    that is not the commit ends the call there, in one line; the commit's goes on to unpack
    (here without .gpuA, so it stops at the unpacking, after naming the commit)."""
    repo = _repo(tmp_path)
    assert _tool(repo, "write", ".gpuC").returncode == 0
    copy = tmp_path / "copy"
    shutil.copytree(repo, copy, symlinks=True, ignore=shutil.ignore_patterns(".git"))
    for name in ("setup.sh", "tree_stamp.py"):
        shutil.copy(LEASE / name, copy / ".gpuC" / name)
    source = ["bash", "-c", ". .gpuC/setup.sh || exit 7"]
    done = subprocess.run(source, cwd=copy, capture_output=True, text=True, timeout=60)
    assert done.returncode == 7 and f"commit {_head(repo)}: every tracked file" in done.stdout
    (copy / "pkg" / "code.py").write_text("x = 2\n")
    done = subprocess.run(source, cwd=copy, capture_output=True, text=True, timeout=60)
    assert done.returncode == 7 and done.stdout.strip().splitlines() == ["== setup at 0s"]
    assert done.stderr.strip().splitlines() == [
        f"tree_stamp.py: this tree is not commit {_head(repo)[:12]} that .gpuC was packed at (1 files differ, first: "
        "pkg/code.py): commit, run pack.sh again, call again (its rows would name code they did not run)"]


def test_a_blob_id_is_gits(tmp_path):
    data = b"some bytes\n\x00\xff"
    (tmp_path / "f").write_bytes(data)
    expected = subprocess.run(["git", "hash-object", str(tmp_path / "f")], capture_output=True, text=True, check=True).stdout.strip()
    assert _stamp().blob_id(data) == expected


def test_pack_refuses_a_dirty_tree_before_it_packs_anything(tmp_path):
    repo = _repo(tmp_path)
    (repo / "pkg" / "code.py").write_text("x = 2\n")
    env = dict(os.environ, PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]))
    done = subprocess.run(["bash", str(LEASE / "pack.sh")], cwd=repo, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1].startswith("tree_stamp.py: refusing to pack a working tree with uncommitted changes")
    assert not any((repo / d).exists() for d in (".gpuA", ".gpuB", ".gpuC"))


def test_a_row_of_the_copy_names_what_a_row_of_the_clean_checkout_names(tmp_path, monkeypatch):
    """setup.sh exports the commit the check printed as AUC_NER_LAB_COMMIT; the runner of a copy
    without .git writes it into versions as the runner of the checkout writes its commit."""
    repo = _repo(tmp_path)
    assert _tool(repo, "write", ".gpuC").returncode == 0
    copy = tmp_path / "copy"
    shutil.copytree(repo, copy, symlinks=True, ignore=shutil.ignore_patterns(".git"))
    commit = _tool(copy, "check", ".gpuC").stdout.strip()
    cells = parse_spec({"name": "t", "corpora": ["toy"], "methods": ["ce"], "sizes": [5], "partitions": 1}).cells()
    versions = {}
    for where, checkout, env in (("cpu", repo, None), ("gpu", copy, commit)):
        monkeypatch.setattr(provenance, "CHECKOUT", checkout)
        if env is None:
            monkeypatch.delenv("AUC_NER_LAB_COMMIT", raising=False)
        else:
            monkeypatch.setenv("AUC_NER_LAB_COMMIT", env)
        run_study(cells, tmp_path / where, workers=0, runner="lab_helpers:instant_cell", **QUIET)
        row, = rows(tmp_path / where)
        versions[where] = row["versions"]
    assert versions["gpu"] == versions["cpu"] and versions["gpu"]["git_commit"] == _head(repo)
    assert "git_diff_digest" not in versions["gpu"]


# ---- study run --cell: one cell a process (run_campaigns.sh) ---------------------------------------
def _cli_spec(tmp_path: Path) -> Path:
    import yaml

    from lab_data import write_toy_corpus

    corpora = write_toy_corpus(tmp_path / "corpus")
    spec = {"name": "t", "corpora": ["toy"], "corpora_dir": str(corpora), "methods": ["ce", "ova_auc"],
            "sizes": [2], "partitions": 2, "runner": "lab_helpers:instant_cell"}
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def test_study_run_cell_runs_only_the_cells_it_names(tmp_path):
    from auc_ner_lab.cli import app
    from lab_helpers import invoke, one_error_line

    spec, store = _cli_spec(tmp_path), tmp_path / "r"
    listed = invoke(app, "study", "run", spec, "--results", store, "--dry-run")
    ids = listed.stdout.split()
    assert listed.exit_code == 0 and len(ids) == 4 and listed.stderr.strip() == f"4 of 4 cells to run -> {store}"
    done = invoke(app, "study", "run", spec, "--results", store, "--cell", ids[2], "--workers", "0", "--no-progress")
    assert done.exit_code == 0, done.stderr
    assert [r["cell_id"] for r in rows(store)] == [ids[2]]
    # by key too, and a cell already done is skipped as in any run
    from auc_ner_lab.spec import load_spec

    key, = [c.key for c in load_spec(spec).cells() if c.id == ids[3]]
    done = invoke(app, "study", "run", spec, "--results", store, "--cell", key, "--cell", ids[2], "--workers", "0", "--no-progress")
    assert done.exit_code == 0, done.stderr
    assert sorted(r["cell_id"] for r in rows(store)) == sorted(ids[2:])
    listed = invoke(app, "study", "run", spec, "--results", store, "--dry-run", "--cell", ids[0], "--cell", ids[3])
    assert listed.stdout.split() == [ids[0]] and listed.stderr.strip() == f"1 of 2 cells to run -> {store}"
    line = one_error_line(invoke(app, "study", "run", spec, "--results", store, "--cell", "toy/ce/n=2/p9#0000000000", "--no-progress"))
    assert line == "Error: --cell: toy/ce/n=2/p9#0000000000 is no cell of the study (its ids: study run --dry-run)"
    assert len(rows(store)) == 2


def test_study_run_untraced_trains_again_only_the_cells_whose_row_no_commit_traces(tmp_path, monkeypatch):
    """--untraced: the cells whose latest ok row came from an uncommitted tree that no stored
    diff records are listed and trained again; their new rows stand and trace, the old stay."""
    import json

    from auc_ner_lab import provenance
    from auc_ner_lab.cli import app
    from lab_helpers import invoke

    monkeypatch.setattr(provenance, "CHECKOUT", tmp_path)  # no .git: the commit comes from the environment,
    monkeypatch.setenv("AUC_NER_LAB_COMMIT", "b" * 40)  # as on a lent GPU machine
    spec, store = _cli_spec(tmp_path), tmp_path / "r"
    assert invoke(app, "study", "run", spec, "--results", store, "--workers", "0", "--no-progress").exit_code == 0
    files = sorted(store.glob("*/*.json"))
    marked = []
    for path in files[:2]:  # two rows as rows were before they stored their diff
        row = json.loads(path.read_text())
        row["versions"]["git_commit"] = "a" * 40 + "+changes"
        path.write_text(json.dumps(row))
        marked.append(row["cell_id"])
    listed = invoke(app, "study", "run", spec, "--results", store, "--untraced", "--dry-run")
    assert sorted(listed.stdout.split()) == sorted(marked) and listed.stderr.strip() == f"2 of 2 cells to run -> {store}"
    done = invoke(app, "study", "run", spec, "--results", store, "--untraced", "--workers", "0", "--no-progress")
    assert done.exit_code == 0, done.stderr
    found = rows(store)
    assert len(found) == 6 and sorted(r["cell_id"] for r in found[4:]) == sorted(marked)
    assert all(r["versions"]["git_commit"] == "b" * 40 for r in found[4:])
    assert invoke(app, "study", "run", spec, "--results", store, "--untraced", "--dry-run").stdout.split() == []


# ---- run_campaigns.sh: its loop with a stand-in for `study run` ------------------------------------
FAKE_STUDY = r'''
import json, os, sys, time
from pathlib import Path
args = sys.argv[1:]
spec, results = Path(args[0]).stem, Path(args[args.index("--results") + 1])
if "--dry-run" in args:
    if os.environ.get("FAKE_PLAN_LOG"):
        with open(os.environ["FAKE_PLAN_LOG"], "a") as log:
            log.write(json.dumps(args) + "\n")
    done = {p.stem for p in results.glob("*.json")}
    todo = [c for c in Path(os.environ["FAKE_PLANS"], spec + ".txt").read_text().split() if c.replace("/", "_") not in done]
    print("\n".join(todo))
    print(f"{len(todo)} of 9 cells to run -> {results}", file=sys.stderr)
    sys.exit(0)
cell = args[args.index("--cell") + 1]
with open(os.environ["FAKE_LOG"], "a") as log:
    log.write(json.dumps({"pid": os.getpid(), "spec": spec, "cell": cell, "start": time.time(), "args": args}) + "\n")
time.sleep(30 if "slow" in cell else 1)
if "broken" in cell:
    print(f"FAILED  {cell}  1 s wall  ValueError", file=sys.stderr)
else:
    results.mkdir(parents=True, exist_ok=True)
    (results / (cell.replace("/", "_") + ".json")).write_text("{}")
    print(f"ok      {cell}  ents_f=0.500 1 s wall", file=sys.stderr)
with open(os.environ["FAKE_LOG"], "a") as log:
    log.write(json.dumps({"pid": os.getpid(), "end": time.time()}) + "\n")
'''
NODEV = ["c/hf_token_classification/n=20/p0#a", "c/crf/n=50/p0#b", "c/lowres_best_trf/n=50/p0#c",
         "c/broken/n=20/p1#e", "c/spacy_ner/n=20/p1#slow"]  # started first: the slow one outlives the limit
SELECTION = ["c/random_30/n=20/p0#f", "c/mnlp_10x3/n=20/p0#g", "c/entropy_30/n=20/p0#h", "c/random_10x3/n=20/p0#i"]


def _lease(tmp_path: Path, **env: str):
    """The repository root as a call gets it (projects/lab/studies, results), a stand-in study
    command, and run_campaigns.sh run there without setup.sh; its result, $OUT and the stand-in's log."""
    root, out, plans = tmp_path / "root", tmp_path / "out", tmp_path / "plans"
    for folder in (root / "projects" / "lab" / "studies", out, plans):
        folder.mkdir(parents=True)
    for spec, cells in (("campaign_trf_nodev", NODEV), ("campaign_selection", SELECTION)):
        (root / "projects" / "lab" / "studies" / f"{spec}.yaml").write_text("name: x\n")
        (plans / f"{spec}.txt").write_text("\n".join(cells) + "\n")
    fake = tmp_path / "fake_study.py"
    fake.write_text(FAKE_STUDY)
    variables = dict(os.environ, SETUP="", PY=sys.executable, STUDY=f"{sys.executable} {fake}", OUT=str(out),
                     FAKE_PLANS=str(plans), FAKE_LOG=str(tmp_path / "fake.log"), **env)
    done = subprocess.run(["bash", str(LEASE / "run_campaigns.sh")], cwd=root, env=variables, capture_output=True, text=True, timeout=120)
    return done, out, tmp_path / "fake.log"


def test_run_campaigns_dry_run_lists_the_queue_and_trains_nothing(tmp_path):
    done, out, log = _lease(tmp_path, DRY_RUN="1")
    assert done.returncode == 0, done.stderr
    listed = [line.split()[1] for line in done.stdout.splitlines() if line.startswith("campaign_") and "~" in line]
    assert listed == NODEV[::-1] + SELECTION  # nodev from its last cell backwards, then selection in order
    assert "9 cells, " in done.stdout and not log.exists() and not (out / "cells.tsv").exists()
    done, _, _ = _lease(tmp_path / "forward", DRY_RUN="1", NODEV_ORDER="forward", SPECS="campaign_selection campaign_trf_nodev")
    assert [line.split()[1] for line in done.stdout.splitlines() if line.startswith("campaign_") and "~" in line] == SELECTION + NODEV
    # ONLY keeps the cells whose id matches, in the same order
    done, _, _ = _lease(tmp_path / "only", DRY_RUN="1", ONLY="/(mnlp|spacy_ner)_?[0-9]*/")
    kept = [c for c in NODEV[::-1] + SELECTION if re.search("/(mnlp|spacy_ner)_?[0-9]*/", c)]
    assert kept and len(kept) < len(NODEV + SELECTION)
    assert [line.split()[1] for line in done.stdout.splitlines() if line.startswith("campaign_") and "~" in line] == kept


def test_run_campaigns_trains_each_cell_in_its_own_process_and_stops_before_the_limit(tmp_path):
    import json
    import tarfile
    import time

    began = time.time()
    done, out, log = _lease(tmp_path, LIMIT="12", SLOTS="3", EST_SCALE="2")
    assert done.returncode == 0, done.stdout + done.stderr
    assert time.time() - began < 12 + 30
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    starts = [e for e in entries if "cell" in e]
    # one process a cell, each once, on GPU 0 in a worker process of its own study
    assert len({e["pid"] for e in starts}) == len(starts) == len({e["cell"] for e in starts})
    assert all(e["args"][e["args"].index("--gpu-id") + 1] == "0" and e["args"][e["args"].index("--workers") + 1] == "1"
               and e["args"].count("--cell") == 1 for e in starts)
    started = [line.split()[1] for line in done.stdout.splitlines() if line.startswith("start ")]  # in launch order
    assert sorted(started) == sorted(e["cell"] for e in starts)
    # nodev first, from its last cell, then selection in order; 10x3 (estimate 12 s at EST_SCALE=2)
    # never fits before the limit, the others as time allows
    assert started[:len(NODEV)] == NODEV[::-1] and "c/mnlp_10x3/n=20/p0#g" not in started
    assert started[len(NODEV):] == [c for c in SELECTION if c in started]
    # never more than SLOTS at once
    ends = {e["pid"]: e["end"] for e in entries if "end" in e}
    for e in starts:
        assert sum(1 for o in starts if o["start"] <= e["start"] < ends.get(o["pid"], float("inf"))) <= 3
    # cells.tsv: one line a started cell; the slow one was stopped at the limit and left no row
    table = [line.split("\t") for line in (out / "cells.tsv").read_text().splitlines()[1:]]
    result = {line[1]: (line[5], line[6]) for line in table}
    assert set(result) == set(started)
    assert result["c/spacy_ner/n=20/p1#slow"] == ("124", "none") and result["c/broken/n=20/p1#e"] == ("0", "FAILED")
    assert all(r == ("0", "ok") for cell, r in result.items() if "slow" not in cell and "broken" not in cell)
    # the rows come back: every ok cell's, under results/<store>/
    with tarfile.open(out / "rows.tgz") as tar:
        names = {n for n in tar.getnames() if n.endswith(".json")}
    assert names == {f"results/{'campaign_selection' if c in SELECTION else 'campaign_trf_nodev'}/{c.replace('/', '_')}.json"
                     for c, r in result.items() if r[1] == "ok"}
    assert (out / "logs.tgz").is_file() and not (out / "logs").exists()
    assert "== done at" in done.stdout and f"; {len(NODEV + SELECTION) - len(started)} not started" in done.stdout


def test_run_campaigns_untraced_plans_and_trains_with_study_runs_untraced(tmp_path):
    """UNTRACED=1: the plan and every cell's run pass --untraced (the cells whose row no commit
    traces, issue 45); without it neither does."""
    import json

    for untraced, folder in (("1", "untraced"), ("", "plain")):
        plans = tmp_path / f"{folder}_plans.log"
        done, _, log = _lease(tmp_path / folder, LIMIT="8", SLOTS="9", EST_SCALE="1", ONLY="/(crf|random_30)/",
                              UNTRACED=untraced, FAKE_PLAN_LOG=str(plans))
        assert done.returncode == 0, done.stdout + done.stderr
        planned = [json.loads(line) for line in plans.read_text().splitlines()]
        trained = [json.loads(line)["args"] for line in log.read_text().splitlines() if "args" in line]
        assert len(planned) == 2 and len(trained) == 2
        assert all(("--untraced" in args) == bool(untraced) for args in planned + trained)


def test_run_campaigns_refuses_a_setup_that_is_not_the_trees(tmp_path):
    """A .gpuC packed before issue 45 holds a setup.sh that checks no stamp (its rows would name
    the commit of that pack): the lease stops in one line before it sources it."""
    root = tmp_path / "root"
    (root / ".gpuC").mkdir(parents=True)
    (root / "projects" / "lab" / "scripts" / "gpu_lease").mkdir(parents=True)
    shutil.copy(LEASE / "setup.sh", root / "projects" / "lab" / "scripts" / "gpu_lease" / "setup.sh")
    (root / ".gpuC" / "setup.sh").write_text("export AUC_NER_LAB_COMMIT=$(cat .gpuC/commit)\n")
    done = subprocess.run(["bash", str(LEASE / "run_campaigns.sh")], cwd=root, env=dict(os.environ, OUT=str(tmp_path / "out")),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert done.stdout.strip().splitlines() == [
        "run_campaigns.sh: .gpuC/setup.sh is not this tree's scripts/gpu_lease/setup.sh: run pack.sh again"]
