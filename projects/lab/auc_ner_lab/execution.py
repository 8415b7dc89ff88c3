"""One cell run, in a worker process or in this one, turned into its results row: the cell's
function (spacy train and evaluate, or the method's own), its scores or its error and the tail
of its traceback, and what ran it (`provenance.environment`). A worker asked to stop (SIGTERM:
`kill`, the study's end or death) unwinds its cell first, so that the cell's own temporary
folders are removed as they are on an error, then exits."""
import contextlib
import importlib
import json
import os
import signal
import socket
import sys
import tempfile
import time
import traceback
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Dict, Union

from .cells import Cell
from .provenance import environment
from .scratch import SCRATCH_PREFIX

CellFunction = Callable[[Cell], Dict[str, Any]]
_TRACEBACK_LINES = 30


class StudyError(RuntimeError):
    """A study that cannot start (bad runner, missing extra)."""


class CellKilled(BaseException):
    """Raised in a worker by SIGTERM: unwinds the cell (its `finally` blocks and temporary
    folders run and are removed), then the worker exits. Not an Exception, so that no
    `except Exception` of a cell swallows it."""


_IN_WORKER = False  # set in the study's worker processes (`init_worker`)


def _stop_cell(signum, frame):
    raise CellKilled(signum)


def run_cell(cell: Cell) -> Dict[str, Any]:
    """Train the cell's config on its training set and score it on test (a tuning trial: on dev
    only), or run the method's own cell function (`Cell.runner`, e.g. the Hugging Face peer)."""
    from .experiment import cell_config, train_and_evaluate
    from .training_extras import run_cell_with_extras, steps

    if cell.runner is not None:
        return resolve_runner(cell.runner)(cell)
    if steps(cell):  # pretraining or self-training, which spacy train cannot do
        return run_cell_with_extras(cell)
    return train_and_evaluate(cell_config(cell), test=cell.test_split(), gpu_id=cell.gpu_id)


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
    """The fields of every row of the cell that say which cell it is."""
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
        with contextlib.suppress(OSError):
            os.rmdir(tempfile.gettempdir()) if Path(tempfile.gettempdir()).name.startswith(SCRATCH_PREFIX) else None
        os._exit(128 + signal.SIGTERM)
    except (Exception, SystemExit) as err:  # a failing cell is data, not the end of the study
        tb = traceback.format_exc().rstrip().splitlines()
        error = f"{type(err).__name__}: {err}".strip()
        if isinstance(err, SystemExit):  # spaCy's msg.fail(..., exits=1): its message went to the quiet log
            error += " (spaCy stopped on an error; train the cell's config with `python -m spacy train` to see it)"
        row.update(status="failed", error=error, traceback="\n".join(tb[-_TRACEBACK_LINES:]))
    finished = datetime.now(timezone.utc).isoformat(timespec="microseconds")
    row.update(seconds=round(time.perf_counter() - start, 3), finished=finished, host=socket.gethostname(),
               device=device_name(cell.gpu_id), pid=os.getpid(), versions=versions)
    return row


def device_name(gpu_id: int) -> str:
    """Where a cell trained, for its row: "cpu", or "cuda:N" and the GPU's name."""
    if gpu_id < 0:
        return "cpu"
    try:
        import torch

        return f"cuda:{gpu_id} {torch.cuda.get_device_name(gpu_id)}"
    except Exception:  # no torch, or no such GPU: the row still says it asked for one
        return f"cuda:{gpu_id}"


def _jsonable(value: Any) -> Any:
    def default(obj):
        if hasattr(obj, "item"):  # numpy / cupy / torch scalars
            return obj.item()
        if hasattr(obj, "tolist"):
            return obj.tolist()
        return str(obj)

    return json.loads(json.dumps(value, default=default))


def init_worker(threads: int) -> None:
    """A study's worker process, before its first cell: it unwinds its cell on SIGTERM, dies
    with the study and trains on `threads` threads."""
    global _IN_WORKER
    _IN_WORKER = True
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    signal.signal(signal.SIGTERM, _stop_cell)  # before asking for SIGTERM at the parent's death
    _die_with_parent()
    with contextlib.suppress(ImportError):
        import torch

        torch.set_num_threads(threads)


def _die_with_parent() -> None:
    """On Linux, ask the kernel to end this worker when the study process dies, however it
    dies (kill -9 included): otherwise a killed study leaves its workers training cells whose
    rows nobody will write, on the cores its rerun needs. Elsewhere: nothing."""
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError, AttributeError):
        import ctypes

        PR_SET_PDEATHSIG = 1
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
        if os.getppid() == 1:  # the parent died before the request was made
            os._exit(1)
