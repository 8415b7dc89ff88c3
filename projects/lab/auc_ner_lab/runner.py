"""Run a study's cells, in parallel processes or on a Ray cluster, resumably.

Only the parent process writes the results: one row per finished cell into the study's
results store, so a killed study loses at most the cells in flight and a rerun skips every
cell that already has an ``ok`` row (or that another study writing into the store finished
meanwhile). A cell that raises is recorded as ``failed`` with its error and the tail of its
traceback, and the study goes on. In a tuned study the reported cells of a group wait until
its tuning trials have rows; the runner then merges the chosen grid point (`tuning.py`).

A killed study leaves no training folder behind: its workers keep their temporary files in
the study's scratch folder (`scratch.py`); ``study run`` stops on SIGTERM as on Ctrl-C, its
workers stopped (`workers.py`) and its scratch folder removed.
"""
import functools
import socket
import sys
import time
from concurrent.futures import FIRST_COMPLETED, Future, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Union

from spacy_auc_ner.api import PathLike

from . import provenance
from .cells import Cell
from .execution import CellFunction, StudyError, execute_cell, resolve_runner, row_identity
from .scratch import scratch_folder
from .store import ResultsStore, StoreError, latest_rows, superseded
from .tuning import TuningError, resolve, trial_keys
from .workers import make_executor, stop_on_sigterm, stop_workers, thread_env


def store_tree_diff(store: ResultsStore, checkout: Optional[Path] = None) -> Optional[str]:
    """Keep the diff of a working tree with uncommitted changes in `store` before cells train
    from it, so that their rows' "+changes" commit traces to code; its digest, None for a clean
    tree. A diff that cannot be read (StudyError) or stored (StoreError) refuses the study."""
    checkout = provenance.CHECKOUT if checkout is None else checkout
    commit = provenance.git_commit(checkout)
    if not commit or not commit.endswith("+changes"):
        return None
    diff = provenance.tree_diff(checkout)
    if not diff:
        raise StudyError(f"{checkout}: the working tree has uncommitted changes and `git diff HEAD` gives none to store; "
                         "refusing to train from it (commit the changes)")
    try:
        return store.save_diff(diff)
    except StoreError as err:
        raise StoreError(f"refusing to train from a working tree with uncommitted changes whose diff cannot be stored: {err}") from None


@dataclass
class StudyOutcome:
    total: int
    skipped: int
    ok: int
    failed: int
    seconds: float


def plan(cells: Sequence[Cell], rows: Sequence[Dict[str, Any]], *, retry_failed: bool = True, again: bool = False) -> List[Cell]:
    """The cells still to run: those without an ok row that stands (`store.superseded`) and,
    unless retrying, without a failed one; with `again`, every cell."""
    keys = [c.key for c in cells]
    if len(set(keys)) != len(keys):
        dupes = sorted({c.id for c in cells if keys.count(c.key) > 1})
        raise StudyError(f"the study has cells that train the same (methods defined alike?): {', '.join(dupes[:5])}")
    if again:
        return list(cells)
    latest = latest_rows(rows)
    todo = []
    for cell in cells:
        row = latest.get(cell.key)
        if row is None or (row["status"] == "ok" and superseded(row)) or (row["status"] != "ok" and retry_failed):
            todo.append(cell)
    return todo


def untraced_cells(cells: Sequence[Cell], rows: Sequence[Dict[str, Any]], store: ResultsStore) -> List[Cell]:
    """Of `cells`, those whose latest row is ok and `ResultsStore.untraced` (``study run --untraced``)."""
    latest = latest_rows(rows)
    marked = {r["key"] for r in store.untraced([r for r in latest.values() if r["status"] == "ok"])}
    return [cell for cell in cells if cell.key in marked]


def run_study(
    cells: Sequence[Cell], results: PathLike, *, workers: int = 1, runner: Union[None, str, CellFunction] = None,
    retry_failed: bool = True, again: bool = False, threads_per_worker: int = 1, ray_address: Optional[str] = None,
    use_ray: bool = False, progress: bool = True, log: Optional[Callable[[str], None]] = None,
) -> StudyOutcome:
    """Run every cell not yet done, adding a row to the results store `results` as each
    finishes (`again`: every cell, done or not).

    `workers` >= 1: that many spawned processes (or cells in flight on Ray); 0: in this
    process. `runner`: the cell function, a 'module:function' path (must be importable in
    the workers) or a callable (in-process or picklable); None: `run_cell`.
    """
    if workers < 0:
        raise StudyError(f"--workers must be >= 0, not {workers}")
    if isinstance(runner, str) or runner is None:
        resolve_runner(runner)  # fail now, not once per cell
    start = time.perf_counter()
    store = ResultsStore(results)
    # a row that cannot be read (not what its folder says, a score not in [0, 1]) is said and
    # not counted: its cell runs again
    rows = store.rows(warn=log or functools.partial(print, file=sys.stderr, flush=True), cells=cells)
    todo = plan(cells, rows, retry_failed=retry_failed, again=again)
    if todo:
        store_tree_diff(store)  # a dirty tree's diff is kept before any cell trains from it, or nothing trains
    skipped = len(cells) - len(todo)
    if log is not None and skipped:
        log(f"{skipped} of {len(cells)} cells already in {results}; running {len(todo)}")
    ok, failed, done = _run_cells(
        todo, store, rows=rows, workers=workers, runner=runner, threads=threads_per_worker,
        ray_address=ray_address, use_ray=use_ray, progress=progress, log=log, again=again,
    )
    return StudyOutcome(len(cells), skipped + done, ok, failed, time.perf_counter() - start)


def _run_cells(todo, store, *, rows=(), workers, runner, threads, ray_address, use_ray, progress, log, again=False):
    """Run `todo`, recording each row in `store`; (ok, failed, found done by another study)."""
    from tqdm.auto import tqdm

    if not todo:
        return 0, 0, 0
    capacity = max(1, workers)
    pending = list(reversed(todo))  # the end of the list is the next cell: keeps the study's order
    running: Dict[Future, Cell] = {}
    latest = latest_rows(rows)  # what tuned cells choose from, kept current as rows come in
    unfinished = {c.key for c in todo}
    ok = failed = elsewhere = 0
    bar = tqdm(total=len(todo), unit="cell", disable=not progress, dynamic_ncols=True, file=sys.stderr)
    say = (lambda msg: bar.write(msg, file=sys.stderr)) if log is None else log
    gpu = any(c.gpu_id >= 0 for c in todo)

    def status():
        bar.set_postfix_str(f"ok={ok} running={len(running)} failed={failed}", refresh=True)

    def record(row):
        nonlocal ok, failed
        digest = (row.get("versions") or {}).get("git_diff_digest")
        if digest and not store.diff_path(digest).is_file() and store_tree_diff(store) != digest:
            say(f"WARNING {row['cell_id']}: trained from a tree whose diff ({digest[:12]}) is not stored: it changed while "
                "the cell started; its row's commit does not say what code ran")
        store.add(row)
        unfinished.discard(row["key"])
        latest.update(latest_rows(filter(None, [latest.get(row["key"]), row])))
        if row["status"] == "ok":
            ok += 1
            scores = row.get("scores") or {}
            dev_only = row.get("tuning") or row.get("scored_on") == "dev"
            name, f1 = ("dev ents_f", scores.get("dev_score")) if dev_only else ("ents_f", scores.get("ents_f"))
            f1_text = f"{name}={f1:.3f} " if isinstance(f1, (int, float)) else ""
            say(f"ok      {row['cell_id']}  {f1_text}{row['seconds']:.0f} s wall")  # every cell's cost, as issue 31 asks
        else:
            failed += 1
            # a failed cell cost time too; a lost one (its worker died) has no clock
            seconds = row.get("seconds")
            wall = f"{seconds:.0f} s wall  " if isinstance(seconds, (int, float)) else ""
            say(f"FAILED  {row['cell_id']}  {wall}{row['error']}")
        bar.update(1)
        status()

    with stop_on_sigterm(), thread_env(threads), scratch_folder(inline=workers == 0, use_ray=use_ray):
        executor = make_executor(workers, threads, use_ray, ray_address, gpu)
        try:
            while pending or running:
                while len(running) < capacity:
                    cell = _next_ready(pending, unfinished)
                    if cell is None and pending and not running:  # cannot happen: trials never wait
                        cell = pending.pop()
                    if cell is None:
                        break
                    found = [] if again else store.read(keys=[cell.key]).rows  # its unreadable rows were said at the start
                    if any(row["status"] == "ok" and not superseded(row) for row in found):  # another study wrote it meanwhile
                        unfinished.discard(cell.key)
                        latest.update(latest_rows(found))
                        elsewhere += 1
                        bar.update(1)
                        continue
                    store_tree_diff(store)  # the tree now, which the cell starts from (it may have changed since)
                    if cell.selection is not None:
                        try:
                            cell = resolve(cell, latest)
                        except TuningError as err:
                            record(_lost_row(cell, f"tuning: {err}"))
                            continue
                    future = executor.submit(execute_cell, cell, runner)
                    running[future] = cell
                    status()
                if not running:
                    continue  # every pending cell was just recorded as failed
                done, _ = wait(list(running), return_when=FIRST_COMPLETED)
                broken = False
                for future in done:
                    cell = running.pop(future)
                    try:
                        row = future.result()
                    except BrokenProcessPool as err:
                        broken = True
                        row = _lost_row(cell, f"the worker process died ({err or 'BrokenProcessPool'})")
                    except (Exception, SystemExit) as err:  # e.g. a Ray worker lost, an unpicklable cell
                        first_line = (str(err).strip().splitlines() or [""])[0]
                        row = _lost_row(cell, f"the cell did not come back ({type(err).__name__}: {first_line})")
                    record(row)
                if broken:  # every cell in flight went down with the pool: record them, start afresh
                    for future, cell in list(running.items()):
                        record(_lost_row(cell, "the worker pool broke while this cell was running"))
                    running.clear()
                    executor.shutdown(wait=False, cancel_futures=True)
                    executor = make_executor(workers, threads, use_ray, ray_address, gpu)
        except BaseException:
            stop_workers(executor)
            raise
        else:
            executor.shutdown(wait=True)
        finally:
            bar.close()
    return ok, failed, elsewhere


def _next_ready(pending: List[Cell], unfinished: set) -> Optional[Cell]:
    """Take the next cell whose tuning trials (if any) all have a row; None when every pending
    cell waits for a trial."""
    for i in range(len(pending) - 1, -1, -1):
        if not any(key in unfinished for key in trial_keys(pending[i])):
            return pending.pop(i)
    return None


def _lost_row(cell: Cell, error: str) -> Dict[str, Any]:
    finished = datetime.now(timezone.utc).isoformat(timespec="microseconds")
    return {**row_identity(cell), "status": "failed", "error": error, "traceback": "", "seconds": None,
            "finished": finished, "host": socket.gethostname(), "pid": None}
