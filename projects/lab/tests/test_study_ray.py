"""`study run --ray` on a real local Ray cluster (ray.init(num_cpus=2)): the same rows as the
process pool, the thread settings reach the workers, and a worker killed mid-cell is recorded
as failed and rerun on resume. Skipped when Ray is not installed (the `ray` extra)."""
import os
from collections import Counter
from pathlib import Path

import pytest

from auc_ner_lab.runner import run_study
from auc_ner_lab.spec import parse_spec
from lab_helpers import QUIET
from lab_helpers import rows as read_results

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install -r projects/lab/requirements.txt); the --ray path is untested")

TESTS = Path(__file__).parent
VOLATILE = {"seconds", "finished", "host", "pid"}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A local Ray cluster of 2 CPUs whose workers import the fake cells from tests/."""
    markers = tmp_path_factory.mktemp("ray-markers")
    env = {"PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]), "STUDY_FAKE_MARKERS": str(markers)}
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, runtime_env={"env_vars": env})
    yield markers
    ray.shutdown()


def _cells(sizes=(10, 20)):
    """2 methods x len(sizes) cells, 1 partition."""
    spec = {"name": "ray", "corpora": ["toy"], "methods": ["ce", "ova_auc"], "sizes": list(sizes), "partitions": 1}
    return parse_spec(spec).cells()


def _by_cell(path):
    return {r["cell_id"]: {k: v for k, v in r.items() if k not in VOLATILE} for r in read_results(path)}


def test_ray_gives_the_rows_of_the_process_pool(cluster, tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]))
    cells = _cells()
    pool = run_study(cells, tmp_path / "pool", workers=1, runner="lab_helpers:thread_count_cell", **QUIET)
    on_ray = run_study(cells, tmp_path / "ray", workers=2, use_ray=True,
                       runner="lab_helpers:thread_count_cell", **QUIET)
    assert (pool.ok, on_ray.ok, on_ray.failed) == (4, 4, 0)
    rows = _by_cell(tmp_path / "ray")
    assert rows == _by_cell(tmp_path / "pool") and len(rows) == 4
    assert {(r["scores"]["omp"], r["scores"]["torch_threads"]) for r in rows.values()} == {("1", 1)}
    ray_pids = {r["pid"] for r in read_results(tmp_path / "ray")}
    assert os.getpid() not in ray_pids  # cells ran in Ray's workers


def test_a_ray_worker_killed_mid_cell_is_failed_then_rerun_on_resume(cluster, tmp_path):
    cells = _cells(sizes=(10,))  # ce and ova_auc
    out = tmp_path / "r"
    first = run_study(cells, out, workers=2, use_ray=True, runner="lab_helpers:dies_once_cell", **QUIET)
    assert (first.ok, first.failed) == (1, 1)  # the ova_auc cell killed its worker
    (failed,) = [r for r in read_results(out) if r["status"] == "failed"]
    assert failed["method"] == "ova_auc" and "did not come back" in failed["error"], failed["error"]
    again = run_study(cells, out, workers=2, use_ray=True, runner="lab_helpers:dies_once_cell", **QUIET)
    assert (again.ok, again.failed, again.skipped) == (1, 0, 1)
    rows = read_results(out)
    assert [r["status"] for r in rows if r["method"] == "ova_auc"] == ["failed", "ok"]
    assert Counter(r["cell_id"] for r in rows if r["status"] == "ok") == Counter(c.id for c in cells)
