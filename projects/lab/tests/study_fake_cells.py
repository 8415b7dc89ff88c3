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


# Tuning: per method, the dev score peaks at one learning rate and the test score at another,
# so a selection that looked at test would pick differently (ce: dev 0.001, test 0.003;
# spacy_ner: dev 0.003, test 0.0005).
DEV_BY_LR = {"ce": {0.0005: 0.30, 0.001: 0.50, 0.003: 0.40},
             "spacy_ner": {0.0005: 0.20, 0.001: 0.30, 0.003: 0.45}}
TEST_BY_LR = {"ce": {0.0005: 0.35, 0.001: 0.45, 0.003: 0.60},
              "spacy_ner": {0.0005: 0.70, 0.001: 0.40, 0.003: 0.42}}
LEARN_RATE = "training.optimizer.learn_rate"


def tuning_cell(cell):
    """Dev and test scores that depend on the cell's learning rate (trials get test scores
    too here, so that a selection reading them would be caught)."""
    if cell.method == "broken" or (cell.tuning and cell.method == "flaky" and cell.tuning["point"][LEARN_RATE] == 0.001):
        raise ValueError(f"this cell is meant to fail ({cell.id})")
    table = "ce" if cell.method == "flaky" else cell.method
    lr = cell.overrides.get(LEARN_RATE, 0.001)
    dev = DEV_BY_LR[table][lr]
    test = TEST_BY_LR[table][lr] + 0.01 * (cell.partition or 0)
    return {"dev_score": dev, "dev_scores": {"ents_f": dev, "ents_seqeval_micro_f": dev},
            "ents_f": test, "ents_seqeval_micro_f": test, "lr": lr}


def sleepy_tuning_cell(cell):
    log = os.environ.get("STUDY_FAKE_LOG")
    if log:
        with open(log, "a", encoding="utf8") as f:
            f.write(f"{cell.id} {os.getpid()}\n")
    time.sleep(float(os.environ.get("STUDY_FAKE_SLEEP", "0.5")))
    return tuning_cell(cell)


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
