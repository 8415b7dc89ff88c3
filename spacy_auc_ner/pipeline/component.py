"""The ``auc_ner`` trainable pipe, shaped like spaCy's ``tagger``/``spancat``: ``update`` is
begin_update -> get_loss -> backprop -> finish_update, and ``get_loss`` is the one place that
turns gold into gradients. What depends on the scheme lives in :mod:`spacy_auc_ner.schemes`;
the loss's learned parameters live on the model's head; the settings are checked in :mod:`.settings`
(their meaning: docs/reference.md).
"""
import warnings
from itertools import islice
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Union

import numpy
from spacy.attrs import ENT_IOB
from spacy.language import Language
from spacy.pipeline import TrainablePipe
from spacy.tokens import Doc, Span, SpanGroup
from spacy.training import Example, validate_examples, validate_get_examples
from spacy.util import minibatch, registry
from spacy.vocab import Vocab
from thinc.api import Config, Model, Optimizer, set_dropout_rate
from thinc.types import Floats1d, Floats2d

from ..labels import LabelSet, entity_types_of
from ..losses import TokenLoss
from ..losses.base import check_setting
from ..ml.architectures import LOSS_PARAMS_ATTR
from ..ml.averages import torch_averages
from ..ml.decoding import Spans, TextArrays, fit_to_text, free_spans, text_arrays, token_mask, true_runs
from ..schemes import Scheme, Targets
from .settings import check_class_counts, check_saved, check_settings
from .strategies import UpdateStrategy

DEFAULT_MODEL_CONFIG = """
[model]
@architectures = "spacy_auc_ner.TokenScorer.v2"

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


@Language.factory(
    "auc_ner",
    assigns=["doc.ents", "token.ent_iob", "token.ent_type"],
    default_config={
        "model": DEFAULT_MODEL,
        "scheme": "ova",
        "loss": None,
        "strategy": {"@misc": "spacy_auc_ner.AllClassifiers.v1"},
        "decoder": None,
        "entity_bias": 0.0,
        "spans_key": "auc_ner",
        "scorer": {"@scorers": "spacy_auc_ner.entity_scorer.v1"},
        # as spaCy's ner (and entity_ruler's overwrite_ents = false): entities set before the
        # pipe are kept; the default also fills the config of pipelines saved without the line
        "overwrite_ents": False,
    },
    default_score_weights={"ents_f": 1.0, "ents_p": 0.0, "ents_r": 0.0, "ents_per_type": None},
)
def make_auc_ner(
    nlp: Language,
    name: str,
    model: Model[List[Doc], List[Floats2d]],
    scheme: Union[str, Scheme],
    loss: Optional[TokenLoss],
    strategy: UpdateStrategy,
    decoder: Optional[str],
    spans_key: str,
    scorer: Optional[Callable],
    entity_bias: float = 0.0,
    overwrite_ents: bool = False,
) -> "AUCNER":
    """Named entity recogniser trained as token classifiers with an AUC (or baseline) loss.
    Each setting's meaning: the settings table of docs/reference.md. Every setting is checked
    once, before training (:mod:`.settings`), and an error names its full config key; a scheme's
    name is its block with the block's defaults. ``initialize`` writes the loss and
    decoder that null picked into the pipeline's config. ``entity_bias`` shifts the decision
    boundary because AUC losses rank tokens without calibrating them. ``overwrite_ents``: the
    predicted entities replace those set before the pipe (an entity_ruler's), instead of
    giving way to them."""
    return AUCNER(
        nlp.vocab, model, name, scheme=scheme, loss=loss, strategy=strategy, decoder=decoder,
        entity_bias=entity_bias, spans_key=spans_key, scorer=scorer, overwrite_ents=overwrite_ents,
    )


class AUCNER(TrainablePipe):
    def __init__(
        self,
        vocab: Vocab,
        model: Model,
        name: str = "auc_ner",
        *,
        scheme: Union[str, Scheme] = "ova",
        loss: Optional[TokenLoss] = None,
        strategy: Optional[UpdateStrategy] = None,
        decoder: Optional[str] = None,
        entity_bias: float = 0.0,
        spans_key: str = "auc_ner",
        scorer: Optional[Callable] = None,
        overwrite_ents: bool = False,
    ):
        # every setting checked here, once (settings.py); what it makes is taken as checked below
        self.scheme, self.loss, self.strategy = check_settings(
            f"components.{name}", scheme=scheme, loss=loss, strategy=strategy, decoder=decoder,
            entity_bias=entity_bias, spans_key=spans_key, overwrite_ents=overwrite_ents,
        )
        self.vocab = vocab
        self.model = model
        self.name = name
        self.scorer = scorer
        # a setting of the config, not of cfg: cfg is saved with the weights and would win over
        # the config a pipeline is loaded with
        self.overwrite_ents = overwrite_ents
        self._optimizer: Optional[Optimizer] = None
        # what the config says; cfg holds copies (saved with the weights), which loading brings
        # back to these (`_after_load`), so that the config a pipeline is loaded with is what runs
        self._config_settings = {
            "decoder": decoder if decoder is not None else self.scheme.default_decoder,
            "entity_bias": float(entity_bias),
            "spans_key": spans_key,
        }
        self.cfg: Dict = {
            "labels": [],
            "scheme": self.scheme.name,
            **self._config_settings,
            "n_updates": 0,
            "class_counts": None,
        }

    # ---- labels ---------------------------------------------------------------------
    @property
    def labels(self) -> tuple:
        return tuple(self.cfg["labels"])

    @property
    def label_data(self) -> List[str]:
        """The entity types, as `spacy init labels` saves them for [initialize.components.*.labels]."""
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
        if not isinstance(label, str) or not label.strip():
            raise ValueError(f"[{self.name}] labels must be non-empty strings, not {label!r}")
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

    def decode(self, scores: List[Floats2d], entity_bias: Optional[float] = None) -> Spans:
        """Spans of a batch, entity columns shifted by `entity_bias` (None: ``cfg["entity_bias"]``)."""
        flat, lengths = self.flat_scores(scores, entity_bias)
        return self.scheme.decode(flat, lengths, self.label_set, self.cfg["decoder"], self.head_params())

    def flat_scores(self, scores: List[Floats2d], entity_bias: Optional[float] = None):
        """A batch's scores as the (N, K) rows the scheme decodes, entity columns shifted by
        `entity_bias` (None: ``cfg["entity_bias"]``), and the (B,) tokens per doc."""
        lengths = numpy.asarray([s.shape[0] for s in scores], dtype="i")
        ops = self.model.ops
        flat = ops.flatten(scores) if lengths.sum() else ops.alloc2f(0, len(self.columns))
        bias = self.cfg.get("entity_bias", 0.0) if entity_bias is None else entity_bias
        if bias:
            flat = flat.copy()
            flat[:, self.scheme.entity_columns(self.label_set)] += bias
        return flat, lengths

    def head_params(self) -> Optional[Dict[str, Floats2d]]:
        """The loss's learned parameters that decoding reads (a CRF's transitions), or None."""
        return self.loss.read_params(self.model.get_ref("output"))

    def set_annotations(
        self, docs: Iterable[Doc], scores: List[Floats2d], entity_bias: Optional[float] = None, text: Optional[TextArrays] = None
    ) -> None:
        """Write the decoded entities into the docs (`entity_bias`: instead of the pipe's own).
        `text`: `text_arrays(docs)` when the caller annotates the same docs many times."""
        docs = list(docs)
        spans = fit_to_text(self.decode(scores, entity_bias), *(text if text is not None else text_arrays(docs)))
        types = self.labels
        key = self.cfg["spans_key"]
        order = numpy.argsort(spans.doc, kind="stable")
        bounds = numpy.searchsorted(spans.doc[order], numpy.arange(len(docs) + 1))
        for d, doc in enumerate(docs):
            pick = order[bounds[d] : bounds[d + 1]]
            starts, ends, kinds, scores_d = spans.start[pick], spans.end[pick], spans.type[pick], spans.score[pick]
            owner = doc.spans[key].attrs.get("pipe", self.name) if key in doc.spans else self.name
            if owner != self.name:  # another pipe's entities and scores: replacing them would lose them
                raise ValueError(f"[components.{self.name}.spans_key] is {key!r}, where pipe {owner!r} keeps its entities: "
                                 "give each pipe its own spans_key")
            if not self.overwrite_ents:
                # preset entities (and blocked tokens) win, as in spaCy's ner: a prediction that
                # overlaps one is dropped; the tokens left unset become O, as spaCy's ner leaves
                # them. The entities of this pipe's own earlier pass (its span group; calibration
                # annotates the same docs once per bias) are replaced, not kept.
                earlier = {(e.start, e.end, e.label) for e in doc.spans[key]} if key in doc.spans else set()
                mine = token_mask(len(doc), [(e.start, e.end) for e in doc.ents if (e.start, e.end, e.label) in earlier])
                iob = doc.to_array(ENT_IOB)  # 0 unset, 1 I, 2 O, 3 B
                keep = free_spans(starts, ends, ((iob == 1) | (iob == 3)) & ~mine)
                starts, ends, kinds, scores_d = starts[keep], ends[keep], kinds[keep], scores_d[keep]
                unset = ((iob == 0) | mine) & ~token_mask(len(doc), zip(starts.tolist(), ends.tolist()))
            ents = [Span(doc, s, e, label=types[t]) for s, e, t in zip(starts.tolist(), ends.tolist(), kinds.tolist())]
            if self.overwrite_ents:
                doc.set_ents(ents, default="outside")
            else:
                doc.set_ents(ents, outside=[Span(doc, s, e) for s, e in true_runs(unset)], default="unmodified")
            group = SpanGroup(doc, name=key, spans=ents)
            group.attrs["scores"] = numpy.asarray(scores_d, dtype="f")
            group.attrs["pipe"] = self.name  # whose group: another pipe with the same key is refused
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
        self._warn_unknown_types(examples)
        gold = self.scheme.gold(examples, self.label_set, self.model.ops)  # once per batch, whatever the plan
        # Language.update passes sgd=None and the training loop calls finish_update after;
        # strategies with several steps per batch use the optimizer seen last.
        optimizer = sgd if sgd not in (None, False) else self._optimizer
        plan = self.strategy.plan(self.columns, self.cfg["n_updates"])
        set_dropout_rate(self.model, drop)
        for i, column_weights in enumerate(plan):
            scores, backprop = self.model.begin_update(docs)
            out, lengths = self._loss_output(examples, scores, gold, column_weights)
            # the loss's own parameters get their gradients and closed-form steps here, as
            # backprop gives the weights theirs; get_loss stays pure
            self.loss.apply_update(self.model.get_ref("output"), out)
            backprop(self.model.ops.unflatten(out.d_scores, lengths))
            losses[self.name] += float(out.loss)
            if i < len(plan) - 1 and optimizer is not None:
                self.finish_update(optimizer)
        if sgd not in (None, False):
            self.finish_update(sgd)
        self.cfg["n_updates"] += 1
        return losses

    def _warn_unknown_types(self, examples: Sequence[Example]) -> None:
        """Warn, once per type, of gold entity types the pipe has no columns for (a sourced
        pipe resumed on data with a new type: spaCy's ner would add the label; this pipe's
        columns are fixed at initialisation, so the type's tokens get no gradient)."""
        found = numpy.unique(numpy.concatenate([eg.reference.to_array("ENT_TYPE").reshape(-1) for eg in examples]))
        warned = self.__dict__.setdefault("_warned_types", set())
        # 0 is "no type"; the known hashes are the label set's, computed once
        unknown = found[(found != 0) & ~numpy.isin(found, self.label_set.type_hashes)]
        new = [self.vocab.strings[int(h)] for h in unknown if int(h) not in warned]
        if new:
            warned.update(int(h) for h in unknown)
            warnings.warn(f"[{self.name}] the training data has entity types the pipe was not initialised with "
                          f"({', '.join(sorted(new))}; it knows {', '.join(self.labels) or 'none'}): their tokens get no gradient. "
                          "Train the pipe from scratch (not sourced) to learn them")

    def get_loss(
        self,
        examples: Iterable[Example],
        scores: List[Floats2d],
        *,
        gold: Optional[Targets] = None,
        column_weights: Optional[Floats1d] = None,
    ):
        """Loss and gradient of `scores` for the examples, pure as spaCy's `get_loss` is (`update`
        hands the loss's learned parameters their steps). `gold`: targets already built (``update``
        builds them once per batch); `column_weights`: (K,) weights of the columns this step trains."""
        out, lengths = self._loss_output(examples, scores, gold, column_weights)
        return float(out.loss), self.model.ops.unflatten(out.d_scores, lengths)

    def _loss_output(self, examples, scores, gold, column_weights):
        ops = self.model.ops
        if gold is None:
            examples = list(examples)
            validate_examples(examples, "AUCNER.get_loss")
            gold = self.scheme.gold(examples, self.label_set, ops)
        weights = ops.xp.ones(len(self.columns), dtype="f") if column_weights is None else ops.asarray1f(column_weights)
        lengths = ops.asarray1i([s.shape[0] for s in scores])
        flat = ops.flatten(scores)
        if not ops.xp.isfinite(flat.sum()):  # a NaN or an inf (an inf alone sums to inf, not NaN)
            raise ValueError(f"[{self.name}] NaN or inf in the model's scores (it diverged); lower [training.optimizer.learn_rate]")
        params = self.loss.read_params(self.model.get_ref("output"))
        out = self.scheme.get_loss(self.loss, flat, gold, weights, lengths, params, self.cfg["n_updates"])
        return out, lengths

    def use_params(self, params: dict):
        """The model with the weights of `params` (spaCy evaluates and saves inside
        ``nlp.use_params(optimizer.averages)``): thinc swaps the head's, `torch_averages` a
        fine-tuned encoder's, which thinc 8.3's PyTorch shim leaves as they are. A generator, as
        ``Language.use_params`` drives each pipe's."""
        with self.model.use_params(params), torch_averages(self.model, params):
            yield

    def finish_update(self, sgd: Optimizer) -> None:
        self._optimizer = sgd
        super().finish_update(sgd)
        self.loss.finish_update(self.model.get_ref("output"))

    def initialize(
        self,
        get_examples: Callable[[], Iterable[Example]],
        *,
        nlp: Optional[Language] = None,
        labels: Optional[Sequence[str]] = None,
    ) -> None:
        """Labels from `labels` (a list, or the file `spacy init labels` writes) or else from the
        data, then the output columns and the loss's learned parameters; with no entity type at all,
        a warning (the pipeline trains and predicts no entities)."""
        validate_get_examples(get_examples, "AUCNER.initialize")
        doc_sample = [eg.predicted for eg in islice(get_examples(), 10)]
        if not doc_sample:
            raise ValueError(f"[{self.name}] initialize got no examples: the training corpus is empty (spacy.Corpus.v1 reads "
                             ".spacy files; 'spacy-auc-ner convert' makes one of a token/label column file)")
        if labels is not None:
            check_setting(
                not isinstance(labels, (str, dict)) and all(isinstance(t, str) for t in labels),
                f"initialize.components.{self.name}.labels",
                f"must be a list of entity types (as 'spacy init labels' writes it for {self.name}), not {labels!r}",
            )
            types = list(labels)
        else:
            types = entity_types_of(get_examples())
        for label in types:
            self.add_label(label)
        if not self.labels:
            warnings.warn(
                f"[{self.name}] no entity labels: the training data has no entities and "
                f"[initialize.components.{self.name}] labels gives none, so the pipeline will "
                "predict no entities"
            )
        self.strategy.check_columns(self.columns)  # a strategy's setting that the number of classifiers bounds
        head = self.model.get_ref("output")
        n_columns = len(self.columns)
        if head.has_dim("nO") and head.get_dim("nO") != n_columns:
            raise ValueError(
                f"[components.{self.name}.model.nO] is {head.get_dim('nO')} but scheme "
                f"'{self.scheme.name}' with {len(self.labels)} types needs {n_columns}; leave nO unset"
            )
        head.set_dim("nO", n_columns)
        n_loss = self.scheme.loss_columns(self.label_set)
        head.attrs[LOSS_PARAMS_ATTR] = {p.name: [list(p.shape(n_loss)), p.init] for p in self.loss.params}
        self.model.initialize(X=doc_sample)
        counts = numpy.zeros(n_columns, dtype="f")
        for batch in minibatch(get_examples(), 256):
            gold = self.scheme.gold(batch, self.label_set, self.model.ops)
            counts += self.model.ops.to_numpy((gold.Y * gold.mask[:, None]).sum(axis=0))
        self.cfg["class_counts"] = counts.tolist()
        self.cfg["n_updates"] = 0
        self.loss.initialize(self.model.ops.asarray1f(counts))
        if nlp is not None and self.name in nlp.component_names:
            self._record_defaults(nlp.get_pipe_config(self.name))

    def _record_defaults(self, config: Config) -> None:
        """Write the loss and decoder that null resolved to into the pipeline's config, so that a
        saved pipeline names them (a factory cannot: spaCy stores the config after it returns)."""
        if config.get("loss") is None:
            config["loss"] = registry.fill({"loss": dict(self.scheme.default_loss)})["loss"]
        if config.get("decoder") is None:
            config["decoder"] = self.cfg["decoder"]

    def from_bytes(self, bytes_data, *, exclude=tuple()):
        out = super().from_bytes(bytes_data, exclude=exclude)
        self._after_load(f"[components.{self.name}]")
        return out

    def from_disk(self, path, *, exclude=tuple()):
        try:
            out = super().from_disk(path, exclude=exclude)
        except ValueError as err:  # msgpack's, ujson's and thinc's words name no file
            raise ValueError(f"{path}: cannot read the saved pipe (a damaged model or cfg file, or a model config other "
                             f"than the one it was saved with): {err}") from err
        self._after_load(str(path))
        return out

    def set_entity_bias(self, bias: float, pipe_config: Optional[Config] = None) -> None:
        """Set ``entity_bias`` (as calibration chooses it) in cfg and in ``pipe_config``, the
        pipeline's config of this pipe (``nlp.get_pipe_config(name)``), so that the pipeline
        saved next names the bias it runs with. The config is where the setting lives: without
        `pipe_config` the bias holds in this process, and a saved pipeline loads with its config's."""
        self.cfg["entity_bias"] = self._config_settings["entity_bias"] = float(bias)
        if pipe_config is not None:
            pipe_config["entity_bias"] = float(bias)

    def _after_load(self, where: str) -> None:
        # the config the pipeline is loaded with wins over the copies saved in cfg: a decoder,
        # bias or spans key given to spacy.load(config=...) or edited in config.cfg is what runs
        head = self.model.get_ref("output")
        saved_columns = head.get_dim("nO") if head.has_param("W") else None
        check_saved(where, self.name, self.cfg.get("scheme"), self.scheme.name, saved_columns, self.labels, len(self.columns))
        self.cfg.update(self._config_settings)
        counts = self.cfg.get("class_counts")
        if counts is not None:
            check_class_counts(where, counts)
            self.loss.initialize(self.model.ops.asarray1f(counts))
        if not head.has_param("W"):
            return  # saved before initialisation
        n_loss = self.scheme.loss_columns(self.label_set)
        for p in self.loss.params:
            shape = p.shape(n_loss)
            if not head.has_param(p.name) or head.get_param(p.name).shape != shape:
                raise ValueError(
                    f"[components.{self.name}.loss] {self.loss.name} learns {p.name} of shape {shape}, "
                    f"which the saved model does not hold: it was trained with another loss"
                )
