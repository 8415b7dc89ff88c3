"""The study runner: durable rows in a results store, resume after a kill, failing cells,
parallel workers, several studies writing into one store."""
import os
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
import yaml

import lab_helpers
from auc_ner_lab.execution import StudyError, execute_cell
from auc_ner_lab.runner import plan, run_study
from auc_ner_lab.spec import parse_spec
from auc_ner_lab.store import ResultsStore, StoreError
from lab_helpers import QUIET, run_killed_midway, study_command, study_env
from lab_helpers import rows as read_results


def _cells(methods=("ce", "ova_auc"), sizes=(10, 20), partitions=2):
    methods = [m if m != "broken" else {"name": "broken", "config": "x.cfg"} for m in methods]
    spec = {"name": "t", "corpora": ["toy"], "methods": methods, "sizes": list(sizes), "partitions": partitions}
    return parse_spec(spec).cells()


def test_in_process_study_writes_one_row_per_cell_and_resumes(tmp_path):
    cells = _cells()
    out = tmp_path / "r"
    outcome = run_study(cells, out, workers=0, runner="lab_helpers:instant_cell", **QUIET)
    assert (outcome.total, outcome.ok, outcome.failed, outcome.skipped) == (8, 8, 0, 0)
    rows = read_results(out)
    assert sorted(r["cell_id"] for r in rows) == sorted(c.id for c in cells)
    assert sorted(p.parent.name for p in out.glob("*/*.json")) == sorted(c.key for c in cells)  # a folder per cell
    row = next(r for r in rows if r["key"] == cells[0].key)
    assert row["status"] == "ok" and row["scores"]["ents_f"] == pytest.approx(0.41)
    assert {"seconds", "finished", "host", "pid", "config", "overrides", "partition", "size", "key"} <= set(row)
    assert row["device"] == "cpu"  # a cell with gpu_id -1; a GPU cell's row names its GPU
    again = run_study(cells, out, workers=0, runner="lab_helpers:instant_cell", **QUIET)
    assert (again.ok, again.skipped) == (0, 8)
    assert len(read_results(out)) == 8
    # --again: every cell trains anew, its new row supersedes the old, both are kept
    redo = run_study(cells[:2], out, workers=0, runner="lab_helpers:instant_cell", again=True, **QUIET)
    assert (redo.ok, redo.skipped) == (2, 0) and len(read_results(out)) == 10


def test_failing_cell_is_recorded_and_the_study_goes_on(tmp_path):
    cells = _cells(methods=("ce", "broken", "ova_auc"), sizes=(10,), partitions=2)
    out = tmp_path / "r"
    outcome = run_study(cells, out, workers=0, runner=lab_helpers.instant_cell, **QUIET)
    assert (outcome.ok, outcome.failed) == (4, 2)
    rows = read_results(out)
    failed = [r for r in rows if r["status"] == "failed"]
    assert {r["method"] for r in failed} == {"broken"}
    assert failed[0]["error"].startswith("ValueError: this cell is meant to fail")
    assert "instant_cell" in failed[0]["traceback"] and "Traceback" in failed[0]["traceback"]
    # cells after the failing one ran: the last cell of the study is there
    assert cells[-1].id in {r["cell_id"] for r in rows if r["status"] == "ok"}
    # a rerun retries only the failed cells (and they fail again), unless told not to
    assert [c.method for c in plan(cells, rows)] == ["broken", "broken"]
    assert plan(cells, rows, retry_failed=False) == []
    rerun = run_study(cells, out, workers=0, runner=lab_helpers.instant_cell, **QUIET)
    assert (rerun.ok, rerun.failed, rerun.skipped) == (0, 2, 4)


def test_a_superseded_row_is_trained_again_and_its_new_row_stands(tmp_path):
    """A self-training row from before the fix of its code (no extras.tokens) does not count as
    done: plan and run_study train its cell again, and the new row, which records the fix,
    stands; the old row stays in the store."""
    import json

    cells = _cells(sizes=(10,), partitions=1)
    out = tmp_path / "r"
    run_study(cells, out, workers=0, runner="lab_helpers:instant_cell", **QUIET)
    first = next(f for f in out.glob("*/*.json") if json.loads(f.read_text())["key"] == cells[0].key)
    row = json.loads(first.read_text())
    row["scores"]["extras"] = {"rounds": [{"round": 0, "dev_f": 0.5}], "chosen_round": 0}
    first.write_text(json.dumps(row))
    rows = read_results(out)
    assert [c.key for c in plan(cells, rows)] == [cells[0].key]
    redo = run_study(cells, out, workers=0, runner="lab_helpers:instant_cell", **QUIET)
    assert (redo.ok, redo.skipped) == (1, len(cells) - 1)
    assert plan(cells, read_results(out)) == [] and len(read_results(out)) == len(cells) + 1


def test_execute_cell_never_raises_for_a_bad_runner_result(tmp_path):
    cell = _cells(sizes=(10,), partitions=1)[0]
    row = execute_cell(cell, lambda c: {"x": float("nan"), "arr": __import__("numpy").float32(0.5)})
    assert row["status"] == "ok" and row["scores"]["arr"] == 0.5


def test_every_row_says_what_ran_it():
    """Library versions and the package's commit: a rerun under other versions need not give
    the same F1, so a row must say what produced it."""
    import spacy

    from auc_ner_lab.provenance import environment

    cell = _cells(sizes=(10,), partitions=1)[0]
    for row in (execute_cell(cell, lab_helpers.instant_cell), execute_cell(cell, lambda c: 1 / 0)):
        versions = row["versions"]
        assert versions["spacy"] == spacy.__version__ and versions["numpy"] == __import__("numpy").__version__
        assert {"spacy_auc_ner", "thinc", "torch", "git_commit"} <= set(versions)
    commit = environment()["git_commit"]
    if (Path(__file__).resolve().parents[3] / ".git").exists():
        assert commit and len(commit.split("+")[0]) == 40
    else:
        assert commit is None


def test_the_commit_is_marked_changed_by_code_but_not_by_results(tmp_path):
    import subprocess

    from auc_ner_lab.provenance import git_commit

    assert git_commit(tmp_path) is None
    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(git + ["init", "-q"], check=True)
    results = tmp_path / "projects" / "lab" / "results"  # where the lab's rows are in a checkout
    results.mkdir(parents=True)
    (results / "study" / "0123").mkdir(parents=True)
    (results / "study" / "0123" / "a.json").write_text("{}\n")
    (tmp_path / "code.py").write_text("x = 1\n")
    subprocess.run(git + ["add", "."], check=True)
    subprocess.run(git + ["commit", "-qm", "first"], check=True)
    clean = git_commit(tmp_path)
    assert len(clean) == 40
    (results / "study" / "0123" / "b.json").write_text("{}\n")  # a campaign adding rows
    (tmp_path / "notes.txt").write_text("untracked\n")
    assert git_commit(tmp_path) == clean
    (tmp_path / "code.py").write_text("x = 2\n")
    assert git_commit(tmp_path) == clean + "+changes"


def test_bad_runner_path_fails_before_any_cell(tmp_path):
    with pytest.raises(StudyError, match="cannot be imported"):
        run_study(_cells(), tmp_path / "r", workers=0, runner="lab_helpers:nope", **QUIET)
    assert read_results(tmp_path / "r") == []


def test_a_file_that_is_not_a_row_is_skipped_with_a_warning(tmp_path):
    out = tmp_path / "r"
    cells = _cells(sizes=(10,), partitions=1)
    run_study(cells[:1], out, workers=0, runner=lab_helpers.instant_cell, **QUIET)
    (out / cells[1].key).mkdir()
    (out / cells[1].key / "0123456789abcdef.json").write_text('{"cell_id": "toy/ova_auc/n=10/p0#abc", "sta')
    warnings = []
    assert [r["cell_id"] for r in ResultsStore(out).rows(warn=warnings.append)] == [cells[0].id]
    assert "0123456789abcdef.json: skipping a file that is not a results row" in warnings[0]
    run_study(cells, out, workers=0, runner=lab_helpers.instant_cell, **QUIET)
    assert [r["cell_id"] for r in read_results(out)] == [cells[0].id, cells[1].id]


@pytest.mark.parametrize("content", ["a file", "a folder of other things"])
def test_a_path_that_is_not_a_results_store_is_refused_untouched(tmp_path, content):
    target = tmp_path / "target"
    if content == "a file":
        target.write_text("col\tB-X\n")
    else:
        (target / "notes").mkdir(parents=True)
    with pytest.raises(StoreError, match="not a results store"):
        run_study(_cells(), target, workers=0, runner=lab_helpers.instant_cell, **QUIET)
    assert sorted(p.name for p in tmp_path.rglob("*")) == (["target"] if content == "a file" else ["notes", "target"])


def test_two_stores_combine_by_copying_their_files(tmp_path):
    """Two processes (or clones) ran cells of one study, each into its own store (cells 3 and 4
    in both); copying one's files into the other gives every row once, as one store that ran
    them all would hold them."""
    cells = _cells()
    run_study(cells[:5], tmp_path / "a", workers=0, runner=lab_helpers.instant_cell, **QUIET)
    run_study(cells[3:], tmp_path / "b", workers=0, runner=lab_helpers.instant_cell, **QUIET)
    shutil.copytree(tmp_path / "b", tmp_path / "a", dirs_exist_ok=True)
    rows = read_results(tmp_path / "a")
    assert Counter(r["key"] for r in rows) == Counter(c.key for c in cells + cells[3:5])
    assert plan(cells, rows) == []
    shutil.copytree(tmp_path / "b", tmp_path / "a", dirs_exist_ok=True)  # again: nothing new
    assert len(read_results(tmp_path / "a")) == len(rows)


def test_a_cell_another_study_finished_meanwhile_is_skipped(tmp_path):
    cells = _cells(sizes=(10,), partitions=1)
    out = tmp_path / "r"
    seen = []

    def runner(cell):  # while the first cell runs, another study finishes the second
        seen.append(cell.id)
        if len(seen) == 1:
            run_study(cells[1:], out, workers=0, runner=lab_helpers.instant_cell, **QUIET)
        return lab_helpers.instant_cell(cell)

    outcome = run_study(cells, out, workers=0, runner=runner, **QUIET)
    assert seen == [cells[0].id] and (outcome.ok, outcome.skipped) == (1, 1)
    assert Counter(r["key"] for r in read_results(out)) == Counter(c.key for c in cells)


def test_a_store_that_cannot_be_written_is_a_store_error(tmp_path):
    (tmp_path / "blocker").write_text("")
    with pytest.raises(StoreError, match="blocker"):
        run_study(_cells(), tmp_path / "blocker" / "r", workers=0, runner=lab_helpers.instant_cell, **QUIET)


def test_ray_without_the_extra_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    with pytest.raises(StudyError, match=r"^--ray needs Ray, which is not installed: pip install -r projects/lab/requirements.txt"):
        run_study(_cells(), tmp_path / "r", use_ray=True, runner="lab_helpers:instant_cell", **QUIET)


def test_process_workers_use_one_thread_and_survive_a_dying_worker(tmp_path):
    cells = _cells(methods=("ce", "broken"), sizes=(10,), partitions=2)[:3]  # ce, broken (dies), ce
    out = tmp_path / "r"
    outcome = run_study(cells, out, workers=1, runner="lab_helpers:thread_count_cell", **QUIET)
    assert (outcome.ok, outcome.failed) == (2, 1)
    rows = {r["cell_id"]: r for r in read_results(out)}
    assert list(rows) == [c.id for c in cells]
    dead = rows[cells[1].id]
    assert dead["status"] == "failed" and "worker process died" in dead["error"]
    ok = [rows[cells[0].id], rows[cells[2].id]]
    assert {r["scores"]["omp"] for r in ok} == {"1"} and {r["scores"]["torch_threads"] for r in ok} == {1}
    assert os.getpid() not in {r["pid"] for r in ok} and ok[0]["pid"] != ok[1]["pid"]  # a fresh pool


def _start(tmp_path, sleep: str):
    """The killme study of sleepy cells: (its command, environment, store, the cells' start log)."""
    spec = {"name": "killme", "corpora": ["toy"], "methods": ["ce", "ova_auc", "ova_bce"],
            "sizes": [10, 20, 30], "partitions": 2, "runner": "lab_helpers:sleepy_cell"}
    path, out, log = tmp_path / "spec.yaml", tmp_path / "r", tmp_path / "calls.log"
    path.write_text(yaml.safe_dump(spec))
    return study_command(path, out, "--workers", "2"), study_env(STUDY_FAKE_LOG=str(log), STUDY_FAKE_SLEEP=sleep), out, log


def test_resume_after_kill_loses_and_repeats_nothing(tmp_path):
    command, env, out, log = _start(tmp_path, "0.4")
    first = {r["cell_id"] for r in run_killed_midway(command, env, out, 4)}
    assert 4 <= len(first) < 18, "the study was not killed mid-way"

    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"{len(first)} already done of 18 cells" in done.stderr
    rows = read_results(out)
    counts = Counter(r["cell_id"] for r in rows)
    assert len(counts) == 18 and set(counts.values()) == {1}  # nothing lost, nothing twice
    assert {r["status"] for r in rows} == {"ok"}
    calls = Counter(line.split()[0] for line in log.read_text().splitlines())
    assert all(calls[cid] == 1 for cid in first)  # finished cells were not run again


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the parent-death signal is Linux's prctl")
def test_workers_end_when_the_study_is_killed(tmp_path):
    """kill -9 of the study process alone (not its group): its workers must not go on."""
    command, env, _, log = _start(tmp_path, "30")
    proc = subprocess.Popen(command, env=env, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 60
        while time.time() < deadline and (not log.exists() or len(log.read_text().splitlines()) < 2):
            assert proc.poll() is None
            time.sleep(0.1)
        workers = {int(line.split()[1]) for line in log.read_text().splitlines()}
        assert len(workers) == 2
        proc.kill()
        proc.wait()
        deadline = time.time() + 20
        while time.time() < deadline and any(_alive(pid) for pid in workers):
            time.sleep(0.1)
        assert not any(_alive(pid) for pid in workers), "a worker outlived its study"
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _alive(pid: int) -> bool:
    """Whether a process runs (a zombie, dead but not yet reaped, counts as ended)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_a_cell_that_exits_is_a_failure_not_the_end(tmp_path):
    cells = _cells(methods=("ce",), sizes=(10,), partitions=2)
    out = tmp_path / "r"
    outcome = run_study(cells, out, workers=0, runner=lab_helpers.exiting_cell, **QUIET)
    assert (outcome.ok, outcome.failed) == (1, 1)
    failed = [r for r in read_results(out) if r["status"] == "failed"]
    assert failed[0]["error"].startswith("SystemExit: 1 (spaCy stopped")


def test_device_name_marks_gpu_rows(monkeypatch):
    from auc_ner_lab.execution import device_name

    assert device_name(-1) == "cpu"
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda i: f"Fake GPU {i}")
    assert device_name(0) == "cuda:0 Fake GPU 0"
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda i: (_ for _ in ()).throw(RuntimeError("no GPU")))
    assert device_name(1) == "cuda:1"


def test_every_cell_prints_its_wall_seconds_and_status_gives_each_methods_mean(tmp_path):
    """Issue 31 point 6: `study run` says what each cell cost as it finishes; `study status`
    averages the rows' seconds per method, reported cells and tuning trials apart."""
    from auc_ner_lab.store import latest_rows
    from auc_ner_lab.study_cli import mean_seconds_lines

    cells = _cells(methods=("ce", "ova_auc"), sizes=(10,), partitions=2)
    said = []
    run_study(cells, tmp_path / "r", workers=0, runner="lab_helpers:instant_cell", progress=False, log=said.append)
    assert len(said) == 4 and all(line.startswith("ok ") and line.endswith(" s wall") for line in said)
    found = {r["key"]: r for r in read_results(tmp_path / "r")}
    # made-up times: ce 10 s and 30 s, ova_auc's second cell not finished
    times = iter([10.0, 30.0])
    latest = {}
    for cell in cells:
        row = dict(found[cell.key])
        if cell.method == "ce":
            row["seconds"] = next(times)
        elif cell.partition == 1:
            continue
        else:
            row["seconds"] = 7.0
        latest[cell.key] = row
    assert latest_rows(list(latest.values())).keys() == latest.keys()
    assert mean_seconds_lines(cells, latest) == [
        "mean seconds per finished cell (reported; tuning trials):", "  ce: 20 s (n=2); -", "  ova_auc: 7 s (n=1); -"]



def test_a_cell_with_its_own_runner_and_a_failed_cell_print_their_wall_seconds_too(tmp_path):
    """The Hugging Face peer is a method with its own cell function (`runner:` in the spec); its
    cells print their cost as every cell does, and so does a cell that failed (it cost time too)."""
    methods = [{"name": "peer", "runner": "lab_helpers:instant_cell"}, {"name": "broken", "runner": "lab_helpers:tuning_cell"}]
    cells = parse_spec({"name": "t", "corpora": ["toy"], "methods": methods, "sizes": [10], "partitions": 1}).cells()
    said = []
    run_study(cells, tmp_path / "r", workers=0, progress=False, log=said.append)
    ok, failed = sorted(said, key=lambda line: line.startswith("FAILED"))
    assert ok.startswith("ok      toy/peer/") and ok.endswith(" s wall")
    assert failed.startswith("FAILED  toy/broken/") and " s wall  ValueError: this cell is meant to fail" in failed


def _dirty_checkout(tmp_path):
    """A git checkout with one commit and an uncommitted change to a tracked file."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(git + ["init", "-q"], check=True)
    (repo / "code.py").write_text("x = 1\n")
    subprocess.run(git + ["add", "."], check=True)
    subprocess.run(git + ["commit", "-qm", "first"], check=True)
    (repo / "code.py").write_text("x = 2\n")
    return repo, git


def test_a_dirty_tree_has_its_diff_stored_before_its_cells_and_their_rows_name_it(tmp_path, monkeypatch):
    """Issue 45: rows from a working tree with uncommitted changes ("+changes") did not trace to
    code. Now the study keeps the tree's diff in the store (diffs/<sha256>.patch, written once) and
    each row records its digest (versions.git_diff_digest); a clean tree records none."""
    import hashlib

    from auc_ner_lab import provenance

    repo, git = _dirty_checkout(tmp_path)
    monkeypatch.setattr(provenance, "CHECKOUT", repo)
    diff = subprocess.run(git + ["diff", "HEAD", "--binary"], capture_output=True, check=True).stdout
    digest = hashlib.sha256(diff).hexdigest()
    cells = _cells(sizes=(10,), partitions=1)
    out = tmp_path / "r"
    run_study(cells, out, workers=0, runner="lab_helpers:instant_cell", **QUIET)
    rows = read_results(out)
    assert {r["versions"]["git_diff_digest"] for r in rows} == {digest}
    assert all(r["versions"]["git_commit"].endswith("+changes") for r in rows)
    patch = out / "diffs" / f"{digest}.patch"
    assert patch.read_bytes() == diff and b"+x = 2" in diff
    store = ResultsStore(out)
    assert store.untraced(rows) == [] and store.untraced_warning(rows) == ""
    # written once: a run after the tree changed keeps the first diff and adds its own
    before = patch.stat().st_mtime_ns
    (repo / "code.py").write_text("x = 3\n")
    run_study(cells, out, workers=0, runner="lab_helpers:instant_cell", again=True, **QUIET)
    assert patch.stat().st_mtime_ns == before and len(list((out / "diffs").glob("*.patch"))) == 2
    assert len({r["versions"]["git_diff_digest"] for r in read_results(out)}) == 2
    # a clean tree: no digest, nothing stored
    subprocess.run(git + ["commit", "-qam", "second"], check=True)
    clean = tmp_path / "clean"
    run_study(cells, clean, workers=0, runner="lab_helpers:instant_cell", **QUIET)
    assert all("git_diff_digest" not in r["versions"] for r in read_results(clean)) and not (clean / "diffs").exists()


def test_a_dirty_tree_whose_diff_cannot_be_stored_trains_nothing(tmp_path, monkeypatch):
    from auc_ner_lab import provenance

    repo, git = _dirty_checkout(tmp_path)
    monkeypatch.setattr(provenance, "CHECKOUT", repo)
    diff = subprocess.run(git + ["diff", "HEAD", "--binary"], capture_output=True, check=True).stdout
    import hashlib

    out = tmp_path / "r"
    ResultsStore(out).mark()
    (out / "diffs").mkdir()
    (out / "diffs" / f"{hashlib.sha256(diff).hexdigest()}.patch").write_bytes(b"something else\n")  # never overwritten
    with pytest.raises(StoreError, match="refusing to train from a working tree with uncommitted changes.*another digest"):
        run_study(_cells(sizes=(10,), partitions=1), out, workers=0, runner="lab_helpers:instant_cell", **QUIET)
    assert read_results(out) == []


def test_rows_from_uncommitted_trees_without_a_stored_diff_are_warned_about(tmp_path):
    """The rows written before rows stored their diff keep their content; status and report say
    how many do not trace to code."""
    from auc_ner_lab.store import diff_digest

    store = ResultsStore(tmp_path / "r")
    digest = store.save_diff(b"diff --git a/x b/x\n")
    assert digest == diff_digest(b"diff --git a/x b/x\n") and store.save_diff(b"diff --git a/x b/x\n") == digest
    rows = [{"versions": {"git_commit": "a" * 40}}, {"versions": {"git_commit": "a" * 40 + "+changes"}},
            {"versions": {"git_commit": "a" * 40 + "+changes", "git_diff_digest": digest}},
            {"versions": {"git_commit": "a" * 40 + "+changes", "git_diff_digest": "0" * 64}}, {"versions": None}]
    assert store.untraced(rows) == [rows[1], rows[3]]
    assert store.untraced_warning(rows).startswith("Warning: 2 of the 5 finished rows were trained from a working tree with uncommitted changes")
    store.check()  # the diffs folder belongs to the store
