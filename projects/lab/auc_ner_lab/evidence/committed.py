"""Where the evidence reads from: the lab folder (`ROOT`: its studies/, results/ and docs/) and
its committed rows, read as every document reads them (a cell's latest ok row, tuning trials
apart; a row copied into several stores once). Every module of the evidence reads `ROOT`
through this module at each call, so that a caller may point it at another lab folder
(scripts/evidence.py: the folder it sits in; the tests: a toy one)."""
import os
from pathlib import Path
from typing import Callable, TypeVar

from ..aggregate import aggregate
from ..spec import load_spec
from ..store import ResultsStore, latest_rows, row_name

ROOT = Path(__file__).resolve().parents[2]  # projects/lab
T = TypeVar("T")


def evidence_dir() -> Path:
    """docs/evidence/ of the lab folder, where the generated files are."""
    return ROOT / "docs" / "evidence"


def in_lab(compute: Callable[[], T]) -> T:
    """`compute()` run in the lab folder, whatever the caller's: a spec's relative paths (its
    configs folder, a method's config file) are that folder's, as for `study run`, and a path
    read from elsewhere would give its cells other keys."""
    here = os.getcwd()
    os.chdir(ROOT)
    try:
        return compute()
    finally:
        os.chdir(here)


def study_spec(name: str):
    """studies/<name>.yaml, loaded."""
    return load_spec(ROOT / "studies" / f"{name}.yaml")


def has_results(name: str) -> bool:
    """Whether study `name` has a committed results store (results/<name>/)."""
    return (ROOT / "results" / name).exists()


def results_store(name: str):
    """The results store of study `name` (results/<name>/)."""
    return ResultsStore(ROOT / "results" / name)


def latest_reported(rows) -> list:
    """Of `rows`, each reported cell's latest row when it is ok (tuning trials left out)."""
    return [r for r in latest_rows(rows).values() if r["status"] == "ok" and not r.get("tuning")]


def reported_rows(name: str):
    """The latest ok rows of a store's reported cells, every row of it (its spec's or not)."""
    return latest_reported(results_store(name).rows())


def every_row() -> list:
    """Every row of every study's store (results/*/)."""
    stores = [results_store(d.name) for d in sorted((ROOT / "results").iterdir()) if d.is_dir()]
    return [r for store in stores if store.marker.exists() for r in store.rows()]


def distinct(rows) -> list:
    """`rows`, a row copied into several stores (a shared cell: run_campaign_trf.sh copies them)
    once: one training, known by its file name, which is the same in every store."""
    return list({row_name(r): r for r in rows}.values())


def distinct_rows(names) -> list:
    """Every row of the stores `names`, each training once (`distinct`)."""
    return distinct(r for name in names for r in results_store(name).rows())


def named_rows(name: str, spec: str):
    """The latest ok rows of store `name` for the reported cells of studies/<spec>.yaml, each
    named as the spec names its cell now (a row keeps the method name it was written under)."""
    return latest_reported(results_store(name).rows_for(study_spec(spec).cells()))


def results_by_cell(name: str, spec=None, rows=None) -> dict:
    """{(method, corpus, size): MethodResult} of a study's reported cells (its spec's only;
    `spec`: studies/<name>.yaml when already loaded; `rows`: its store's rows for the spec's
    cells when already read)."""
    spec = spec or study_spec(name)
    rows = results_store(name).rows_for(spec.cells()) if rows is None else rows
    return {(r.method, r.corpus, r.size): r for r in aggregate(rows, metric=spec.metric, baseline=None)}


def cells_if_any(name: str, spec=None) -> dict:
    """`results_by_cell`, {} where the study has no committed store."""
    return results_by_cell(name, spec) if has_results(name) else {}
