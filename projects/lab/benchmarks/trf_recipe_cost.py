"""What a lowres_best_trf cell costs against the Hugging Face peer's cell on one CPU thread
(issue 31 point 6: at most 3 times the peer's).

Both cells are the campaign's (studies/campaign_trf_recipe.yaml, read with `load_spec`): the
same draw (corpus, size, partition), dev sample, budget and scorer, at ONE fixed learn rate for
both, a point of the spec's tuning grid (--learn-rate, default 1e-4, the recipe's own default),
instead of the tuned one, so that neither waits for tuning trials. Each cell runs through the
lab's runner (`run_study`, one spawned worker with one thread, as `study run --workers 1 runs
it) into a temporary results folder, never a committed store; with --repeats > 1 the order
alternates (peer first, then the recipe first, ...), so that a change of the machine's load
hits both. A ratio is fair only between cells measured in one run: on a shared machine
another run's load differs.

Prints two markdown tables. Seconds, from the rows: wall (the row's ``seconds``: all the
worker did for the cell, test scoring included), training (``train_seconds``: up to the
cell's model), for a self-training cell the parts its ``extras`` give (training the teacher,
labelling the pool, training the student, the rest: pool and dev files, each round's model
loaded and scored on dev), after training (test and dev scoring) and the ratio to the peer.
Work, from the rows and the cells' configs: trainings, updates, dev evaluations and the dev,
pool and test sentences each cell predicted, with the seconds its dev evaluations take at the
inference speed its row measured on test (an estimate): where the time goes.

    cd projects/lab
    python benchmarks/trf_recipe_cost.py --corpora-dir corpus --rows cost.json

NCBI-disease, 50 sentences, partition 0 by default: about 15-25 minutes on a shared 2-core
machine. --rows FILE keeps the rows and what the tables need (refused if FILE exists);
--from-rows FILE prints the tables again from such a file without training.
"""
import argparse
import json
import os
import shutil
import socket
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path
from statistics import mean
from typing import Any, Dict, List, Optional, Sequence

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SPEC = ROOT / "studies" / "campaign_trf_recipe.yaml"
PEER, RECIPE = "hf_token_classification", "lowres_best_trf"
GRID_KEY = "training.optimizer.learn_rate.initial_rate"
TARGET = 3.0  # issue 31 point 6: the recipe's cell at most 3x the peer's
CALIBRATION = "spacy_auc_ner.calibrate_entity_bias.v1"  # predicts the dev sample once more per evaluation


# ---- the tables: pure functions of rows ------------------------------------------------------
def _num(value: Any) -> Optional[float]:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def seconds_parts(row: Dict[str, Any]) -> Dict[str, Optional[float]]:
    """A row's seconds: wall, training, after training, and for a self-training cell its
    rounds' parts (None where the row does not tell; a row written before rounds kept their
    labelling seconds counts the labelling in "other")."""
    scores = row.get("scores") or {}
    wall, train = _num(row.get("seconds")), _num(scores.get("train_seconds"))
    parts = {"wall": wall, "training": train, "teacher": None, "labelling": None, "student": None, "other": None,
             "after": wall - train if wall is not None and train is not None else None}
    rounds = (scores.get("extras") or {}).get("rounds") or []
    if rounds and train is not None:
        parts["teacher"] = _num(rounds[0].get("train_seconds"))
        parts["student"] = sum(_num(r.get("train_seconds")) or 0.0 for r in rounds[1:])
        labels = [_num(r.get("label_seconds")) for r in rounds[1:]]
        parts["labelling"] = sum(labels) if all(x is not None for x in labels) else None
        parts["other"] = train - sum(v or 0.0 for v in (parts["teacher"], parts["student"], parts["labelling"]))
    return parts


def ratio(a: Optional[float], b: Optional[float]) -> Optional[float]:
    return a / b if a is not None and b else None


def _s(value: Optional[float]) -> str:
    return "-" if value is None else f"{value:,.0f}"


def _x(value: Optional[float]) -> str:
    return "-" if value is None else f"{value:.2f}"


def seconds_table(runs: Sequence[Dict[str, Any]], peer: str) -> List[str]:
    """One line per cell run ({"method", "run", "row"}), ratios to the peer's cell of the same
    run; with several runs a mean line per method, its ratios those of the means."""
    lines = ["| method | run | wall s | training s | teacher s | pool labelling s | student s | other training s "
             "| after training s | x peer, wall | x peer, training |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    parts = [(r["method"], r["run"], seconds_parts(r["row"])) for r in runs]
    base = {run: p for method, run, p in parts if method == peer}

    def line(method, run, p, b):
        cells = [_s(p[k]) for k in ("wall", "training", "teacher", "labelling", "student", "other", "after")]
        cells += [_x(ratio(p[k], b[k]) if b else None) for k in ("wall", "training")]
        return f"| {method} | {run} | " + " | ".join(cells) + " |"

    lines += [line(m, run, p, base.get(run)) for m, run, p in parts]
    if len({run for _, run, _ in parts}) > 1:
        means = {m: mean_parts([p for mm, _, p in parts if mm == m]) for m, _, _ in parts}
        lines += [line(m, "mean", p, means.get(peer)) for m, p in means.items()]
    return lines


def mean_parts(parts: Sequence[Dict[str, Optional[float]]]) -> Dict[str, Optional[float]]:
    """The mean of each part over runs (None if a run lacks it)."""
    return {k: (mean(p[k] for p in parts) if all(p[k] is not None for p in parts) else None) for k in parts[0]}


def work(row: Dict[str, Any], budget: Dict[str, Any], dev: Dict[str, int]) -> Dict[str, Any]:
    """What one cell did, from its row and its config's budget (`cell_budget`): trainings,
    updates and dev evaluations (the peer's row counts its own; a spaCy cell's are its budget's,
    "at most": early stopping may end a training sooner), dev, pool and test sentences or words
    predicted, and the seconds of its dev predictions at its own measured inference speed."""
    scores = row.get("scores") or {}
    peer = scores.get("peer")
    rounds = (scores.get("extras") or {}).get("rounds") or []
    trainings = max(1, len(rounds))
    if peer is not None:
        updates, evaluations, exact = peer["steps"], len(peer["evaluations"]), True
    else:
        steps = [budget["max_steps"]] + [budget["student_steps"]] * (trainings - 1)
        updates = sum(s + 1 for s in steps)  # spaCy's loop updates at steps 0..max_steps
        evaluations = sum(s // budget["eval_frequency"] + 1 for s in steps)  # at steps 0, f, 2f, ...
        exact = False
    passes = 2 if budget.get("calibrates") else 1  # the entity-bias callback predicts dev before each evaluation
    dev_sentences = evaluations * passes * dev["sentences"]
    speed = _num(scores.get("test_words_per_second"))
    return {
        "trainings": trainings, "updates": updates, "exact": exact, "sentences_trained": updates * budget["batch_size"],
        "evaluations": evaluations, "passes": passes, "dev_sentences": dev_sentences,
        "pool_sentences": ((scores.get("extras") or {}).get("pool_sentences") or 0) * (trainings - 1),
        "test_words": scores.get("test_words"), "words_per_second": speed,
        "dev_seconds": dev_sentences * dev["words"] / dev["sentences"] / speed if speed and dev["sentences"] else None,
    }


def work_table(runs: Sequence[Dict[str, Any]], budgets: Dict[str, Dict[str, Any]], dev: Dict[str, int]) -> List[str]:
    """One line per method (its first run): the work behind its seconds."""
    lines = ["| method | trainings | updates x sentences | dev evaluations x passes x sentences | pool sentences labelled "
             "| test words | inference words/s (test) | dev predictions, est. s | share of wall |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    firsts: Dict[str, Dict[str, Any]] = {}
    for r in runs:
        firsts.setdefault(r["method"], r)
    for r in firsts.values():
        w = work(r["row"], budgets[r["method"]], dev)
        bound = "" if w["exact"] else "<= "
        share = ratio(w["dev_seconds"], _num(r["row"].get("seconds")))
        lines.append(
            f"| {r['method']} | {w['trainings']} | {bound}{w['updates']} x {budgets[r['method']]['batch_size']} "
            f"| {bound}{w['evaluations']} x {w['passes']} x {dev['sentences']} | {w['pool_sentences']:,} "
            f"| {_s(_num(w['test_words']))} | {_s(w['words_per_second'])} | {bound}{_s(w['dev_seconds'])} "
            f"| {'-' if share is None else f'{bound}{share:.0%}'} |"
        )
    return lines


def verdict(runs: Sequence[Dict[str, Any]], peer: str, method: str, target: float = TARGET) -> str:
    """One sentence: the method's mean wall seconds over the peer's, against the target."""
    def mean_of(name, key):
        values = [seconds_parts(r["row"])[key] for r in runs if r["method"] == name]
        return mean(values) if values and all(v is not None for v in values) else None

    x_wall = ratio(mean_of(method, "wall"), mean_of(peer, "wall"))
    x_train = ratio(mean_of(method, "training"), mean_of(peer, "training"))
    if x_wall is None:
        return f"{method} / {peer}: no ratio (a row lacks its seconds)"
    held = "holds" if x_wall <= target else "does NOT hold"
    return (f"{method} / {peer}: x{x_wall:.2f} in wall time, x{x_train:.2f} in training time; "
            f"the target (at most x{target:g} in wall time) {held}")


def report(record: Dict[str, Any]) -> str:
    """The whole printout of a measurement (what --rows keeps)."""
    s = record["settings"]
    runs, peer = record["runs"], s["methods"][0]
    head = (f"{s['corpus']}, {s['size']} sentences, partition {s['partition']}, learn rate {s['learn_rate']:g} for every "
            f"method (a point of the tuning grid, not the tuned one), one CPU thread (OMP_NUM_THREADS=1, one worker "
            f"with one torch thread), {s['repeats']} run(s) in alternating order; dev sample {record['dev']['sentences']} "
            f"sentences ({record['dev']['words']:,} words); {record['host']}, {record['started']} to {record['finished']}, "
            f"load average {record['load'][0]:.1f} at the start, {record['load'][1]:.1f} at the end")
    out = [head, "", *seconds_table(runs, peer), "", *work_table(runs, record["budgets"], record["dev"]), ""]
    out += [verdict(runs, peer, m, s.get("target", TARGET)) for m in s["methods"][1:]]
    return "\n".join(out)


# ---- the cells and the run -------------------------------------------------------------------
def campaign_cells(spec_path: Path, corpus: str, size: int, partition: int, methods: Sequence[str],
                   learn_rate: float, corpora_dir: Optional[Path]) -> List:
    """The spec's reported cells of `methods` for one draw, at the grid point `learn_rate`
    instead of the tuned one (in the order of `methods`)."""
    from auc_ner_lab.spec import SpecError, load_spec

    spec = load_spec(spec_path, corpora_dir=corpora_dir, only_corpora=[corpus], only_methods=methods,
                     set_values=[f"partitions={partition + 1}"])
    if size not in spec.sizes:
        raise SpecError(f"{spec_path}: --size {size} is not one of the spec's sizes ({', '.join(map(str, spec.sizes))})")
    if spec.tune is None or GRID_KEY not in spec.tune.grid:
        raise SpecError(f"{spec_path}: the spec tunes no {GRID_KEY}; --learn-rate needs it")
    spec.check_files()
    found = {c.method: c for c in spec.cells() if c.tuning is None and c.partition == partition and c.size == size}
    return [found[m].redefined(selection=None, overrides={**found[m].overrides, GRID_KEY: learn_rate}) for m in methods]


def cell_budget(cell) -> Dict[str, Any]:
    """The training budget a cell's config sets: steps (the student's too), evaluation rhythm,
    batch size, and whether the entity-bias callback predicts dev at each evaluation."""
    config = cell.training_config()
    training = config["training"]
    student = (config.get("self_training") or {}).get("max_steps")
    return {"max_steps": training["max_steps"], "student_steps": student or training["max_steps"],
            "eval_frequency": training["eval_frequency"], "batch_size": training["batcher"]["size"],
            "calibrates": (training.get("before_update") or {}).get("@callbacks") == CALIBRATION}


def dev_sample(cell) -> Dict[str, int]:
    """The sentences and words of the cell's dev sample (its ``[corpora.dev]``)."""
    from auc_ner_lab.training_extras import _reader_docs

    config = cell.training_config()
    config["paths"]["train"], config["paths"]["dev"] = str(cell.train), str(cell.dev)
    docs = list(_reader_docs(config, "corpora.dev"))
    return {"sentences": len(docs), "words": sum(len(d) for d in docs)}


def measure(cells: Sequence, repeats: int, scratch: Path, say) -> List[Dict[str, Any]]:
    """Each cell `repeats` times through the lab's runner, the order reversed every other run."""
    from auc_ner_lab.runner import run_study
    from auc_ner_lab.store import ResultsStore

    runs = []
    for run in range(1, repeats + 1):
        for cell in (cells if run % 2 else list(reversed(cells))):
            folder = scratch / f"run{run}-{cell.method}"
            say(f"run {run}/{repeats}: {cell.id}")
            run_study([cell], folder, workers=1, threads_per_worker=1, progress=False, log=say)
            (row,) = ResultsStore(folder).rows()
            if row["status"] != "ok":
                raise SystemExit(f"{cell.id} failed: {row['error']}")
            runs.append({"method": cell.method, "run": run, "row": row})
    return sorted(runs, key=lambda r: (r["run"], [c.method for c in cells].index(r["method"])))


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--spec", type=Path, default=SPEC, help="the study spec whose cells are timed (default: %(default)s)")
    parser.add_argument("--corpus", default="ncbi_disease", help="a corpus of the spec (default: %(default)s)")
    parser.add_argument("--size", type=int, default=50, help="training sentences, a size of the spec (default: %(default)s)")
    parser.add_argument("--partition", type=int, default=0, help="the draw (default: %(default)s)")
    parser.add_argument("--corpora-dir", type=Path, default=None, help="folder of <corpus>/{train,dev,test}.spacy (default: the spec's)")
    parser.add_argument("--methods", nargs="+", default=[PEER, RECIPE], help="methods of the spec; ratios are to the first (default: %(default)s)")
    parser.add_argument("--learn-rate", type=float, default=1e-4, help=f"{GRID_KEY} of every cell (default: %(default)g)")
    parser.add_argument("--repeats", type=int, default=1, help="runs of every cell, in alternating order (default: %(default)s)")
    parser.add_argument("--target", type=float, default=TARGET, help="the ratio to the first method not to exceed (default: %(default)g)")
    parser.add_argument("--rows", type=Path, default=None, help="write the rows and settings to this JSON file (must not exist)")
    parser.add_argument("--from-rows", type=Path, default=None, help="print the tables of a --rows file; trains nothing")
    args = parser.parse_args(argv)
    if args.from_rows is not None:
        try:
            record = json.loads(args.from_rows.read_text(encoding="utf8"))
        except (OSError, ValueError) as err:
            parser.error(f"--from-rows {args.from_rows}: {err}")
        print(report(record))
        return 0
    if args.repeats < 1:
        parser.error(f"--repeats: expected 1 or more, got {args.repeats}")
    if len(args.methods) < 2 or len(set(args.methods)) != len(args.methods):
        parser.error("--methods: two or more different methods, the first the one the others are compared with")
    if args.rows is not None and args.rows.exists():
        parser.error(f"--rows {args.rows}: exists; nothing is overwritten")
    if args.rows is not None and not args.rows.parent.is_dir():
        parser.error(f"--rows {args.rows}: no folder {args.rows.parent}")
    # one thread, set before numpy or torch loads here (the worker sets its own: run_study)
    os.environ.update({var: "1" for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")})
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    import torch

    from auc_ner_lab.spec import SpecError

    torch.set_num_threads(1)
    try:
        cells = campaign_cells(args.spec, args.corpus, args.size, args.partition, args.methods, args.learn_rate, args.corpora_dir)
    except SpecError as err:
        parser.error(str(err))
    say = lambda text: print(text, file=sys.stderr, flush=True)  # noqa: E731
    started, load = datetime.now(timezone.utc), [os.getloadavg()[0]]
    scratch = Path(tempfile.mkdtemp(prefix="trf-recipe-cost-"))
    try:
        runs = measure(cells, args.repeats, scratch, say)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    load.append(os.getloadavg()[0])
    record = {
        "settings": {"spec": str(args.spec), "corpus": args.corpus, "size": args.size, "partition": args.partition,
                     "methods": list(args.methods), "learn_rate": args.learn_rate, "repeats": args.repeats, "target": args.target},
        "host": socket.gethostname(), "started": started.isoformat(timespec="seconds"),
        "finished": datetime.now(timezone.utc).isoformat(timespec="seconds"), "load": load,
        "budgets": {c.method: cell_budget(c) for c in cells}, "dev": dev_sample(cells[0]), "runs": runs,
    }
    if args.rows is not None:
        args.rows.write_text(json.dumps(record, indent=1), encoding="utf8")
    print(report(record))
    return 0


if __name__ == "__main__":
    sys.exit(main())
