"""Training and inference speed of every auc_ner scheme and strategy against spaCy's `ner`.

Same data, same CPU tok2vec (every method assembled onto configs/base_cpu.cfg), same batches,
same process, measured in one run; prints a markdown table with ratios to spaCy's `ner`.

    python benchmarks/speed.py --train corpus/ncbi_disease/train.spacy \
        --test corpus/ncbi_disease/test.spacy --n-train 500 --epochs 3

Training words/sec counts the words of the training batches per second of `nlp.update`
(after one warm-up epoch); inference words/sec is `nlp.pipe` over the test docs. Methods run in
interleaved rounds and the best round of each counts, so a passing load spike on a shared
machine does not decide a ratio.
"""
import argparse
import random
import sys
import time
from pathlib import Path

import spacy
from spacy.training import Corpus
from spacy.util import load_model_from_config, minibatch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from spacy_auc_ner.study.methods import method_config  # noqa: E402

# ova_auc_all: every classifier every step; ova_auc: Algorithm 1 (grouped); ova_auc_sampled: Algorithm 2
DEFAULT_METHODS = ["spacy_ner", "ova_auc_all", "ova_auc", "ova_auc_sampled", "ova_bce", "two_task_auc", "ce"]


def build(method_name: str, configs: Path, train_examples):
    config = method_config(method_name, "cpu", configs).interpolate()
    nlp = load_model_from_config(config, auto_fill=True, validate=True)
    spacy.util.fix_random_seed(0)
    optimizer = nlp.initialize(lambda: train_examples)
    return nlp, optimizer


def measure(method_name, configs, train_examples, test_docs, epochs, batch_words):
    nlp, optimizer = build(method_name, configs, train_examples)
    rng = random.Random(0)
    words = 0
    seconds = 0.0
    for epoch in range(epochs + 1):
        examples = list(train_examples)
        rng.shuffle(examples)
        for batch in minibatch(examples, size=batch_words // 25):
            start = time.perf_counter()
            nlp.update(batch, sgd=optimizer, drop=0.1)
            elapsed = time.perf_counter() - start
            if epoch > 0:  # epoch 0 warms up
                seconds += elapsed
                words += sum(len(eg.predicted) for eg in batch)
    docs = [d.copy() for d in test_docs]
    start = time.perf_counter()
    for _ in nlp.pipe(docs, batch_size=256):
        pass
    infer_seconds = time.perf_counter() - start
    n_test = sum(len(d) for d in docs)
    return words / seconds, n_test / infer_seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--train", type=Path, required=True, help="training corpus (.spacy)")
    parser.add_argument("--test", type=Path, required=True, help="inference corpus (.spacy)")
    parser.add_argument("--configs", type=Path, default=ROOT / "configs", help="folder of the bases and methods/")
    parser.add_argument("--n-train", type=int, default=500, help="training sentences (first n)")
    parser.add_argument("--epochs", type=int, default=3, help="timed epochs after one warm-up epoch")
    parser.add_argument("--batch-words", type=int, default=1000)
    parser.add_argument("--methods", nargs="+", default=DEFAULT_METHODS)
    parser.add_argument("--repeat", type=int, default=2, help="rounds over all methods; the best round of each is kept")
    args = parser.parse_args()
    nlp = spacy.blank("en")
    train_examples = list(Corpus(str(args.train))(nlp))[: args.n_train]
    test_docs = [eg.predicted for eg in Corpus(str(args.test))(nlp)]
    best = {name: (0.0, 0.0) for name in args.methods}
    for round_ in range(args.repeat):  # interleaved rounds: a load spike hits one round of each
        for name in args.methods:
            train_wps, infer_wps = measure(name, args.configs, train_examples, test_docs, args.epochs, args.batch_words)
            best[name] = (max(best[name][0], train_wps), max(best[name][1], infer_wps))
            print(f"round {round_}: {name}: train {train_wps:,.0f} w/s, inference {infer_wps:,.0f} w/s", file=sys.stderr)
    rows = [(name, *best[name]) for name in args.methods]
    base = {name: (t, i) for name, t, i in rows}.get("spacy_ner")
    print(f"\n{len(train_examples)} training sentences ({sum(len(e.predicted) for e in train_examples)} words), "
          f"{len(test_docs)} test sentences, {args.epochs} timed epochs, batches of ~{args.batch_words} words, "
          f"best of {args.repeat} interleaved rounds, CPU tok2vec (width 96, depth 4) in every pipeline\n")
    print("| method | train words/s | x spaCy ner | inference words/s | x spaCy ner |")
    print("|---|---:|---:|---:|---:|")
    for name, t, i in rows:
        rt = f"{t / base[0]:.2f}" if base else "-"
        ri = f"{i / base[1]:.2f}" if base else "-"
        print(f"| {name} | {t:,.0f} | {rt} | {i:,.0f} | {ri} |")


if __name__ == "__main__":
    main()
