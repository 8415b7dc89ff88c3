"""The Hugging Face peer (issue 31 point 4): the cell's encoder fine-tuned with plain
``transformers``, as people fine-tune one for token classification, so that the package's
methods are measured against a real outside baseline on the same draws.

A lab method trained by a Python function (`run_cell`, named in a spec as
``runner: auc_ner_lab.hf_peer:run_cell``): ``AutoModelForTokenClassification`` on the encoder
``paths.transformer`` names (``minilm`` offline), a label on the first word piece of each word and
-100 (no loss) on the others, AdamW with a linear warm-up and linear decay, the best model by dev
entity F1. Everything else comes from the cell's config, the spec's base with the cell's
overrides, read with the keys that set every MiniLM cell of the lab (`PeerSettings`): the draw
(``[corpora.train]``, the same LowResource.v1 sentences as every method of the partition), the
dev sample (``[corpora.dev]``), the budget (steps, batch size, evaluation rhythm, patience), the
learn rate a tuning grid sets and the optimizer's other settings. Its predictions become spaCy
Docs scored by the package's scorer (`score_entities`: spaCy's P/R/F, untyped, seqeval strict
IOB2), so its rows have the keys of every other row.

What differs from spaCy's loop, on purpose (it is the plain recipe): no spaCy dropout setting (the
model's own, 0.1 for BERT-type encoders), a sentence longer than the encoder's window is cut
(words past it are predicted O; spaCy's strided spans see them), and an I- tag after O or another
type starts an entity, as conlleval and Hugging Face's pipelines read it.
"""
import math
import random
import time
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy
from thinc.api import Config

IGNORE = -100  # the label torch's cross-entropy skips: word pieces after a word's first, specials
SCHEDULE = "warmup_linear.v1"
BATCHER = "spacy.batch_by_sequence.v1"


class PeerError(ValueError):
    """A cell config the peer cannot train as every other cell; the message names the key."""


def _key(dotted: str) -> Any:
    """A setting read from the config key `dotted` (`PeerSettings.from_config`)."""
    return field(metadata={"key": dotted})


@dataclass(frozen=True)
class PeerSettings:
    """What the peer reads from a cell's (interpolated) training config, by config key."""

    encoder: str = _key("paths.transformer")
    batch_size: int = _key("training.batcher.size")  # spacy.batch_by_sequence.v1: sentences
    max_steps: int = _key("training.max_steps")  # 0: no step bound
    max_epochs: int = _key("training.max_epochs")  # 0: no epoch bound
    eval_frequency: int = _key("training.eval_frequency")  # steps
    patience: int = _key("training.patience")  # steps without a better dev score; 0: none
    learn_rate: float = _key("training.optimizer.learn_rate.initial_rate")  # the tuned peak
    warmup_steps: int = _key("training.optimizer.learn_rate.warmup_steps")
    total_steps: int = _key("training.optimizer.learn_rate.total_steps")  # linear decay to 0 there
    weight_decay: float = _key("training.optimizer.L2")  # decoupled, as Adam.v1's L2_is_weight_decay
    beta1: float = _key("training.optimizer.beta1")
    beta2: float = _key("training.optimizer.beta2")
    eps: float = _key("training.optimizer.eps")
    grad_clip: float = _key("training.optimizer.grad_clip")  # 0: none
    seed: int = _key("training.seed")
    eval_batch_size: int = _key("nlp.batch_size")

    @classmethod
    def from_config(cls, config: Config) -> "PeerSettings":
        from spacy.util import dot_to_object

        training = config["training"]
        batcher, optimizer = training["batcher"], training["optimizer"]
        rate = optimizer["learn_rate"]
        if batcher.get("@batchers") != BATCHER:
            raise PeerError(f"training.batcher: the peer batches sentences ({BATCHER}), not {batcher.get('@batchers')}")
        if not isinstance(rate, dict) or rate.get("@schedules") != SCHEDULE:
            raise PeerError(f"training.optimizer.learn_rate: the peer follows {SCHEDULE} (warm-up, then linear decay), not {rate!r}")
        if optimizer.get("L2_is_weight_decay") is False:
            raise PeerError("training.optimizer.L2_is_weight_decay: the peer's AdamW decays weights (true)")
        if training["max_steps"] <= 0 and training["max_epochs"] <= 0:
            raise PeerError("training.max_steps and training.max_epochs: the peer needs a bound (one of them > 0)")
        return cls(**{f.name: f.type(dot_to_object(config, f.metadata["key"])) for f in fields(cls)})


# ---- labels and word pieces: pure functions ------------------------------------------------
def bio_labels(types: Sequence[str]) -> List[str]:
    """The classifier's labels: O, then B- and I- of each entity type in sorted order."""
    return ["O"] + [f"{prefix}-{t}" for t in sorted(set(types)) for prefix in ("B", "I")]


def first_piece_mask(word_ids: Sequence[Optional[int]]) -> numpy.ndarray:
    """True at each word's first word piece (`word_ids`: the word of each piece, None for the
    tokenizer's special tokens)."""
    ids = numpy.array([-1 if w is None else w for w in word_ids], dtype="i8")
    previous = numpy.concatenate([[-1], ids[:-1]])
    return (ids >= 0) & (ids != previous)


def piece_labels(word_ids: Sequence[Optional[int]], word_labels: Sequence[int]) -> List[int]:
    """Each word's label on its first piece, `IGNORE` on the others and on special tokens."""
    mask = first_piece_mask(word_ids)
    ids = numpy.array([-1 if w is None else w for w in word_ids], dtype="i8")
    out = numpy.full(len(ids), IGNORE, dtype="i8")
    out[mask] = numpy.asarray(word_labels, dtype="i8")[ids[mask]]
    return out.tolist()


def word_predictions(word_ids: Sequence[Optional[int]], piece_predictions: Sequence[int], n_words: int) -> numpy.ndarray:
    """Each word's predicted label id, read on its first piece; 0 (O) for words without a piece
    (cut by the encoder's window, or empty to its tokenizer)."""
    mask = first_piece_mask(word_ids)
    ids = numpy.array([-1 if w is None else w for w in word_ids], dtype="i8")
    out = numpy.zeros(n_words, dtype="i8")
    out[ids[mask]] = numpy.asarray(piece_predictions, dtype="i8")[: len(ids)][mask]
    return out


def tagged_doc(doc, tags: Sequence[str]):
    """A copy of `doc` with the entities of IOB2 `tags` (an I- that does not continue an entity
    of its type starts one)."""
    from spacy.training import biluo_tags_to_spans, iob_to_biluo

    out = doc.copy()
    out.ents = biluo_tags_to_spans(out, iob_to_biluo(list(tags)))
    return out


# ---- training ----------------------------------------------------------------------------------
def _encode(tokenizer, docs, labels: Optional[Dict[str, int]], max_length: int) -> List[Dict[str, Any]]:
    """One feature dict per Doc: input ids, attention mask, word ids and (with `labels`) the
    first-piece labels of the Doc's gold IOB2 tags."""
    from spacy_auc_ner.api import doc_bio_tags

    features = []
    for doc in docs:
        words = [t.text for t in doc]
        enc = tokenizer(words, is_split_into_words=True, truncation=True, max_length=max_length)
        item = {"input_ids": enc["input_ids"], "attention_mask": enc["attention_mask"], "word_ids": enc.word_ids()}
        if labels is not None:
            item["labels"] = piece_labels(item["word_ids"], [labels[tag] for tag in doc_bio_tags(doc)])
        features.append(item)
    return features


def _batch(features: Sequence[Dict[str, Any]], pad_id: int, device) -> Dict[str, Any]:
    """Padded tensors of a batch of features (labels padded with `IGNORE`)."""
    import torch

    width = max(len(f["input_ids"]) for f in features)
    pad = lambda key, value: [f[key] + [value] * (width - len(f[key])) for f in features]  # noqa: E731
    out = {"input_ids": pad("input_ids", pad_id), "attention_mask": pad("attention_mask", 0)}
    if "labels" in features[0]:
        out["labels"] = pad("labels", IGNORE)
    return {k: torch.tensor(v, dtype=torch.long, device=device) for k, v in out.items()}


def predict_docs(model, tokenizer, docs, id2label: Sequence[str], settings: PeerSettings, device, max_length: int, features=None) -> List:
    """The Docs with the model's entities (copies; the inputs are untouched); `features`: the
    Docs already encoded (the dev sample, scored at every evaluation)."""
    import torch

    docs = list(docs)
    features = _encode(tokenizer, docs, None, max_length) if features is None else features
    model.eval()
    out = []
    with torch.no_grad():
        for start in range(0, len(docs), settings.eval_batch_size):
            chunk = features[start : start + settings.eval_batch_size]
            batch = _batch(chunk, tokenizer.pad_token_id, device)
            best = model(**batch).logits.argmax(-1).cpu().numpy()
            for f, row, doc in zip(chunk, best, docs[start : start + settings.eval_batch_size]):
                ids = word_predictions(f["word_ids"], row, len(doc))
                out.append(tagged_doc(doc, [id2label[i] for i in ids]))
    return out


def scored(predicted_docs, examples) -> Dict[str, Any]:
    """The package's entity scores of predicted Docs against the examples' references."""
    from spacy.training import Example

    from spacy_auc_ner.api import score_entities

    return score_entities(Example(doc, eg.reference) for doc, eg in zip(predicted_docs, examples))


def lr_factor(step: int, warmup_steps: int, total_steps: int) -> float:
    """thinc's warmup_linear.v1 as a factor of the peak rate at `step` (0-based): a linear rise
    over `warmup_steps`, then a linear fall to 0 at `total_steps`."""
    if step < warmup_steps:
        return step / max(1, warmup_steps)
    return max(0.0, (total_steps - step) / max(1, total_steps - warmup_steps))


def train_peer(settings: PeerSettings, train_examples, dev_examples, device) -> Tuple[Any, Any, List[str], Dict[str, Any]]:
    """Fine-tune the encoder on the training examples, scoring dev every `eval_frequency` steps
    as spaCy's loop does (after steps 0, f, 2f, ...; stopping after `patience` steps without a
    better dev ents_f, or after step `max_steps`, the earliest best kept; a loss that is not
    finite ends training there, the best evaluation before it kept, as spaCy's model-best; with no
    dev examples, no evaluation and the last step's model); returns the model, its tokenizer, its
    labels and what happened."""
    import torch
    from transformers import AutoModelForTokenClassification, AutoTokenizer
    from transformers.utils import logging as hf_logging

    from spacy_auc_ner.api import resolve_encoder_name

    random.seed(settings.seed)
    numpy.random.seed(settings.seed)
    torch.manual_seed(settings.seed)
    location = resolve_encoder_name(settings.encoder).location
    types = sorted({ent.label_ for eg in train_examples for ent in eg.reference.ents})
    id2label = bio_labels(types)
    label2id = {label: i for i, label in enumerate(id2label)}
    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()  # "some weights are newly initialized": the classifier, as meant
    try:
        tokenizer = AutoTokenizer.from_pretrained(location, use_fast=True)
        model = AutoModelForTokenClassification.from_pretrained(
            location, num_labels=len(id2label), id2label=dict(enumerate(id2label)), label2id=label2id
        ).to(device)
    finally:
        hf_logging.set_verbosity(verbosity)
    max_length = min(tokenizer.model_max_length, model.config.max_position_embeddings)
    features = [f for f in _encode(tokenizer, [eg.reference for eg in train_examples], label2id, max_length) if len(f["input_ids"]) > 2]
    if not features:
        raise PeerError("the training draw has no sentence with a word piece")
    decay = [p for n, p in model.named_parameters() if not n.endswith("bias") and "LayerNorm" not in n]
    rest = [p for n, p in model.named_parameters() if n.endswith("bias") or "LayerNorm" in n]
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": settings.weight_decay}, {"params": rest, "weight_decay": 0.0}],
        lr=settings.learn_rate, betas=(settings.beta1, settings.beta2), eps=settings.eps,
    )
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: lr_factor(step, settings.warmup_steps, settings.total_steps))
    dev_docs = [eg.predicted for eg in dev_examples]
    dev_features = _encode(tokenizer, dev_docs, None, max_length)
    rng = random.Random(settings.seed)
    step, epoch, updates, best_step, best_f, best_state = 0, 0, 0, 0, -1.0, None
    history: List[Dict[str, Any]] = []
    diverged: Optional[int] = None
    done = False
    while not done:
        order = list(range(len(features)))
        rng.shuffle(order)  # a new order every epoch, as spaCy's batcher
        for start in range(0, len(order), settings.batch_size):
            model.train()
            batch = _batch([features[i] for i in order[start : start + settings.batch_size]], tokenizer.pad_token_id, device)
            loss = model(**batch).loss
            if not torch.isfinite(loss):  # diverged (a learn rate too high): the best evaluation so far is the model
                diverged, done = step, True
                break
            optimizer.zero_grad()
            loss.backward()
            if settings.grad_clip > 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), settings.grad_clip)
            optimizer.step()
            schedule.step()
            updates += 1
            if dev_docs and step % settings.eval_frequency == 0:
                predicted = predict_docs(model, tokenizer, dev_docs, id2label, settings, device, max_length, dev_features)
                dev_f = float(scored(predicted, dev_examples)["ents_f"])
                history.append({"step": step, "epoch": epoch, "loss": float(loss.item()), "dev_ents_f": dev_f})
                if dev_f > best_f:
                    best_step, best_f = step, dev_f
                    best_state = {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()}
            # spaCy's stopping rules, on the 0-based step just taken: max_steps + 1 updates at most
            if (settings.patience and step - best_step >= settings.patience) or (settings.max_steps and step >= settings.max_steps):
                done = True
                break
            step += 1
        epoch += 1
        if settings.max_epochs and epoch >= settings.max_epochs:
            done = True
    if not dev_docs:  # no dev set: the last step's model, as a fine-tune without dev keeps it
        if diverged is not None:
            raise PeerError(f"the loss is not finite at step {diverged} and there is no dev set to keep an earlier model (learn rate {settings.learn_rate})")
        best_step, best_f = step, None
    elif best_state is None:
        raise PeerError(f"the loss is not finite at step {diverged}, before the first evaluation (learn rate {settings.learn_rate})")
    else:
        model.load_state_dict(best_state)
    info = {"steps": updates, "epochs": epoch, "best_step": best_step, "dev_ents_f": best_f, "evaluations": history,
            "labels": len(id2label), "max_length": max_length, "device": str(device), "diverged_at_step": diverged}
    return model, tokenizer, id2label, info


# ---- the study cell ----------------------------------------------------------------------------
def _device(gpu_id: int):
    import torch

    if gpu_id is None or gpu_id < 0:
        return torch.device("cpu")
    if not torch.cuda.is_available():
        raise PeerError(f"gpu_id {gpu_id}: torch sees no CUDA device (run on the CPU with gpu_id -1)")
    return torch.device(f"cuda:{gpu_id}")


def _examples(config: Config, dot_name: str) -> List:
    import spacy
    from spacy.util import resolve_dot_names

    (reader,) = resolve_dot_names(config, [dot_name])
    return list(reader(spacy.blank(config["nlp"]["lang"])))


def run_nodev_choice_cell(cell) -> Dict[str, Any]:
    """The peer trained as a user without a dev set trains it (``corpora.dev`` NoDev.v1: the last
    step kept), its kept model scored on test and on the lab's dev sample, which no training
    sees, as `nodev_choice.run_cell` scores the recipe's settings: the peer's budget chosen
    leaving one corpus out by the same rule (issue 64)."""
    from spacy_auc_ner.api import has_dev

    from .experiment import cell_config
    from .nodev_choice import DEV_SAMPLE, DEV_SEED
    from .sets import sample_config

    if has_dev(cell_config(cell)):
        raise PeerError(f"{cell.id}: a no-dev choice cell trains without a dev set; give corpora.dev: {{'@readers': 'spacy_auc_ner.NoDev.v1'}}")
    return run_cell(cell, dev_sample=sample_config(str(cell.dev), DEV_SAMPLE, DEV_SEED))


def run_cell(cell, dev_sample: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """Train the peer on the cell's draw and score it as `experiment.train_and_evaluate` scores
    a spaCy cell: on test (not for a tuning trial or a dev-only cell), ``dev_score`` (the best dev ents_f),
    ``dev_scores`` (every score on the dev sample, or on ``dev_sample``, a reader block, when
    given), ``train_seconds``, plus ``peer``: what the peer is and did (a row says by it that it
    is the peer)."""
    from spacy.training import Corpus

    from spacy_auc_ner.api import budgeted

    from .experiment import cell_config

    config = budgeted(cell_config(cell))[0].interpolate()
    settings = PeerSettings.from_config(config)
    device = _device(cell.gpu_id)
    train_examples, dev_examples = _examples(config, "corpora.train"), _examples(config, "corpora.dev")
    start = time.perf_counter()
    model, tokenizer, id2label, info = train_peer(settings, train_examples, dev_examples, device)
    train_seconds = time.perf_counter() - start
    max_length = info["max_length"]
    if dev_sample is not None:
        dev_examples = _examples(Config({"nlp": config["nlp"], "sample": dev_sample}).interpolate(), "sample")
    dev_predicted = predict_docs(model, tokenizer, [eg.predicted for eg in dev_examples], id2label, settings, device, max_length)
    result: Dict[str, Any] = {}
    if cell.test_split() is not None:
        import spacy

        test = list(Corpus(str(cell.test_split()))(spacy.blank(config["nlp"]["lang"])))
        begin = time.perf_counter()
        predicted = predict_docs(model, tokenizer, [eg.predicted for eg in test], id2label, settings, device, max_length)
        seconds = time.perf_counter() - begin
        result = scored(predicted, test)
        words = sum(len(doc) for doc in predicted)
        result.update(test_words=words, test_words_per_second=words / seconds if seconds > 0 else None)
    dev = scored(dev_predicted, dev_examples) if dev_examples else {}
    result.update(
        dev_score=info["dev_ents_f"],
        dev_scores={k: float(v) for k, v in dev.items() if isinstance(v, (int, float)) and not isinstance(v, bool)},
        train_seconds=train_seconds,
        peer={"library": "transformers", "model": "AutoModelForTokenClassification", "encoder": settings.encoder,
              "labels": "first word piece, -100 elsewhere", "optimizer": "AdamW, linear warm-up and decay",
              "settings": asdict(settings), **{k: v for k, v in info.items() if k != "max_length"}},
    )
    if not all(math.isfinite(v) for v in result["dev_scores"].values()):
        raise PeerError(f"a dev score is not finite: {result['dev_scores']}")
    return result

