"""What the lab's tests share: stand-in cell functions (importable by spawned workers, Ray
and `study run` subprocesses: conftest.py puts this folder on their path), a tiny real study
trained on the toy corpus, results stores written and read, a study run in a subprocess and
killed midway, and the command line's one-line errors.

The stand-ins' scores are a made-up function of the cell, so the aggregation downstream is
predictable. The sleepy ones log each start to $STUDY_FAKE_LOG, so tests can count how often
a cell ran.
"""
import hashlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Sequence, Tuple

from typer.testing import CliRunner

from auc_ner_lab.runner import StudyOutcome, run_study
from auc_ner_lab.spec import parse_spec
from auc_ner_lab.store import ResultsStore
from auc_ner_lab.study_spec import StudySpec

LAB = Path(__file__).resolve().parents[1]
QUIET = dict(progress=False, log=lambda msg: None)  # run_study without a progress bar or log

# ---- stand-in cells ------------------------------------------------------------------------------
METHOD_BASE = {"ce": 0.40, "ova_auc": 0.50, "ova_bce": 0.45}


def instant_cell(cell):
    if cell.method == "broken":
        raise ValueError(f"this cell is meant to fail ({cell.id})")
    f = METHOD_BASE.get(cell.method, 0.3) + 0.001 * (cell.size or 0) + 0.01 * cell.partition
    return {"ents_f": f, "ents_p": f, "ents_r": f, "ents_seqeval_micro_f": f, "ents_untyped_f": f + 0.1,
            "ents_per_type": {"Disease": {"p": f, "r": f, "f": f}}}


def _slowly(cell_function):
    """The cell function, logging the cell's start to $STUDY_FAKE_LOG and sleeping
    $STUDY_FAKE_SLEEP seconds first."""

    def sleepy(cell):
        log = os.environ.get("STUDY_FAKE_LOG")
        if log:
            with open(log, "a", encoding="utf8") as f:
                f.write(f"{cell.id} {os.getpid()}\n")
        time.sleep(float(os.environ.get("STUDY_FAKE_SLEEP", "0.5")))
        return cell_function(cell)

    return sleepy


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
    table = "ce" if cell.method in ("flaky", "ce_dropout") else cell.method  # variants of ce score as ce
    lr = cell.overrides.get(LEARN_RATE, 0.001)
    dev = DEV_BY_LR[table][lr]
    test = TEST_BY_LR[table][lr] + 0.01 * (cell.partition or 0)
    return {"dev_score": dev, "dev_scores": {"ents_f": dev, "ents_seqeval_micro_f": dev},
            "ents_f": test, "ents_seqeval_micro_f": test, "lr": lr}


sleepy_cell = _slowly(instant_cell)
sleepy_tuning_cell = _slowly(tuning_cell)


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


# ---- a tiny real study -------------------------------------------------------------------------
def train_tiny(tmp_path: Path, methods: Sequence[Any], *, steps: int = 4, **keys: Any) -> Tuple[StudySpec, StudyOutcome, List[Dict[str, Any]]]:
    """Train `methods` for real on the toy corpus (lab_data.py): 5 sentences,
    one partition, `steps` training steps (dev scored every half), in this process, into the
    store tmp_path/r; `keys` are more spec keys. Returns the spec, the outcome and the rows."""
    from lab_data import write_toy_corpus

    spec = parse_spec(
        {"name": "tiny", "corpora": ["toy"], "methods": list(methods), "sizes": [5], "partitions": 1,
         "overrides": {"training.max_steps": steps, "training.eval_frequency": max(1, steps // 2)}, **keys},
        corpora_dir=write_toy_corpus(tmp_path / "corpus"), configs_dir=LAB / "configs",
    )
    spec.check_files()
    spec.check_tuning()
    outcome = run_study(spec.cells(), tmp_path / "r", workers=0, **QUIET)
    found = rows(tmp_path / "r")
    assert outcome.failed == 0, [r.get("traceback") for r in found if r["status"] != "ok"]
    return spec, outcome, found


# ---- results stores --------------------------------------------------------------------------------
def rows(store: Path) -> List[Dict[str, Any]]:
    """Every row of a results store, in its order."""
    return ResultsStore(store).rows()


def write_rows(store: Path, made_up: Sequence[Dict[str, Any]]) -> Path:
    """Made-up rows into a results store: each under its `key`, else under a key made of its
    `cell_id` (the rows of one cell_id are one cell's)."""
    target = ResultsStore(store)
    for row in made_up:
        target.add(row, row.get("key") or hashlib.sha1(row["cell_id"].encode("utf8")).hexdigest()[:16])
    return Path(store)


# ---- a study in a subprocess ---------------------------------------------------------------------
def study_command(spec: Path, store: Path, *args: str) -> List[str]:
    return [sys.executable, "-m", "auc_ner_lab", "study", "run", str(spec), "--results", str(store), "--no-progress", *args]


def study_env(**variables: str) -> Dict[str, str]:
    """The environment of a `study run` subprocess: one thread, the stand-ins' variables."""
    return dict(os.environ, OMP_NUM_THREADS="1", **variables)


def run_killed_midway(command: List[str], env: Dict[str, str], store: Path, at_least: int, stderr=subprocess.PIPE) -> List[Dict[str, Any]]:
    """Start `command` in its own process group, kill the group (the study and its workers)
    once `store` holds `at_least` rows; the rows it holds then."""
    proc = subprocess.Popen(command, env=env, start_new_session=True, stdout=subprocess.DEVNULL, stderr=stderr)
    deadline = time.time() + 60
    try:
        while time.time() < deadline and len(rows(store)) < at_least:
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else proc.returncode
            time.sleep(0.1)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    return rows(store)


# ---- the command line ----------------------------------------------------------------------------
def invoke(app, *args):
    return CliRunner().invoke(app, [str(a) for a in args])


def error_line(result) -> str:
    """The failure's message: a non-zero exit and one line on stderr."""
    assert result.exit_code != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def one_error_line(result) -> str:
    """The failure was expected: exit 1, no exception escaped, one line on stderr."""
    assert result.exit_code == 1, (result.exit_code, result.stderr, result.exception)
    assert isinstance(result.exception, SystemExit), result.exception
    return error_line(result)


def temp_folder_cell(cell):
    """Trains as a real cell does, in a temporary folder (here: a 1 MB file in it), logging the
    folder and its process to $STUDY_FAKE_LOG, then sleeping $STUDY_FAKE_SLEEP seconds."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "model.bin").write_bytes(b"\0" * 1_000_000)
        with open(os.environ["STUDY_FAKE_LOG"], "a", encoding="utf8") as f:
            f.write(f"{folder} {os.getpid()}\n")
        time.sleep(float(os.environ.get("STUDY_FAKE_SLEEP", "0.5")))
    return instant_cell(cell)
