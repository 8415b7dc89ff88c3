"""Does a training depend on what its process trained before, or on memory it never wrote?

On the GPU lease of 2026-11-26 round 0 of lowres_best_trf and the plain no_self_train cell
differed, while a cell trained twice repeated; every differing pair had run second in a worker
process and every repeat first (the ablation's parts.md). This trains one small cell of the
recipe's config (no self-training: `spacy train` in process) RUNS times in one process and prints,
per run, its dev F1 and a checksum of every weight; --poison adds a run that has every
``numpy.empty``/``empty_like``, ``torch.empty``/``empty_like`` and (on a GPU) ``cupy.empty``/
``empty_like`` result filled with NaN (floats) or 77777 (integers) first, so that code that reads
an element it never wrote changes the result. Run it twice in fresh processes to compare first
runs across processes.

  python scripts/gpu_lease/process_check.py --runs 3 --poison            # CPU
  python scripts/gpu_lease/process_check.py --gpu-id 0 --runs 3 --poison # GPU

Verdicts: every run equal (the first run of another process too) -> a process's history does not
change a training; run 1 unlike runs 2.. -> it does; only the poisoned run unlike the others -> some code
reads memory it never wrote. The poison reaches Python-level calls only, not the buffers that
CUDA kernels or C++ code allocate.
"""
import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy

LAB = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(LAB))  # auc_ner_lab, run as a script from anywhere
FILLED = {"numpy": 0, "torch": 0, "cupy": 0}


def _fill_array(a, name):
    FILLED[name] += 1
    if a.dtype.kind == "f":
        a.fill(numpy.nan)
    elif a.dtype.kind in "iu":
        a.fill(77777 if a.dtype.itemsize > 1 else 7)
    return a


def _fill_tensor(t, name):
    import torch

    FILLED[name] += 1
    if t.is_floating_point():
        t.fill_(float("nan"))
    elif t.dtype not in (torch.bool, torch.uint8, torch.int8):
        t.fill_(77777)
    return t


REAL = {}  # (module name, attribute) -> the constructor poison replaced


def _filling(real, fill, name):
    def make(*args, **kwargs):
        return fill(real(*args, **kwargs), name)
    return make


def poison(on: bool) -> None:
    """Replace (or restore) the empty-array constructors by ones that fill what they return."""
    import torch

    modules = [("numpy", numpy, _fill_array), ("torch", torch, _fill_tensor)]
    try:
        import cupy

        modules.append(("cupy", cupy, _fill_array))
    except ImportError:
        pass
    for name, module, fill in modules:
        for attr in ("empty", "empty_like"):
            real = REAL.setdefault((name, attr), getattr(module, attr))
            setattr(module, attr, _filling(real, fill, name) if on else real)


def weights_checksum(nlp) -> float:
    """The sum of |w| over every parameter of every pipe (the transformer's included)."""
    total = 0.0
    for _, pipe in nlp.pipeline:
        model = getattr(pipe, "model", None)
        if model is None:
            continue
        for node in model.walk():
            for name in node.param_names:
                if node.has_param(name):
                    total += float(numpy.abs(node.ops.to_numpy(node.get_param(name))).astype("f8").sum())
            for shim in node.shims:
                module = getattr(shim, "_model", None)
                if module is not None and hasattr(module, "state_dict"):
                    total += sum(float(v.detach().double().abs().sum()) for v in module.state_dict().values() if v.is_floating_point())
    return total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gpu-id", type=int, default=-1)
    parser.add_argument("--runs", type=int, default=3, help="trainings in this process")
    parser.add_argument("--poison", action="store_true", help="then one more run, with poisoned empty arrays")
    parser.add_argument("--corpus", default="s800")
    parser.add_argument("--size", type=int, default=20, help="training sentences (the first of the split)")
    parser.add_argument("--dev-size", type=int, default=100)
    parser.add_argument("--steps", type=int, default=30)
    args = parser.parse_args()

    import spacy
    from spacy.vocab import Vocab

    from auc_ner_lab.experiment import quiet
    from spacy_auc_ner.api import dev_scores, load_training_config, read_docs, recipe_config, train_config, write_docs

    split = LAB / "corpus" / args.corpus
    if not (split / "train.spacy").exists():
        sys.exit(f"{split / 'train.spacy'}: no such file (the lab's corpus folder: python lab.py corpora)")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        write_docs(tmp / "train.spacy", read_docs(split / "train.spacy", Vocab())[: args.size])
        write_docs(tmp / "dev.spacy", read_docs(split / "dev.spacy", Vocab())[: args.dev_size])
        overrides = {
            "paths.train": str(tmp / "train.spacy"), "paths.dev": str(tmp / "dev.spacy"), "paths.transformer": "minilm",
            "training.max_epochs": 0, "training.max_steps": args.steps, "training.eval_frequency": max(1, args.steps // 3),
            "training.optimizer.learn_rate.warmup_steps": max(1, args.steps // 10),
            "training.optimizer.learn_rate.total_steps": args.steps,
        }
        config = load_training_config(recipe_config("lowres_best_trf"), overrides)
        results = []
        for run in range(1, args.runs + 1 + args.poison):
            poisoned = run > args.runs
            poison(poisoned)
            start = time.perf_counter()
            try:
                with quiet():
                    model = train_config(config, tmp / f"run{run}", {}, args.gpu_id)  # its log: not this check's
                nlp = spacy.load(model)
                examples = list(spacy.training.Corpus(str(tmp / "dev.spacy"), gold_preproc=True)(nlp))
                result = {"run": run, "poisoned": poisoned, "device": "cpu" if args.gpu_id < 0 else f"cuda:{args.gpu_id}",
                          "dev_f": dev_scores(nlp, examples).get("ents_f"), "weights": weights_checksum(nlp),
                          "seconds": round(time.perf_counter() - start, 1)}
            finally:
                poison(False)
            results.append(result)
            print(json.dumps(result), flush=True)
    same = [r for r in results if (r["dev_f"], r["weights"]) == (results[0]["dev_f"], results[0]["weights"])]
    print(f"filled empty arrays: {FILLED}")
    print(f"{len(same)} of {len(results)} runs equal to run 1 (dev F1 and weights; the poisoned one last)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
