"""The ``auc_ner`` trainable pipe: glue between spaCy and the schemes, losses and decoders.

Scores are computed by the model (encoder + classifier head), the loss by a registered token
loss over the whole batch at once, and entities by a vectorised decoder. See README.md for
the settings.
"""
from itertools import islice
from typing import Callable, Dict, Iterable, List, Optional, Sequence

import numpy
from spacy.language import Language
from spacy.pipeline import TrainablePipe
from spacy.tokens import Doc, Span, SpanGroup
from spacy.training import Example, validate_examples, validate_get_examples
from spacy.vocab import Vocab
from thinc.api import Config, Model, Optimizer, set_dropout_rate
from thinc.types import Floats2d

from ..ml.crf import bio_constraints, posteriors
from ..ml.decoding import Spans, greedy_bio, two_task_spans, viterbi_bio
from ..losses import AUCMargin, CRFLoss, SoftmaxCE, TokenLoss, Truth
from ..losses.base import sigmoid
from ..schemes import LabelSet, TwoTaskScheme, entity_types_of, get_scheme
from .strategies import UpdateStrategy

DEFAULT_MODEL_CONFIG = """
[model]
@architectures = "spacy_auc_ner.TokenScorer.v1"

[model.tok2vec]
@architectures = "spacy.Tok2Vec.v2"

[model.tok2vec.embed]
@architectures = "spacy.MultiHashEmbed.v2"
width = 96
attrs = ["NORM", "PREFIX", "SUFFIX", "SHAPE"]
rows = [5000, 1000, 2500, 2500]
include_static_vectors = false

[model.tok2vec.encode]
@architectures = "spacy.MaxoutWindowEncoder.v2"
width = 96
depth = 4
window_size = 1
maxout_pieces = 3
"""
DEFAULT_MODEL = Config().from_str(DEFAULT_MODEL_CONFIG)["model"]

# Learned loss parameters on the head (AUC margin, CRF transitions), by the loss's names.
_PARAM_KEYS = {
    "a": "dam_a",
    "b": "dam_b",
    "alpha": "dam_alpha",
    "trans": "crf_trans",
    "start": "crf_start",
    "end": "crf_end",
}
DECODERS = ("greedy", "viterbi")


@Language.factory(
    "auc_ner",
    assigns=["doc.ents", "token.ent_iob", "token.ent_type"],
    default_config={
        "model": DEFAULT_MODEL,
        "scheme": "ova",
        "loss": None,
        "strategy": {"@misc": "spacy_auc_ner.AllClassifiers.v1"},
        "two_task_lambda": 100.0,
        "decoder": None,
        "threshold": 0.5,
        "spans_key": "auc_ner",
        "scorer": {"@scorers": "spacy_auc_ner.entity_scorer.v1"},
    },
    default_score_weights={"ents_f": 1.0, "ents_p": 0.0, "ents_r": 0.0, "ents_per_type": None},
)
def make_auc_ner(
    nlp: Language,
    name: str,
    model: Model[List[Doc], List[Floats2d]],
    scheme: str,
    loss: Optional[TokenLoss],
    strategy: UpdateStrategy,
    two_task_lambda: float,
    decoder: Optional[str],
    threshold: float,
    spans_key: str,
    scorer: Optional[Callable],
) -> "AUCNER":
    """Named entity recogniser trained as token classifiers with an AUC (or baseline) loss.

    scheme: "ova" (one sigmoid classifier per BIO label), "two_task" (entity-token and
        beginning-token classifiers, plus a type head on multi-type corpora), "softmax" or
        "crf" (a linear-chain CRF over BIO labels with learned transition scores).
    loss: a registered token loss; null picks the scheme's default (AUC margin for ova and
        two_task, softmax cross entropy for softmax, CRF log-likelihood for crf).
    strategy: which OVA classifiers each step trains (all, grouped, sampled).
    two_task_lambda: weight of the beginning-token loss, AUC_en + lambda AUC_be.
    decoder: "greedy" (per-token decision, BIO repair; for crf the per-token posterior) or
        "viterbi" (the best valid BIO sequence under the per-token log-scores, plus the
        transitions for crf); null picks viterbi for crf, greedy otherwise.
    threshold: two_task decision threshold on the entity and beginning probabilities.
    spans_key: doc.spans key that receives the entities with their scores.
    """
    return AUCNER(
        nlp.vocab,
        model,
        name,
        scheme=scheme,
        loss=loss,
        strategy=strategy,
        two_task_lambda=two_task_lambda,
        decoder=decoder,
        threshold=threshold,
        spans_key=spans_key,
        scorer=scorer,
    )


class AUCNER(TrainablePipe):
    def __init__(
        self,
        vocab: Vocab,
        model: Model,
        name: str = "auc_ner",
        *,
        scheme: str = "ova",
        loss: Optional[TokenLoss] = None,
        strategy: Optional[UpdateStrategy] = None,
        two_task_lambda: float = 100.0,
        decoder: Optional[str] = None,
        threshold: float = 0.5,
        spans_key: str = "auc_ner",
        scorer: Optional[Callable] = None,
    ):
        self.vocab = vocab
        self.model = model
        self.name = name
        self.scheme = get_scheme(scheme)
        if loss is None and self.scheme.name == "crf":
            loss = CRFLoss()
        elif loss is None:
            loss = SoftmaxCE() if self.scheme.multilabel is False else AUCMargin()
        loss.check_scheme(scheme, f"components.{name}.loss")
        self.loss = loss
        self.strategy = strategy if strategy is not None else UpdateStrategy()
        self.strategy.check_scheme(scheme)
        if decoder is None:
            decoder = "viterbi" if self.scheme.name == "crf" else "greedy"
        if decoder not in DECODERS:
            raise ValueError(f"[components.{name}.decoder] unknown decoder {decoder!r}; use 'greedy' or 'viterbi'")
        if two_task_lambda < 0:
            raise ValueError(f"[components.{name}.two_task_lambda] must be >= 0, not {two_task_lambda}")
        self.type_loss = SoftmaxCE()
        self.scorer = scorer
        self._optimizer: Optional[Optimizer] = None
        self.cfg: Dict = {
            "labels": [],
            "scheme": scheme,
            "two_task_lambda": float(two_task_lambda),
            "decoder": decoder,
            "threshold": float(threshold),
            "spans_key": spans_key,
            "n_updates": 0,
            "class_counts": None,
        }

    # ---- labels ---------------------------------------------------------------------
    @property
    def labels(self) -> tuple:
        return tuple(self.cfg["labels"])

    @property
    def label_data(self) -> List[str]:
        return list(self.labels)

    @property
    def label_set(self) -> LabelSet:
        cached = getattr(self, "_label_set", None)
        if cached is None or cached.types != self.labels:
            cached = self._label_set = LabelSet(self.labels)
        return cached

    @property
    def columns(self) -> List[str]:
        return self.scheme.columns(self.label_set)

    def add_label(self, label: str) -> int:
        if not isinstance(label, str):
            raise ValueError(f"[{self.name}] labels must be strings, not {label!r}")
        if label in self.labels:
            return 0
        if self.model.has_dim("nO") and self.model.get_ref("output").has_param("W"):
            raise ValueError(
                f"[{self.name}] cannot add label {label!r} after the model is initialised"
            )
        self.cfg["labels"] = sorted(set(self.labels) | {label})
        self.vocab.strings.add(label)
        return 1

    # ---- prediction -----------------------------------------------------------------
    def predict(self, docs: Iterable[Doc]) -> List[Floats2d]:
        docs = list(docs)
        if not any(len(doc) for doc in docs):
            nO = self.model.get_ref("output").get_dim("nO")
            return [self.model.ops.alloc2f(len(doc), nO) for doc in docs]
        return self.model.predict(docs)

    def decode(self, scores: List[Floats2d]) -> Spans:
        """Spans of a batch from its per-doc score arrays."""
        lengths = numpy.asarray([s.shape[0] for s in scores], dtype="i")
        ops = self.model.ops
        flat = ops.flatten(scores) if lengths.sum() else ops.alloc2f(0, len(self.columns))
        labels = self.label_set
        if self.scheme.name == "crf":
            return self._decode_crf(flat, lengths)
        if self.cfg["decoder"] == "viterbi":
            log_scores = self.scheme.bio_log_scores(flat, labels)
            return viterbi_bio(log_scores, lengths, labels.bio_type, labels.bio_begin)
        if isinstance(self.scheme, TwoTaskScheme):
            p = ops.to_numpy(sigmoid(flat[:, :2]))
            type_lp = ops.to_numpy(self.scheme.type_log_probs(flat, labels))
            return two_task_spans(p[:, 0], p[:, 1], type_lp, lengths, self.cfg["threshold"])
        probs = ops.to_numpy(self.scheme.bio_probabilities(flat, labels))
        return greedy_bio(probs, labels.bio_type, labels.bio_begin, lengths)

    def _decode_crf(self, emissions, lengths) -> Spans:
        """Viterbi path (or per-token posterior argmax) under the learned transitions; span
        scores are the mean posterior probability of the chosen labels."""
        head = self.model.get_ref("output")
        labels = self.label_set
        trans, start, end = (head.get_param(k) for k in ("crf_trans", "crf_start", "crf_end"))
        constraints = bio_constraints(labels.bio_type, labels.bio_begin)
        probs = posteriors(emissions, lengths, trans, start, end, constraints)
        if self.cfg["decoder"] == "viterbi":
            return viterbi_bio(emissions, lengths, labels.bio_type, labels.bio_begin, probs, trans, start, end)
        return greedy_bio(self.model.ops.to_numpy(probs), labels.bio_type, labels.bio_begin, lengths)

    def set_annotations(self, docs: Iterable[Doc], scores: List[Floats2d]) -> None:
        docs = list(docs)
        spans = self.decode(scores)
        types = self.labels
        key = self.cfg["spans_key"]
        by_doc: List[List[Span]] = [[] for _ in docs]
        span_scores: List[List[float]] = [[] for _ in docs]
        for d, s, e, t, sc in zip(spans.doc.tolist(), spans.start.tolist(), spans.end.tolist(), spans.type.tolist(), spans.score.tolist()):
            by_doc[d].append(Span(docs[d], s, e, label=types[t]))
            span_scores[d].append(sc)
        for doc, ents, ent_scores in zip(docs, by_doc, span_scores):
            doc.set_ents(ents, default="outside")
            group = SpanGroup(doc, name=key, spans=ents)
            group.attrs["scores"] = numpy.asarray(ent_scores, dtype="f")
            doc.spans[key] = group

    # ---- training -------------------------------------------------------------------
    def update(
        self,
        examples: Iterable[Example],
        *,
        drop: float = 0.0,
        sgd: Optional[Optimizer] = None,
        losses: Optional[Dict[str, float]] = None,
    ) -> Dict[str, float]:
        if losses is None:
            losses = {}
        losses.setdefault(self.name, 0.0)
        examples = list(examples)
        validate_examples(examples, "AUCNER.update")
        docs = [eg.predicted for eg in examples]
        if not any(len(doc) for doc in docs):
            return losses
        targets = self._targets(examples)  # once per batch, whatever the plan
        # Language.update passes sgd=None and the training loop calls finish_update after;
        # strategies with several steps per batch use the optimizer seen last.
        optimizer = sgd if sgd not in (None, False) else self._optimizer
        plan = self.strategy.plan(self.columns, self.cfg["n_updates"])
        set_dropout_rate(self.model, drop)
        for i, column_weights in enumerate(plan):
            scores, backprop = self.model.begin_update(docs)
            loss, d_scores, param_updates = self._loss(scores, targets, self.model.ops.asarray1f(column_weights))
            backprop(d_scores)
            for out, start, end in param_updates:
                self._apply_param_updates(out, start, end)
            losses[self.name] += loss
            if i < len(plan) - 1 and optimizer is not None:
                self.finish_update(optimizer)
        if sgd not in (None, False):
            self.finish_update(sgd)
        self.cfg["n_updates"] += 1
        return losses

    def get_loss(self, examples: Iterable[Example], scores: List[Floats2d]):
        """Loss and gradient of the scores of `examples` (all classifiers). Pure: the learned
        loss parameters are read, not updated."""
        examples = list(examples)
        validate_examples(examples, "AUCNER.get_loss")
        weights = self.model.ops.xp.ones(len(self.columns), dtype="f")
        loss, d_scores, _ = self._loss(scores, self._targets(examples), weights)
        return loss, d_scores

    def _targets(self, examples: Sequence[Example]):
        """(N, K) targets and (N,) mask (0 where gold is missing) of the examples' tokens."""
        gold = self.model.ops.asarray1i(self.label_set.gold(examples))
        return self.scheme.targets(gold, self.label_set, self.model.ops.xp), (gold >= 0).astype("f")

    def _loss(self, scores: List[Floats2d], targets, column_weights):
        """Loss, score gradients and the learned-parameter updates to apply, as
        (LossOutput, first column, end column) triples."""
        ops = self.model.ops
        xp = ops.xp
        lengths = ops.asarray1i([s.shape[0] for s in scores])
        flat = ops.flatten(scores)
        if xp.isnan(flat.sum()):
            raise ValueError(f"[{self.name}] NaN in the model's scores; lower the learning rate")
        Y, mask = targets
        head = self.model.get_ref("output")
        params = (
            {k: head.get_param(_PARAM_KEYS[k]) for k in self.loss.param_names}
            if self.loss.param_names
            else None
        )
        step = self.cfg["n_updates"]
        o_column = 0 if self.scheme.name != "two_task" else -1
        if isinstance(self.scheme, TwoTaskScheme):
            lam = self.cfg["two_task_lambda"]
            task_weights = xp.asarray([1.0, lam], dtype="f") * column_weights[:2]
            truth = Truth(Y[:, :2], mask, task_weights, lengths, True, _sub(params, 0, 2), o_column, step)
            out = self.loss(flat[:, :2], truth)
            d_flat = xp.zeros_like(flat)
            d_flat[:, :2] = out.d_scores
            loss = out.loss
            if flat.shape[1] > 2:
                type_mask = mask * Y[:, 0]
                type_truth = Truth(Y[:, 2:], type_mask, column_weights[2:], lengths, False, None, -1, step)
                type_out = self.type_loss(flat[:, 2:], type_truth)
                d_flat[:, 2:] = type_out.d_scores
                loss += type_out.loss
            param_updates = [(out, 0, 2)]
        else:
            truth = Truth(Y, mask, column_weights, lengths, self.scheme.multilabel, params, o_column, step)
            out = self.loss(flat, truth)
            d_flat = out.d_scores
            loss = out.loss
            param_updates = [(out, 0, flat.shape[1])]
        return float(loss), ops.unflatten(d_flat, lengths), param_updates

    def _apply_param_updates(self, out, start: int, end: int) -> None:
        head = self.model.get_ref("output")
        xp = self.model.ops.xp
        for k, grad in (out.d_params or {}).items():
            if grad.shape == head.get_param(_PARAM_KEYS[k]).shape:
                head.inc_grad(_PARAM_KEYS[k], grad)
                continue
            full = xp.zeros(head.get_dim("nO"), dtype="f")
            full[start:end] = grad
            head.inc_grad(_PARAM_KEYS[k], full)
        for k, value in (out.new_params or {}).items():
            param = head.get_param(_PARAM_KEYS[k]).copy()
            param[start:end] = value
            head.set_param(_PARAM_KEYS[k], param)

    def finish_update(self, sgd: Optimizer) -> None:
        self._optimizer = sgd
        super().finish_update(sgd)
        head = self.model.get_ref("output")
        if head.has_param("dam_alpha"):
            # projection of the ascent step onto alpha >= 0
            head.set_param("dam_alpha", self.model.ops.xp.maximum(head.get_param("dam_alpha"), 0.0))

    def initialize(
        self,
        get_examples: Callable[[], Iterable[Example]],
        *,
        nlp: Optional[Language] = None,
        labels: Optional[Sequence[str]] = None,
    ) -> None:
        validate_get_examples(get_examples, "AUCNER.initialize")
        types = list(labels) if labels is not None else entity_types_of(get_examples())
        for label in types:
            self.add_label(label)
        if not self.labels:
            raise ValueError(
                f"[{self.name}] no entity labels: the training data has no entities and no "
                "labels were given ([initialize.components.{self.name}.labels])"
            )
        doc_sample = [eg.predicted for eg in islice(get_examples(), 10)]
        if not doc_sample:
            raise ValueError(f"[{self.name}] initialize got no examples")
        head = self.model.get_ref("output")
        n_columns = len(self.columns)
        if head.has_dim("nO") and head.get_dim("nO") != n_columns:
            raise ValueError(
                f"[{self.name}] the model has nO={head.get_dim('nO')} but scheme "
                f"'{self.scheme.name}' with {len(self.labels)} types needs {n_columns}; leave nO unset"
            )
        head.set_dim("nO", n_columns)
        self.model.initialize(X=doc_sample)
        counts = numpy.zeros(n_columns, dtype="f")
        for batch in _batched(get_examples(), 256):
            gold = self.model.ops.asarray1i(self.label_set.gold(batch))
            Y = self.scheme.targets(gold, self.label_set, self.model.ops.xp)
            counts += self.model.ops.to_numpy(Y[gold >= 0].sum(axis=0))
        self.cfg["class_counts"] = counts.tolist()
        self.cfg["n_updates"] = 0
        self.loss.initialize(self.model.ops.asarray1f(counts))

    def from_bytes(self, bytes_data, *, exclude=tuple()):
        out = super().from_bytes(bytes_data, exclude=exclude)
        self._after_load()
        return out

    def from_disk(self, path, *, exclude=tuple()):
        out = super().from_disk(path, exclude=exclude)
        self._after_load()
        return out

    def _after_load(self) -> None:
        if self.cfg.get("class_counts") is not None:
            self.loss.initialize(self.model.ops.asarray1f(self.cfg["class_counts"]))


def _sub(params, start, end):
    return None if params is None else {k: v[start:end] for k, v in params.items()}


def _batched(items: Iterable, size: int):
    batch = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch
