"""Run a study's cells, in parallel processes or on a Ray cluster, resumably.

Only the parent process writes the results: one row per finished cell into the study's
results store (`store.py`), written whole and durably, so a killed study loses at most the
cells in flight and a rerun skips every cell that already has an ``ok`` row. Several studies
may write into one store: a cell another one finished meanwhile is skipped when its turn
comes. A cell that raises is recorded as ``failed`` with its error and the tail of its
traceback, and the study goes on; failed cells are retried on the next run unless told
otherwise. In a tuned study the reported cells of a group wait until its tuning trials have
rows; the runner then merges the chosen grid point (`tuning.py`).

A killed study leaves no training folder behind: each run's workers keep their temporary
files in one scratch folder of the study's (their ``TMPDIR``), removed when the study ends,
however it ends; a worker asked to stop (SIGTERM: `kill`, the study's end or death) unwinds
its cell first, so that the cell's own temporary folders are removed as they are on an error;
``study run`` itself stops on SIGTERM as on Ctrl-C, its workers stopped and its scratch folder
removed. SIGKILL of the study with its cell (its process group, the kernel's OOM killer) leaves
the scratch folder and what the cell had in it: the next study on the machine removes it, as
the folder's name says which process made it, no longer alive (`_remove_abandoned_scratch`).
"""
import importlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import lru_cache
from multiprocessing import get_context
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Union

from spacy_auc_ner.api import PathLike

from .cells import Cell
from .store import ResultsStore, StoreError, diff_digest, latest_rows, superseded
from .tuning import TuningError, resolve, trial_keys

CellFunction = Callable[[Cell], Dict[str, Any]]
DEFAULT_RUNNER = "auc_ner_lab.runner:run_cell"
_THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMEXPR_NUM_THREADS")
_TRACEBACK_LINES = 30


SCRATCH_PREFIX = "auc-ner-study-"


class StudyError(RuntimeError):
    """A study that cannot start (bad runner, missing extra)."""


class CellKilled(BaseException):
    """Raised in a worker by SIGTERM: unwinds the cell (its `finally` blocks and temporary
    folders run and are removed), then the worker exits. Not an Exception, so that no
    `except Exception` of a cell swallows it."""


_IN_WORKER = False  # set in the study's worker processes (`_init_worker`)


def _stop_cell(signum, frame):
    raise CellKilled(signum)


def run_cell(cell: Cell) -> Dict[str, Any]:
    """The real cell: train the cell's config on its training set, score it on the test split
    (a tuning trial: on the dev split only; it is never scored on test). A method with its own
    cell function (`Cell.runner`, e.g. the Hugging Face peer) is trained by that function."""
    from .experiment import train_and_evaluate
    from .training_extras import run_cell_with_extras, steps

    if cell.runner is not None:
        return resolve_runner(cell.runner)(cell)
    if steps(cell):  # pretraining or self-training, which spacy train cannot do
        return run_cell_with_extras(cell)
    return train_and_evaluate(
        cell.training_config(),
        train=cell.train,
        dev=cell.dev,
        test=cell.test_split(),
        gpu_id=cell.gpu_id,
    )


def resolve_runner(runner: Union[None, str, CellFunction]) -> CellFunction:
    """A cell function from a 'module:function' path (None: `run_cell`)."""
    if runner is None:
        return run_cell
    if callable(runner):
        return runner
    module_name, _, func_name = runner.partition(":")
    if not module_name or not func_name:
        raise StudyError(f"runner {runner!r} is not a 'module:function' path")
    try:
        func = getattr(importlib.import_module(module_name), func_name)
    except (ImportError, AttributeError) as err:
        raise StudyError(f"runner {runner!r} cannot be imported: {err}") from None
    if not callable(func):
        raise StudyError(f"runner {runner!r} is not callable")
    return func


def row_identity(cell: Cell) -> Dict[str, Any]:
    """The fields of a results row that say which cell it is: the cell's description, its
    config file's name and its overrides (every row of the cell, finished, failed or lost)."""
    return {**cell.describe(), "config": Path(cell.config).name, "overrides": _jsonable(cell.overrides)}


def execute_cell(cell: Cell, runner: Union[None, str, CellFunction] = None) -> Dict[str, Any]:
    """Run one cell and return its results row; never raises for an error of the cell."""
    start = time.perf_counter()
    row: Dict[str, Any] = row_identity(cell)
    versions = environment()  # what the cell starts from (the tree may change while it trains)
    try:
        scores = resolve_runner(runner)(cell)
        row.update(status="ok", scores=_jsonable(scores))
    except CellKilled:
        if not _IN_WORKER:
            raise
        # the cell has unwound, its temporary folders are gone: the worker ends as asked
        # (the study records the cell as lost); the study's scratch folder goes with its last worker
        try:
            os.rmdir(tempfile.gettempdir()) if Path(tempfile.gettempdir()).name.startswith(SCRATCH_PREFIX) else None
        except OSError:
            pass
        os._exit(128 + signal.SIGTERM)
    except (Exception, SystemExit) as err:  # a failing cell is data, not the end of the study
        tb = traceback.format_exc().rstrip().splitlines()
        error = f"{type(err).__name__}: {err}".strip()
        if isinstance(err, SystemExit):  # spaCy's msg.fail(..., exits=1): its message went to the quiet log
            error += " (spaCy stopped on an error; train the cell's config with `python -m spacy train` to see it)"
        row.update(status="failed", error=error, traceback="\n".join(tb[-_TRACEBACK_LINES:]))
    row.update(
        seconds=round(time.perf_counter() - start, 3),
        finished=datetime.now(timezone.utc).isoformat(timespec="microseconds"),
        host=socket.gethostname(),
        device=device_name(cell.gpu_id),
        pid=os.getpid(),
        versions=versions,
    )
    return row


def device_name(gpu_id: int) -> str:
    """Where a cell trained, for its row: "cpu", or "cuda:N" and the GPU's name (GPU rows are
    marked as such in the tables; they pair with CPU rows of the same draw all the same)."""
    if gpu_id < 0:
        return "cpu"
    try:
        import torch

        return f"cuda:{gpu_id} {torch.cuda.get_device_name(gpu_id)}"
    except Exception:  # no torch, or no such GPU: the row still says it asked for one
        return f"cuda:{gpu_id}"


# the checkout the lab runs from: projects/lab/auc_ner_lab/../../.. (tests point it elsewhere)
CHECKOUT = Path(__file__).resolve().parents[3]
# what "+changes" and the stored diff look at: tracked files outside the results a campaign appends to
_CODE_PATHS = ["--", ".", ":(exclude)projects/lab/results"]


def git_commit(checkout: Path) -> Optional[str]:
    """The checkout's commit, with "+changes" when tracked files other than projects/lab/results/ differ
    from it (a campaign appends to results/ as it runs; code changes mean the commit alone does
    not say what ran); None outside a git checkout."""
    if not (checkout / ".git").exists():
        return None
    try:
        head = subprocess.run(["git", "-C", str(checkout), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10)
        dirty = subprocess.run(["git", "-C", str(checkout), "status", "--porcelain", "--untracked-files=no", *_CODE_PATHS],
                               capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    if head.returncode != 0:
        return None
    return head.stdout.strip() + ("+changes" if dirty.stdout.strip() else "")


def tree_diff(checkout: Path) -> Optional[bytes]:
    """The uncommitted changes of the checkout's tracked files outside projects/lab/results/
    (what "+changes" in `git_commit` stands for), as `git diff HEAD --binary` prints them; None
    for a clean tree or outside a git checkout."""
    if not (checkout / ".git").exists():
        return None
    try:
        diff = subprocess.run(["git", "-C", str(checkout), "diff", "HEAD", "--binary", *_CODE_PATHS], capture_output=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    return diff.stdout if diff.returncode == 0 and diff.stdout else None


def store_tree_diff(store: ResultsStore, checkout: Optional[Path] = None) -> Optional[str]:
    """Before cells train from a working tree with uncommitted changes, keep its diff in
    `store` (`ResultsStore.save_diff`: diffs/<digest>.patch, written once), so that their rows'
    "+changes" commit traces to code; the digest, None for a clean tree. A dirty tree whose diff
    cannot be read (StudyError) or stored (StoreError) refuses the study: no cell starts from
    changes that nothing records."""
    checkout = CHECKOUT if checkout is None else checkout
    commit = git_commit(checkout)
    if not commit or not commit.endswith("+changes"):
        return None
    diff = tree_diff(checkout)
    if not diff:
        raise StudyError(f"{checkout}: the working tree has uncommitted changes and `git diff HEAD` gives none to store; "
                         "refusing to train from it (commit the changes)")
    try:
        return store.save_diff(diff)
    except StoreError as err:
        raise StoreError(f"refusing to train from a working tree with uncommitted changes whose diff cannot be stored: {err}") from None


def environment() -> Dict[str, Optional[str]]:
    """What a cell's numbers depend on besides its config: the versions of the libraries that
    train it, the package's git commit (None outside a checkout) and, for a commit with
    "+changes", the sha256 of the tree's diff (`git_diff_digest`; the diff is kept in the
    results store, `store_tree_diff`). Rerunning a cell under other versions need not give the
    same F1, so rows say what ran them. The tree is read again for each cell; the libraries once."""
    found: Dict[str, Optional[str]] = dict(_library_versions())
    # a copy without .git (a GPU machine's) names the commit it was copied from in AUC_NER_LAB_COMMIT
    found["git_commit"] = git_commit(CHECKOUT) or os.environ.get("AUC_NER_LAB_COMMIT")
    diff = tree_diff(CHECKOUT) if str(found["git_commit"] or "").endswith("+changes") else None
    if diff:
        found["git_diff_digest"] = diff_digest(diff)
    return found


@lru_cache(maxsize=1)
def _library_versions() -> Dict[str, Optional[str]]:
    from importlib.metadata import PackageNotFoundError, version

    found: Dict[str, Optional[str]] = {}
    for name in ("spacy_auc_ner", "spacy", "thinc", "numpy", "torch", "spacy-transformers", "transformers"):
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = None
    return found


def _jsonable(value: Any) -> Any:
    def default(obj):
        if hasattr(obj, "item"):  # numpy / cupy / torch scalars
            return obj.item()
        if hasattr(obj, "tolist"):
            return obj.tolist()
        return str(obj)

    return json.loads(json.dumps(value, default=default))


# ---- executors ----------------------------------------------------------------------------
class _InlineExecutor:
    """Runs each cell in this process when submitted (``--workers 0``, for debugging)."""

    def submit(self, fn, *args) -> Future:
        future: Future = Future()
        future.set_result(fn(*args))
        return future

    def shutdown(self, wait: bool = True, cancel_futures: bool = False) -> None:
        pass


def _init_worker(threads: int) -> None:
    global _IN_WORKER
    _IN_WORKER = True
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    signal.signal(signal.SIGTERM, _stop_cell)  # before asking for SIGTERM at the parent's death
    _die_with_parent()
    try:
        import torch

        torch.set_num_threads(threads)
    except ImportError:
        pass


def _die_with_parent() -> None:
    """On Linux, ask the kernel to end this worker when the study process dies, however it
    dies (kill -9 included): otherwise a killed study leaves its workers training cells whose
    rows nobody will write, on the cores its rerun needs. Elsewhere: nothing."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        PR_SET_PDEATHSIG = 1
        libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
        if os.getppid() == 1:  # the parent died before the request was made
            os._exit(1)
    except (OSError, AttributeError):
        pass


def _remove_abandoned_scratch(folder: Path) -> None:
    """Remove the scratch folders in `folder` (the temporary folder) of studies killed outright:
    those whose name (`_scratch_folder`) names a process of this host that is no longer alive.
    A live study's folder stays, and so does one of another host or that names no process."""
    host = socket.gethostname()[:64]
    for scratch in folder.glob(f"{SCRATCH_PREFIX}*+*+*"):
        pid, owner_host, _ = scratch.name[len(SCRATCH_PREFIX):].split("+", 2)
        if owner_host == host and pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(scratch, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: alive
        return True
    return True


@contextmanager
def _scratch_folder(inline: bool, use_ray: bool) -> Iterator[Optional[Path]]:
    """A scratch folder for the study's temporary files: the workers' TMPDIR (spawned while it
    is set), this process's temporary folder when cells run here (`inline`); removed at the
    end, whatever a cell left in it (a worker killed with SIGKILL cannot clean up), and by the
    next study when this one is killed outright. None on Ray, whose workers live on other
    nodes and whose own session files follow TMPDIR."""
    if use_ray:
        yield None
        return
    _remove_abandoned_scratch(Path(tempfile.gettempdir()))
    # its name says whose it is (process, host), so that the next study can tell it was abandoned;
    # not a file in it, which would keep the last worker out from removing it (`execute_cell`)
    scratch = Path(tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{os.getpid()}+{socket.gethostname()[:64]}+"))
    saved_env, saved_dir = os.environ.get("TMPDIR"), tempfile.tempdir
    os.environ["TMPDIR"] = str(scratch)
    if inline:
        tempfile.tempdir = str(scratch)
    try:
        yield scratch
    finally:
        tempfile.tempdir = saved_dir
        if saved_env is None:
            os.environ.pop("TMPDIR", None)
        else:
            os.environ["TMPDIR"] = saved_env
        shutil.rmtree(scratch, ignore_errors=True)


@contextmanager
def _stop_on_sigterm() -> Iterator[None]:
    """SIGTERM stops the study as Ctrl-C does (KeyboardInterrupt), so that it stops its
    workers and removes its scratch folder; only in the main thread, where Python runs
    signal handlers."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _stop_workers(executor, grace: float = 30.0) -> None:
    """Shut a pool down now and stop its worker processes (SIGTERM: each unwinds its cell),
    waiting for them, so that nothing writes into the scratch folder once it is removed; those
    still running `grace` seconds after the SIGTERM (together, not each: a worker stuck in a
    GPU call would otherwise cost that much once per worker) get SIGKILL."""
    processes = list((getattr(executor, "_processes", None) or {}).values())  # shutdown forgets them
    executor.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        if process.is_alive():
            process.terminate()
    deadline = time.monotonic() + grace
    for process in processes:
        process.join(timeout=max(0.0, deadline - time.monotonic()))
    for process in processes:
        if process.is_alive():
            process.kill()
            process.join()


@contextmanager
def _thread_env(threads: int) -> Iterator[None]:
    """Thread-count variables for spawned workers, set before they import numpy or torch."""
    saved = {k: os.environ.get(k) for k in (*_THREAD_VARS, "TOKENIZERS_PARALLELISM")}
    os.environ.update({k: str(threads) for k in _THREAD_VARS})
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _process_pool(workers: int, threads: int) -> ProcessPoolExecutor:
    return ProcessPoolExecutor(
        max_workers=workers,
        mp_context=get_context("spawn"),  # no fork of a process that may hold torch threads
        initializer=_init_worker,
        initargs=(threads,),
    )


class _RayExecutor:
    """Ships cells to a Ray cluster: the one this process already joined (``ray.init``), else
    the one at ``address`` (``auto``, ``HOST:6379``, ``ray://HOST:10001``), else Ray's own
    choice (``RAY_ADDRESS``, a cluster ``ray start`` began on this machine, else a new local
    one, stopped at the end; a joined cluster is only left). Each cell gets
    ``threads`` CPUs and the thread variables; a cell whose worker dies is recorded as failed
    and not retried by Ray (rerun it by resuming), as in the process pool. The package, the
    corpora and the configs must be at the same paths on every node."""

    def __init__(self, address: Optional[str], threads: int, gpus_per_cell: float):
        try:
            import ray
        except ImportError:
            from .requirements import INSTALL

            raise StudyError(f"--ray needs Ray, which is not installed: {INSTALL}") from None
        self._ray = ray
        self._started = not ray.is_initialized()
        if self._started:
            ray.init(address=address or None, log_to_driver=False)
        env = {k: str(threads) for k in _THREAD_VARS}
        env["TOKENIZERS_PARALLELISM"] = "false"
        self._remote = ray.remote(execute_cell).options(
            num_cpus=threads, num_gpus=gpus_per_cell, max_retries=0, runtime_env={"env_vars": env}
        )

    def submit(self, fn, cell: Cell, runner) -> Future:
        return self._remote.remote(cell, runner).future()

    def shutdown(self, wait: bool = True, cancel_futures: bool = False) -> None:
        if self._started:
            self._ray.shutdown()
            self._started = False


# ---- the study loop -----------------------------------------------------------------------
@dataclass
class StudyOutcome:
    total: int
    skipped: int
    ok: int
    failed: int
    seconds: float


def plan(cells: Sequence[Cell], rows: Sequence[Dict[str, Any]], *, retry_failed: bool = True, again: bool = False) -> List[Cell]:
    """The cells still to run: those without an ok row that stands (`store.superseded`: a row
    from before a fix of the code it ran does not) and, unless retrying, without a failed
    one; with `again`, every cell (their new rows supersede the old in reports)."""
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


def run_study(
    cells: Sequence[Cell],
    results: PathLike,
    *,
    workers: int = 1,
    runner: Union[None, str, CellFunction] = None,
    retry_failed: bool = True,
    again: bool = False,
    threads_per_worker: int = 1,
    ray_address: Optional[str] = None,
    use_ray: bool = False,
    progress: bool = True,
    log: Optional[Callable[[str], None]] = None,
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
    rows = store.rows(warn=log or _say_on_stderr, cells=cells)
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


def _say_on_stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _make_executor(workers, threads, use_ray, ray_address, gpu):
    if use_ray:
        return _RayExecutor(ray_address, threads, 1.0 if gpu else 0.0)
    if workers == 0:
        return _InlineExecutor()
    return _process_pool(workers, threads)


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
        prev = latest.get(row["key"])
        if prev is None or row["status"] == "ok" or prev["status"] != "ok":
            latest[row["key"]] = row
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

    with _stop_on_sigterm(), _thread_env(threads), _scratch_folder(inline=workers == 0, use_ray=use_ray):
        executor = _make_executor(workers, threads, use_ray, ray_address, gpu)
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
                    executor = _make_executor(workers, threads, use_ray, ray_address, gpu)
        except BaseException:
            _stop_workers(executor)
            raise
        else:
            executor.shutdown(wait=True)
        finally:
            bar.close()
    return ok, failed, elsewhere


def _next_ready(pending: List[Cell], unfinished: set) -> Optional[Cell]:
    """Take the next cell whose tuning trials (if any) all have a row in this run; None when
    every pending cell waits for a trial still pending or running."""
    for i in range(len(pending) - 1, -1, -1):
        if not any(key in unfinished for key in trial_keys(pending[i])):
            return pending.pop(i)
    return None


def _lost_row(cell: Cell, error: str) -> Dict[str, Any]:
    row = row_identity(cell)
    row.update(
        status="failed",
        error=error,
        traceback="",
        seconds=None,
        finished=datetime.now(timezone.utc).isoformat(timespec="microseconds"),
        host=socket.gethostname(),
        pid=None,
    )
    return row
