"""Training and inference speed of every auc_ner scheme and strategy against spaCy's `ner`.

Same data, same encoder (every method assembled onto configs/base_<encoder>.cfg), same
batches, same process, measured in one run; prints a markdown table with ratios to spaCy's
`ner`.

CPU tok2vec:

    python benchmarks/speed.py --train corpus/ncbi_disease/train.spacy \
        --test corpus/ncbi_disease/test.spacy --n-train 500 --epochs 3

Pretrained transformer (configs/base_trf.cfg), fine-tuned and frozen with the cached encoder
(``frozen = true``), each against spaCy's `ner` on the same encoder in the same mode:

    python benchmarks/speed.py --encoder trf --transformer minilm \
        --train corpus/ncbi_disease/train.spacy --test corpus/ncbi_disease/test.spacy \
        --n-train 100 --n-test 100 --epochs 1 --repeat 1

On a GPU (``--gpu-id 0``; cupy, and torch with CUDA for the transformer) the clock is read
after the device has finished the queued work, so words/s count the GPU's time too:

    python benchmarks/speed.py --gpu-id 0 --train ... --test ...

Training words/sec counts the words of the training batches per second of `nlp.update`
after one warm-up epoch; for the transformer the warm-up epoch is reported too (for the
cached frozen encoder it is the epoch that runs the encoder, on all but the 10 sample docs that
initialisation encoded; later epochs reuse its output).
Inference words/sec is `nlp.pipe` over the test docs, which no model has seen (so the cached
encoder runs on each). Methods run in interleaved rounds and the best round of each counts,
so a passing load spike on a shared machine does not decide a ratio.
"""
import argparse
import random
import sys
import time
from pathlib import Path
from typing import Dict, List, NamedTuple

import spacy
from spacy.training import Corpus
from spacy.util import load_model_from_config, minibatch
from thinc.api import get_current_ops

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from spacy_auc_ner.methods import method_config  # noqa: E402

# ova_auc_all: every classifier every step; ova_auc: Algorithm 1 (grouped); ova_auc_sampled: Algorithm 2
DEFAULT_METHODS = {
    "cpu": ["spacy_ner", "ova_auc_all", "ova_auc", "ova_auc_sampled", "ova_bce", "two_task_auc", "ce", "crf", "bilstm_crf"],
    "trf": ["spacy_ner", "ova_auc_all", "ova_auc", "ova_bce", "two_task_auc", "ce", "crf", "bilstm_crf"],
}
MODES = {"fine-tuned": False, "frozen, cached": True}


class Speed(NamedTuple):
    first_epoch: float  # training words/s of the warm-up epoch
    train: float  # training words/s of the timed epochs
    inference: float


def overrides_for(method: str, encoder: str, configs: Path, transformer: str, frozen: bool) -> Dict:
    if encoder == "cpu":
        return {}
    pipe = method_config(method, encoder, configs)["nlp"]["pipeline"][0]
    return {"paths.transformer": transformer, f"components.{pipe}.model.tok2vec.frozen": frozen}


def build(method: str, encoder: str, configs: Path, overrides: Dict, train_examples):
    config = method_config(method, encoder, configs, overrides).interpolate()
    nlp = load_model_from_config(config, auto_fill=True, validate=True)
    spacy.util.fix_random_seed(0)
    optimizer = nlp.initialize(lambda: train_examples)
    return nlp, optimizer


def synchronize() -> None:
    """Wait for the GPU's queued work (a no-op on CPU): its kernels run asynchronously, so a
    host clock read without this would time the launches, not the work."""
    ops = get_current_ops()
    if ops.name != "cupy":
        return
    ops.xp.cuda.get_current_stream().synchronize()
    try:
        import torch
    except ImportError:
        return
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def measure(nlp, optimizer, train_examples, test_docs, epochs, batch_words) -> Speed:
    rng = random.Random(0)
    words = [0] * (epochs + 1)
    seconds = [0.0] * (epochs + 1)
    for epoch in range(epochs + 1):
        examples = list(train_examples)
        rng.shuffle(examples)
        for batch in minibatch(examples, size=batch_words // 25):
            start = time.perf_counter()
            nlp.update(batch, sgd=optimizer, drop=0.1)
            synchronize()
            seconds[epoch] += time.perf_counter() - start
            words[epoch] += sum(len(eg.predicted) for eg in batch)
    docs = [d.copy() for d in test_docs]
    start = time.perf_counter()
    for _ in nlp.pipe(docs, batch_size=256):
        pass
    synchronize()
    infer_seconds = time.perf_counter() - start
    n_test = sum(len(d) for d in docs)
    return Speed(words[0] / seconds[0], sum(words[1:]) / sum(seconds[1:]), n_test / infer_seconds)


def best_of(rounds: List[Speed]) -> Speed:
    return Speed(*(max(values) for values in zip(*rounds)))


def cpu_table(best: Dict[tuple, Speed]) -> List[str]:
    base = best.get(("spacy_ner", "fine-tuned"))
    lines = ["| method | train words/s | x spaCy ner | inference words/s | x spaCy ner |", "|---|---:|---:|---:|---:|"]
    for (name, _), s in best.items():
        rt = f"{s.train / base.train:.2f}" if base else "-"
        ri = f"{s.inference / base.inference:.2f}" if base else "-"
        lines.append(f"| {name} | {s.train:,.0f} | {rt} | {s.inference:,.0f} | {ri} |")
    return lines


def trf_table(best: Dict[tuple, Speed]) -> List[str]:
    lines = [
        "| method | encoder | train words/s, first epoch | train words/s, later epochs | x spaCy ner | x fine-tuned | inference words/s | x spaCy ner |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for (name, mode), s in best.items():
        base = best.get(("spacy_ner", mode))
        tuned = best.get((name, "fine-tuned"))
        rt = f"{s.train / base.train:.2f}" if base else "-"
        rf = f"{s.train / tuned.train:.1f}" if tuned else "-"
        ri = f"{s.inference / base.inference:.2f}" if base else "-"
        lines.append(f"| {name} | {mode} | {s.first_epoch:,.0f} | {s.train:,.0f} | {rt} | {rf} | {s.inference:,.0f} | {ri} |")
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--train", type=Path, required=True, help="training corpus (.spacy)")
    parser.add_argument("--test", type=Path, required=True, help="inference corpus (.spacy)")
    parser.add_argument("--configs", type=Path, default=ROOT / "configs", help="folder of the bases and methods/")
    parser.add_argument("--encoder", choices=["cpu", "trf"], default="cpu", help="base_cpu.cfg, or base_trf.cfg fine-tuned and frozen")
    parser.add_argument("--transformer", default="minilm", help="paths.transformer of base_trf.cfg (--encoder trf)")
    parser.add_argument("--n-train", type=int, default=500, help="training sentences (first n)")
    parser.add_argument("--n-test", type=int, default=0, help="inference sentences (first n; 0 = all)")
    parser.add_argument("--epochs", type=int, default=3, help="timed epochs after one warm-up epoch")
    parser.add_argument("--batch-words", type=int, default=1000)
    parser.add_argument("--methods", nargs="+", default=None, help="default: the encoder's main methods")
    parser.add_argument("--repeat", type=int, default=2, help="rounds over all methods; the best round of each is kept")
    parser.add_argument("--gpu-id", type=int, default=-1, help="GPU to train and predict on (-1: CPU)")
    args = parser.parse_args()
    if args.gpu_id >= 0:
        spacy.require_gpu(args.gpu_id)
    nlp = spacy.blank("en")
    train_examples = list(Corpus(str(args.train))(nlp))[: args.n_train]
    test_docs = [eg.predicted for eg in Corpus(str(args.test))(nlp)]
    test_docs = test_docs[: args.n_test] if args.n_test else test_docs
    modes = MODES if args.encoder == "trf" else {"fine-tuned": False}
    methods = args.methods or DEFAULT_METHODS[args.encoder]
    runs = {
        (name, mode): overrides_for(name, args.encoder, args.configs, args.transformer, frozen)
        for mode, frozen in modes.items()
        for name in methods
    }
    rounds: Dict[tuple, List[Speed]] = {key: [] for key in runs}
    for round_ in range(args.repeat):  # interleaved rounds: a load spike hits one round of each
        for (name, mode), overrides in runs.items():
            nlp, optimizer = build(name, args.encoder, args.configs, overrides, train_examples)
            speed = measure(nlp, optimizer, train_examples, test_docs, args.epochs, args.batch_words)
            rounds[(name, mode)].append(speed)
            print(f"round {round_}: {name} ({mode}): first epoch {speed.first_epoch:,.0f} w/s, train {speed.train:,.0f} w/s, inference {speed.inference:,.0f} w/s", file=sys.stderr)
    best = {key: best_of(speeds) for key, speeds in rounds.items()}
    encoder = "CPU tok2vec (width 96, depth 4)" if args.encoder == "cpu" else f"transformer {args.transformer!r}"
    print(f"\n{len(train_examples)} training sentences ({sum(len(e.predicted) for e in train_examples)} words), "
          f"{len(test_docs)} test sentences ({sum(len(d) for d in test_docs)} words), {args.epochs} timed epochs after "
          f"1 warm-up, batches of ~{args.batch_words} words, best of {args.repeat} interleaved rounds, {encoder} in every pipeline, "
          f"on {'GPU ' + str(args.gpu_id) if args.gpu_id >= 0 else 'CPU'}\n")
    print("\n".join(cpu_table(best) if args.encoder == "cpu" else trf_table(best)))


if __name__ == "__main__":
    main()
