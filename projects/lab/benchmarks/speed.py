"""Training and inference speed of every auc_ner scheme and strategy against spaCy's `ner`.

Same data, same encoder (every method assembled onto configs/base_<encoder>.cfg), same
batches, same process, measured in one run; prints a markdown table with ratios to spaCy's
`ner`.

CPU tok2vec:

    python benchmarks/speed.py --train corpus/ncbi_disease/train.spacy \
        --test corpus/ncbi_disease/test.spacy --n-train 500 --epochs 3

Pretrained transformer (configs/base_trf.cfg) in four modes: fine-tuned, the top 2 and the
top 1 layers trained over cached lower layers (``trainable_layers``), and frozen with the
cached encoder (``frozen = true``); each against spaCy's `ner` on the same encoder in the same
mode, and against the limit: a plain torch loop (Hugging Face model + a linear head, forward,
backward, AdamW) over the same sentences in the same batches, fine-tuning every layer ("x
torch loop") or training the same layers as the mode, without a cache ("x loop, same mode"):

    python benchmarks/speed.py --encoder trf --transformer minilm \
        --train corpus/ncbi_disease/train.spacy --test corpus/ncbi_disease/test.spacy \
        --n-train 48 --n-test 60 --epochs 2 --repeat 1 --batch-words 300 \
        --methods ce ova_auc crf spacy_ner

Measured with that command (2026-11-23, all-MiniLM-L6-v2, the first 48 NCBI-disease training
and 60 test sentences, batches of 12 sentences, one CPU thread, OMP_NUM_THREADS=1, a shared
2-core machine, one round: differences under ~15% are noise), training words/s of the timed
epochs and the ratio to the torch loop fine-tuning every layer:

    | method     | fine-tuned  | top 2 layers | top 1 layer  | frozen, cached   |
    |------------|-------------|--------------|--------------|------------------|
    | torch loop |   237  1.00 |   511  2.16  |   624  2.63  |    647    2.73   |
    | ce         |   254  1.07 |   835  3.52  | 1,360  5.74  | 96,848  409      |
    | crf        |   264  1.12 |   808  3.41  | 1,398  5.90  | 21,934   93      |
    | spacy_ner  |   260  1.10 |   856  3.62  | 1,326  5.60  |  8,581   36      |
    | ova_auc    |    87  0.37 |   287  1.21  |   506  2.13  | 34,033  144      |

(the loop's "top k" and "frozen" modes run the lower layers at every step; the pipelines'
cache runs them once per sentence, in the first epoch: 500-1,000 words/s). Inference: 560-860
words/s for every row. A profile of one training step (cProfile, ce and ova_auc, fine-tuned
and top 2 layers) finds no overhead beyond the torch loop worth closing: forward and backward
are ~85% of a fine-tuned step, the thinc Adam over 22.7M parameters ~13% (0.15 s a step; torch
AdamW on the same parameters takes 0.14-0.18 s on this core), tokenisation, strided spans,
alignment and pooling ~1-2%. ova_auc (Algorithm 1) is a third of the others because it takes
one encoder forward, backward and optimizer step per B/I/O prefix group, three a batch: that is
the algorithm, not overhead. Evaluation in ``spacy train`` is inference over the dev set; the
partial and frozen caches cover dev docs too.

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
from typing import Dict, List, NamedTuple, Tuple

import spacy
from spacy.training import Corpus
from spacy.util import load_model_from_config, minibatch
from thinc.api import get_current_ops

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from spacy_auc_ner.api import method_config  # noqa: E402

# ova_auc_all: every classifier every step; ova_auc: Algorithm 1 (grouped); ova_auc_sampled: Algorithm 2
DEFAULT_METHODS = {
    "cpu": ["spacy_ner", "ova_auc_all", "ova_auc", "ova_auc_sampled", "ova_bce", "two_task_auc", "ce", "crf", "bilstm_crf"],
    "trf": ["spacy_ner", "ova_auc_all", "ova_auc", "ova_bce", "two_task_auc", "ce", "crf", "bilstm_crf"],
}
# the transformer's training modes: the tok2vec settings of base_trf.cfg, and the layers the
# plain torch loop trains in the same mode (None: all; 0: none, the encoder only run forward)
MODES = {
    "fine-tuned": ({"frozen": False, "trainable_layers": None}, None),
    "top 2 layers": ({"frozen": False, "trainable_layers": 2}, 2),
    "top 1 layer": ({"frozen": False, "trainable_layers": 1}, 1),
    "frozen, cached": ({"frozen": True, "trainable_layers": None}, 0),
}
TORCH_LOOP = "torch loop"


class Speed(NamedTuple):
    first_epoch: float  # training words/s of the warm-up epoch
    train: float  # training words/s of the timed epochs
    inference: float


def overrides_for(method: str, encoder: str, configs: Path, transformer: str, tok2vec: Dict) -> Dict:
    if encoder == "cpu":
        return {}
    pipe = method_config(method, encoder, configs)["nlp"]["pipeline"][0]
    return {"paths.transformer": transformer, **{f"components.{pipe}.model.tok2vec.{k}": v for k, v in tok2vec.items()}}


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


def timed_epochs(train_examples, epochs, batch_words, update) -> Tuple[float, float]:
    """Training words/s of the warm-up epoch and of the `epochs` after it, timing `update(batch)`
    on the same shuffled batches for every method."""
    rng = random.Random(0)
    words = [0] * (epochs + 1)
    seconds = [0.0] * (epochs + 1)
    for epoch in range(epochs + 1):
        examples = list(train_examples)
        rng.shuffle(examples)
        for batch in minibatch(examples, size=batch_words // 25):
            start = time.perf_counter()
            update(batch)
            seconds[epoch] += time.perf_counter() - start
            words[epoch] += sum(len(eg.predicted) for eg in batch)
    return words[0] / seconds[0], sum(words[1:]) / sum(seconds[1:])


def measure(nlp, optimizer, train_examples, test_docs, epochs, batch_words) -> Speed:
    def update(batch):
        nlp.update(batch, sgd=optimizer, drop=0.1)
        synchronize()

    first, later = timed_epochs(train_examples, epochs, batch_words, update)
    docs = [d.copy() for d in test_docs]
    start = time.perf_counter()
    for _ in nlp.pipe(docs, batch_size=256):
        pass
    synchronize()
    return Speed(first, later, sum(len(d) for d in docs) / (time.perf_counter() - start))


def torch_loop(transformer: str, trainable_layers, train_examples, test_docs, epochs, batch_words, gpu_id) -> Speed:
    """The limit: the same encoder trained in a plain torch loop (Hugging Face model + a linear
    head over each word's first wordpiece, cross-entropy on the BIO tags, AdamW, dropout 0.1),
    over the same sentences in the same batches; tokenisation counted in the time, as in the
    pipeline. `trainable_layers`: None trains every layer, k the top k (the lower layers still
    run forward at every step: no cache), 0 none (the encoder forward without gradient)."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    from spacy_auc_ner.api import resolve_encoder_name

    device = torch.device(f"cuda:{gpu_id}" if gpu_id >= 0 else "cpu")
    location = resolve_encoder_name(transformer).location
    tokenizer = AutoTokenizer.from_pretrained(location, use_fast=True)
    torch.manual_seed(0)
    model = AutoModel.from_pretrained(location).to(device)
    tags = {tag: i for i, tag in enumerate(sorted({t or "O" for eg in train_examples for t in eg.get_aligned_ner()}))}
    targets = {id(eg): [tags.get(t or "O", 0) for t in eg.get_aligned_ner()] for eg in train_examples}
    head = torch.nn.Linear(model.config.hidden_size, len(tags)).to(device)
    if trainable_layers is not None:
        layers = model.encoder.layer
        for module in [model.embeddings, *layers[: len(layers) - trainable_layers]]:
            module.requires_grad_(False)
    optimizer = torch.optim.AdamW([p for p in (*model.parameters(), *head.parameters()) if p.requires_grad], lr=5e-5)

    def encode(docs):
        batch = tokenizer([[t.text for t in doc] for doc in docs], is_split_into_words=True,
                          truncation=True, padding=True, return_tensors="pt")
        rows, cols = [], []
        for i in range(len(docs)):
            seen = set()
            for j, w in enumerate(batch.word_ids(i)):
                if w is not None and w not in seen:
                    seen.add(w)
                    rows.append(i)
                    cols.append(j)
        return {k: v.to(device) for k, v in batch.items()}, torch.tensor(rows, device=device), torch.tensor(cols, device=device)

    def update(batch):
        inputs, rows, cols = encode([eg.predicted for eg in batch])
        gold = torch.tensor([t for eg in batch for t in targets[id(eg)]], device=device)
        with torch.set_grad_enabled(trainable_layers != 0):
            hidden = model(**inputs).last_hidden_state
        torch.nn.functional.cross_entropy(head(hidden[rows, cols]), gold).backward()
        optimizer.step()
        optimizer.zero_grad()
        if device.type == "cuda":
            torch.cuda.synchronize()

    model.train()
    first, later = timed_epochs(train_examples, epochs, batch_words, update)
    model.eval()
    start = time.perf_counter()
    with torch.no_grad():
        for docs in minibatch(test_docs, size=256):
            inputs, rows, cols = encode(docs)
            head(model(**inputs).last_hidden_state[rows, cols]).argmax(-1).tolist()
    return Speed(first, later, sum(len(d) for d in test_docs) / (time.perf_counter() - start))


def best_of(rounds: List[Speed]) -> Speed:
    return Speed(*(max(values) for values in zip(*rounds)))


def cpu_table(best: Dict[tuple, Speed]) -> List[str]:
    base = best.get(("spacy_ner", "fine-tuned"))
    lines = ["| method | train words/s | x spaCy ner | inference words/s | x spaCy ner |", "|---|---:|---:|---:|---:|"]
    for (name, _), s in best.items():
        lines.append(f"| {name} | {s.train:,.0f} | {_x(s.train, base and base.train)} | {s.inference:,.0f} "
                     f"| {_x(s.inference, base and base.inference)} |")
    return lines


def _x(value: float, reference, digits: int = 2) -> str:
    """value / reference as a ratio, or "-" where there is no reference."""
    return f"{value / reference:.{digits}f}" if reference else "-"


def trf_table(best: Dict[tuple, Speed]) -> List[str]:
    """One row per method and mode; "x torch loop" is the ratio to the plain torch loop
    fine-tuning every layer (the limit), "x loop, same mode" to the loop training the same layers."""
    lines = [
        "| method | encoder | train words/s, first epoch | train words/s, later epochs | x torch loop | x loop, same mode "
        "| x spaCy ner | x fine-tuned | inference words/s | x spaCy ner |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    limit = best.get((TORCH_LOOP, "fine-tuned"))
    for (name, mode), s in best.items():
        base, tuned, loop = best.get(("spacy_ner", mode)), best.get((name, "fine-tuned")), best.get((TORCH_LOOP, mode))
        ratios = [_x(s.train, limit and limit.train), _x(s.train, loop and loop.train), _x(s.train, base and base.train),
                  _x(s.train, tuned and tuned.train, 1)]
        lines.append(f"| {name} | {mode} | {s.first_epoch:,.0f} | {s.train:,.0f} | {' | '.join(ratios)} "
                     f"| {s.inference:,.0f} | {_x(s.inference, base and base.inference)} |")
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
    parser.add_argument("--modes", nargs="+", default=list(MODES), choices=list(MODES), help="transformer modes (--encoder trf)")
    parser.add_argument("--no-torch-loop", action="store_true", help="skip the plain torch loop (--encoder trf)")
    args = parser.parse_args()
    if args.gpu_id >= 0:
        spacy.require_gpu(args.gpu_id)
    nlp = spacy.blank("en")
    train_examples = list(Corpus(str(args.train))(nlp))[: args.n_train]
    test_docs = [eg.predicted for eg in Corpus(str(args.test))(nlp)]
    test_docs = test_docs[: args.n_test] if args.n_test else test_docs
    modes = {m: MODES[m] for m in args.modes} if args.encoder == "trf" else {"fine-tuned": ({}, None)}
    methods = args.methods or DEFAULT_METHODS[args.encoder]
    runs = {
        (name, mode): {} if name == TORCH_LOOP else overrides_for(name, args.encoder, args.configs, args.transformer, tok2vec)
        for mode, (tok2vec, _) in modes.items()
        for name in ([TORCH_LOOP] if args.encoder == "trf" and not args.no_torch_loop else []) + methods
    }
    rounds: Dict[tuple, List[Speed]] = {key: [] for key in runs}
    for round_ in range(args.repeat):  # interleaved rounds: a load spike hits one round of each
        for (name, mode), overrides in runs.items():
            if name == TORCH_LOOP:
                speed = torch_loop(args.transformer, modes[mode][1], train_examples, test_docs, args.epochs, args.batch_words, args.gpu_id)
            else:
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
