"""The study runner: durable JSONL rows, resume after a kill, failing cells, parallel workers."""
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
import yaml

from auc_ner_lab.runner import (
    ResultsWriter, StudyError, execute_cell, plan, read_results, run_study,
)
from auc_ner_lab.spec import parse_spec

TESTS = Path(__file__).parent
sys.path.insert(0, str(TESTS))  # the fake cells, for this process and (via spawn) its workers
import study_fake_cells  # noqa: E402

QUIET = dict(progress=False, log=lambda msg: None)


def _cells(methods=("ce", "ova_auc"), sizes=(10, 20), partitions=2):
    methods = [m if m != "broken" else {"name": "broken", "config": "x.cfg"} for m in methods]
    spec = {"name": "t", "corpora": ["toy"], "methods": methods, "sizes": list(sizes), "partitions": partitions}
    return parse_spec(spec).cells()


def test_in_process_study_writes_one_row_per_cell_and_resumes(tmp_path):
    cells = _cells()
    out = tmp_path / "r.jsonl"
    outcome = run_study(cells, out, workers=0, runner="study_fake_cells:instant_cell", **QUIET)
    assert (outcome.total, outcome.ok, outcome.failed, outcome.skipped) == (8, 8, 0, 0)
    rows = read_results(out)
    assert sorted(r["cell_id"] for r in rows) == sorted(c.id for c in cells)
    row = rows[0]
    assert row["status"] == "ok" and row["scores"]["ents_f"] == pytest.approx(0.41)
    assert {"seconds", "finished", "host", "pid", "config", "overrides", "partition", "size"} <= set(row)
    again = run_study(cells, out, workers=0, runner="study_fake_cells:instant_cell", **QUIET)
    assert (again.ok, again.skipped) == (0, 8)
    assert len(read_results(out)) == 8


def test_failing_cell_is_recorded_and_the_study_goes_on(tmp_path):
    cells = _cells(methods=("ce", "broken", "ova_auc"), sizes=(10,), partitions=2)
    out = tmp_path / "r.jsonl"
    outcome = run_study(cells, out, workers=0, runner=study_fake_cells.instant_cell, **QUIET)
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
    rerun = run_study(cells, out, workers=0, runner=study_fake_cells.instant_cell, **QUIET)
    assert (rerun.ok, rerun.failed, rerun.skipped) == (0, 2, 4)


def test_execute_cell_never_raises_for_a_bad_runner_result(tmp_path):
    cell = _cells(sizes=(10,), partitions=1)[0]
    row = execute_cell(cell, lambda c: {"x": float("nan"), "arr": __import__("numpy").float32(0.5)})
    assert row["status"] == "ok" and row["scores"]["arr"] == 0.5


def test_every_row_says_what_ran_it():
    """Library versions and the package's commit: a rerun under other versions need not give
    the same F1, so a row must say what produced it."""
    import spacy

    from auc_ner_lab.runner import environment

    cell = _cells(sizes=(10,), partitions=1)[0]
    for row in (execute_cell(cell, study_fake_cells.instant_cell), execute_cell(cell, lambda c: 1 / 0)):
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

    from auc_ner_lab.runner import git_commit

    assert git_commit(tmp_path) is None
    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(git + ["init", "-q"], check=True)
    results = tmp_path / "projects" / "lab" / "results"  # where the lab's rows are in a checkout
    results.mkdir(parents=True)
    (results / "study.jsonl").write_text("{}\n")
    (tmp_path / "code.py").write_text("x = 1\n")
    subprocess.run(git + ["add", "."], check=True)
    subprocess.run(git + ["commit", "-qm", "first"], check=True)
    clean = git_commit(tmp_path)
    assert len(clean) == 40
    (results / "study.jsonl").write_text("{}\n{}\n")  # a campaign appending
    (tmp_path / "notes.txt").write_text("untracked\n")
    assert git_commit(tmp_path) == clean
    (tmp_path / "code.py").write_text("x = 2\n")
    assert git_commit(tmp_path) == clean + "+changes"


def test_bad_runner_path_fails_before_any_cell(tmp_path):
    with pytest.raises(StudyError, match="cannot be imported"):
        run_study(_cells(), tmp_path / "r.jsonl", workers=0, runner="study_fake_cells:nope", **QUIET)
    assert not (tmp_path / "r.jsonl").exists() or read_results(tmp_path / "r.jsonl") == []


def test_truncated_last_line_is_skipped_and_the_next_row_starts_a_new_line(tmp_path):
    out = tmp_path / "r.jsonl"
    cells = _cells(sizes=(10,), partitions=1)
    good = execute_cell(cells[0], study_fake_cells.instant_cell)
    out.write_text(json.dumps(good) + "\n" + '{"cell_id": "toy/ova_auc/n=10/p0#abc", "sta')
    warnings = []
    assert [r["cell_id"] for r in read_results(out, warn=warnings.append)] == [cells[0].id]
    assert "r.jsonl:2: skipping a line that is not JSON" in warnings[0]
    run_study(cells, out, workers=0, runner=study_fake_cells.instant_cell, **QUIET)
    assert [r["cell_id"] for r in read_results(out)] == [cells[0].id, cells[1].id]


def test_a_second_writer_is_refused(tmp_path):
    out = tmp_path / "r.jsonl"
    with ResultsWriter(out):
        with pytest.raises(StudyError, match="another study is writing"):
            run_study(_cells(), out, workers=0, runner=study_fake_cells.instant_cell, **QUIET)


@pytest.mark.parametrize("second_path", ["symlink", "hardlink", "symlinked folder"])
def test_a_second_path_to_the_same_results_file_meets_the_same_lock(tmp_path, second_path):
    """Issue 13.5: the lock was a sibling file named after the path given, so a symlink to the
    results file got its own lock and both studies trained every cell."""
    real = tmp_path / "results" / "r.jsonl"
    real.parent.mkdir()
    real.touch()
    if second_path == "symlink":
        other = tmp_path / "link.jsonl"
        other.symlink_to(real)
    elif second_path == "hardlink":
        other = tmp_path / "hard.jsonl"
        os.link(real, other)
    else:
        (tmp_path / "elsewhere").symlink_to(real.parent)
        other = tmp_path / "elsewhere" / "r.jsonl"
    with ResultsWriter(real):
        with pytest.raises(StudyError, match="another study is writing "):
            run_study(_cells(), other, workers=0, runner=study_fake_cells.instant_cell, **QUIET)
    assert read_results(real) == []
    outcome = run_study(_cells(), other, workers=0, runner=study_fake_cells.instant_cell, **QUIET)  # lock released
    assert outcome.ok == 8 and len(read_results(real)) == 8


def test_results_file_that_cannot_be_written_is_a_study_error(tmp_path):
    (tmp_path / "blocker").write_text("")
    with pytest.raises(StudyError, match="blocker/r.jsonl: cannot write the results file"):
        run_study(_cells(), tmp_path / "blocker" / "r.jsonl", workers=0, runner=study_fake_cells.instant_cell, **QUIET)


def test_ray_without_the_extra_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    with pytest.raises(StudyError, match=r"pip install 'spacy-auc-ner\[ray\]'"):
        run_study(_cells(), tmp_path / "r.jsonl", use_ray=True, runner="study_fake_cells:instant_cell", **QUIET)


def test_process_workers_use_one_thread_and_survive_a_dying_worker(tmp_path):
    cells = _cells(methods=("ce", "broken"), sizes=(10,), partitions=2)[:3]  # ce, broken (dies), ce
    out = tmp_path / "r.jsonl"
    outcome = run_study(cells, out, workers=1, runner="study_fake_cells:thread_count_cell", **QUIET)
    assert (outcome.ok, outcome.failed) == (2, 1)
    rows = {r["cell_id"]: r for r in read_results(out)}
    assert list(rows) == [c.id for c in cells]
    dead = rows[cells[1].id]
    assert dead["status"] == "failed" and "worker process died" in dead["error"]
    ok = [rows[cells[0].id], rows[cells[2].id]]
    assert {r["scores"]["omp"] for r in ok} == {"1"} and {r["scores"]["torch_threads"] for r in ok} == {1}
    assert os.getpid() not in {r["pid"] for r in ok} and ok[0]["pid"] != ok[1]["pid"]  # a fresh pool


def _write_spec(tmp_path):
    spec = {"name": "killme", "corpora": ["toy"], "methods": ["ce", "ova_auc", "ova_bce"],
            "sizes": [10, 20, 30], "partitions": 2, "runner": "study_fake_cells:sleepy_cell"}
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def _study_cmd(spec, out):
    return [sys.executable, "-m", "auc_ner_lab", "study", "run", str(spec), "--results", str(out),
            "--workers", "2", "--no-progress"]


def _start_study(tmp_path, sleep: str, stderr=subprocess.PIPE):
    """The killme study of sleepy cells in its own process group: (process, spec, results,
    the cells' start log, its environment)."""
    spec, out, log = _write_spec(tmp_path), tmp_path / "r.jsonl", tmp_path / "calls.log"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]),
               STUDY_FAKE_LOG=str(log), STUDY_FAKE_SLEEP=sleep, OMP_NUM_THREADS="1")
    proc = subprocess.Popen(_study_cmd(spec, out), env=env, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=stderr)
    return proc, spec, out, log, env


def test_resume_after_kill_loses_and_repeats_nothing(tmp_path):
    proc, spec, out, log, env = _start_study(tmp_path, "0.4")
    deadline = time.time() + 60
    try:
        while time.time() < deadline and len(read_results(out)) < 4:
            assert proc.poll() is None, proc.stderr.read().decode()
            time.sleep(0.1)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the study and its workers, mid-way
        proc.wait()
    first = {r["cell_id"] for r in read_results(out)}
    assert 4 <= len(first) < 18, "the study was not killed mid-way"

    done = subprocess.run(_study_cmd(spec, out), env=env, capture_output=True, text=True, timeout=120)
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
    proc, _, _, log, _ = _start_study(tmp_path, "30", stderr=subprocess.DEVNULL)
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
    out = tmp_path / "r.jsonl"
    outcome = run_study(cells, out, workers=0, runner=study_fake_cells.exiting_cell, **QUIET)
    assert (outcome.ok, outcome.failed) == (1, 1)
    failed = [r for r in read_results(out) if r["status"] == "failed"]
    assert failed[0]["error"].startswith("SystemExit: 1 (spaCy stopped")
