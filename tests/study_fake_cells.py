"""Fast stand-ins for a study's cell function, importable by spawned workers (tests/ on sys.path).

Scores are a made-up function of the cell, so the aggregation downstream is predictable.
`sleepy_cell` logs each start to $STUDY_FAKE_LOG, so tests can count how often a cell ran.
"""
import hashlib
import os
import signal
import time
from pathlib import Path

METHOD_BASE = {"ce": 0.40, "ova_auc": 0.50, "ova_bce": 0.45}


def instant_cell(cell):
    if cell.method == "broken":
        raise ValueError(f"this cell is meant to fail ({cell.id})")
    f = METHOD_BASE.get(cell.method, 0.3) + 0.001 * (cell.size or 0) + 0.01 * cell.partition
    return {"ents_f": f, "ents_p": f, "ents_r": f, "ents_seqeval_micro_f": f, "ents_untyped_f": f + 0.1,
            "ents_per_type": {"Disease": {"p": f, "r": f, "f": f}}}


def sleepy_cell(cell):
    log = os.environ.get("STUDY_FAKE_LOG")
    if log:
        with open(log, "a", encoding="utf8") as f:
            f.write(f"{cell.id} {os.getpid()}\n")
    time.sleep(float(os.environ.get("STUDY_FAKE_SLEEP", "0.5")))
    return instant_cell(cell)


def thread_count_cell(cell):
    """Reports the worker's thread settings; the 'broken' method kills its worker process."""
    import torch

    if cell.method == "broken":
        os._exit(3)

    return {"omp": os.environ.get("OMP_NUM_THREADS"), "torch_threads": torch.get_num_threads(),
            "ents_seqeval_micro_f": 0.5}


def exiting_cell(cell):
    if cell.partition == 0:
        raise SystemExit(1)  # what spaCy's msg.fail(..., exits=1) does
    return instant_cell(cell)


def dies_once_cell(cell):
    """An ova_auc cell kills its own worker process (SIGKILL, mid-cell) the first time it runs,
    remembered by a marker file in $STUDY_FAKE_MARKERS; every other run is `instant_cell`."""
    if cell.method == "ova_auc":
        marker = Path(os.environ["STUDY_FAKE_MARKERS"]) / hashlib.sha1(cell.id.encode()).hexdigest()
        if not marker.exists():
            marker.touch()
            time.sleep(0.2)
            os.kill(os.getpid(), signal.SIGKILL)
    return instant_cell(cell)
