"""Choosing the ``auc_ner`` pipe's ``entity_bias`` on the dev set. AUC losses rank tokens but do
not calibrate them, and a head fit to a handful of mentions leaves most unseen entity words
below the O boundary (on s800 at 20 sentences the CRF ranks them above O tokens with AUC ~0.7
yet flags fewer than 5 %). Candidates are scale-free: 0 and, per entity rate r of
:data:`DEFAULT_RATES`, the bias that flags the share r of dev tokens by their entity margin;
the best dev F1 wins, ties going to the one nearest 0.
"""
from contextlib import nullcontext
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy
from spacy.language import Language
from spacy.training import Example
from spacy.util import registry, resolve_dot_names
from thinc.api import Config

from ..data.files import is_number
from ..ml.decoding import text_arrays
from .component import AUCNER
from .scoring import METRICS, score_entities, typed_scores
from .settings import MAX_ENTITY_BIAS

# shares of dev tokens a candidate bias marks as entities (the corpora here have 5-17%)
DEFAULT_RATES = (0.002, 0.005, 0.01, 0.02, 0.03, 0.05, 0.07, 0.1, 0.15, 0.2, 0.3)


def bias_candidates(margins: numpy.ndarray, rates: Sequence[float] = DEFAULT_RATES) -> List[float]:
    """0, then for each rate r the bias b = -q + 1e-3 with q the (1 - r) quantile of the
    margins, so that about the share r of tokens has margin + b > 0; sorted by |b|,
    duplicates dropped."""
    margins = numpy.asarray(margins, dtype="float64")
    found = [0.0]
    if margins.size:
        for r in rates:
            b = float(-numpy.quantile(margins, 1.0 - r) + 1e-3)
            if abs(b) <= MAX_ENTITY_BIAS:  # finite, and one the pipe's config takes back when loaded
                found.append(round(b, 4))
    return sorted(set(found), key=lambda b: (abs(b), b))


def choose_bias(candidates: Sequence[float], score: Callable[[float], float]) -> Tuple[float, float]:
    """(best bias, its score): the first candidate with the highest score; later ones must beat it."""
    best, best_score = candidates[0], -numpy.inf
    for b in candidates:
        s = score(b)
        if s > best_score:
            best, best_score = b, s
    return best, best_score


def calibrate_entity_bias(
    pipe, examples: Sequence[Example], rates: Sequence[float] = DEFAULT_RATES, metric: str = "ents_f", pipe_config: Optional[Config] = None
) -> Dict[str, float]:
    """Set the pipe's ``entity_bias`` (`AUCNER.set_entity_bias`: in its cfg and in ``pipe_config``,
    the pipeline's config of the pipe) to the candidate with the best `metric` on `examples`
    (whose predicted docs hold what earlier pipes set); returns {"entity_bias": b, metric: score}."""
    docs = [eg.predicted.copy() for eg in examples]
    scores = pipe.predict(docs)
    if not pipe.labels or not len(scores):
        return {"entity_bias": pipe.cfg.get("entity_bias", 0.0), metric: 0.0}
    flat = pipe.model.ops.to_numpy(pipe.model.ops.flatten(list(scores)))
    margins = pipe.model.ops.to_numpy(pipe.scheme.entity_margin(flat, pipe.label_set))

    # spaCy's entity P/R/F alone when they are the metric: the full scorer's seqeval is
    # slow, and it runs once per candidate at every evaluation
    scorer = typed_scores if metric in ("ents_p", "ents_r", "ents_f") else score_entities

    text = text_arrays(docs)  # the same docs at every candidate: read their text once

    def score(bias: float) -> float:
        pipe.set_annotations(docs, scores, entity_bias=bias, text=text)
        return float(scorer([Example(d, eg.reference) for d, eg in zip(docs, examples)])[metric] or 0.0)

    best, best_score = choose_bias(bias_candidates(margins, rates), score)
    pipe.set_entity_bias(best, pipe_config)
    return {"entity_bias": float(best), metric: best_score}


@registry.callbacks("spacy_auc_ner.calibrate_entity_bias.v1")
def make_calibrate_entity_bias(
    component: str = "auc_ner",
    dev_corpus: str = "corpora.dev",
    rates: Optional[List[float]] = None,
    metric: str = "ents_f",
) -> Callable[[Language, Dict], None]:
    """A ``[training.before_update]`` callback: at every evaluation step choose `component`'s
    ``entity_bias`` on `dev_corpus` by `metric`, so that the model early stopping keeps is saved
    with the bias it was scored with (and its config.cfg names it). spaCy's loop calls the
    callback before the step's update and evaluates after it, so the bias is chosen on the
    weights one update older than those scored: on their averages when the optimizer keeps
    them (``[training] use_averages``), as spaCy evaluates and saves. `rates`: the candidate
    entity shares (null: :data:`DEFAULT_RATES`)."""
    state: Dict = {}
    check_calibration(metric, rates)

    def before_update(nlp: Language, args: Dict) -> None:
        if "examples" not in state:
            config = nlp.config.interpolate()
            state["every"] = int(config["training"]["eval_frequency"])
            if state["every"] < 1:  # the step's remainder below: one line naming the key, not a ZeroDivisionError
                raise ValueError(f"[training.eval_frequency]: must be 1 or more, not {state['every']}")
            check_component(nlp, component)
            (reader,) = resolve_dot_names(config, [dev_corpus])
            state["examples"] = list(reader(nlp))
        if args.get("step", 0) % state["every"] == 0:
            pipe = nlp.get_pipe(component)
            optimizer = getattr(pipe, "_optimizer", None)  # the one its last update used: none before the first
            averages = optimizer.averages if optimizer is not None and optimizer.averages else None
            with nlp.use_params(averages) if averages else nullcontext():
                examples = _after_earlier_pipes(nlp, component, state["examples"])
                calibrate_entity_bias(pipe, examples, rates or DEFAULT_RATES, metric, nlp.get_pipe_config(component))

    return before_update


def check_calibration(metric: str, rates: Optional[Sequence[float]]) -> None:
    """The callback's settings, when it is made: an unknown metric (or ents_per_type, a dict)
    failed with a KeyError (a TypeError) at the first evaluation, a quoted rate with a TypeError."""
    if metric not in METRICS:
        raise ValueError(f"[training.before_update.metric] unknown metric {metric!r}; choose one of {', '.join(METRICS)}")
    for r in rates or ():
        if not (is_number(r) and 0.0 < r < 1.0):
            raise ValueError(f"[training.before_update.rates] every rate must be in (0, 1), not {r!r}")


def check_component(nlp: Language, component: str) -> None:
    """The pipe the callback calibrates is an auc_ner pipe of the pipeline: spaCy's KeyError
    (no such pipe) or an AttributeError (another kind of pipe) named neither setting."""
    if component not in nlp.pipe_names or not isinstance(nlp.get_pipe(component), AUCNER):
        pipes = ", ".join(n for n in nlp.pipe_names if isinstance(nlp.get_pipe(n), AUCNER)) or "none"
        raise ValueError(f"[training.before_update.component] {component!r} is not an auc_ner pipe of the pipeline "
                         f"(its auc_ner pipes: {pipes})")


def _after_earlier_pipes(nlp: Language, component: str, examples: Iterable[Example]) -> List[Example]:
    """The examples with the pipes before `component` run on copies of their predicted docs
    (none in the shipped configs; a shared tok2vec would be, so this runs at every call)."""
    examples = list(examples)
    before = nlp.pipe_names[: nlp.pipe_names.index(component)]
    if not before:
        return examples
    docs = [eg.predicted.copy() for eg in examples]
    for name in before:
        docs = list(nlp.get_pipe(name).pipe(docs))
    return [Example(d, eg.reference) for d, eg in zip(docs, examples)]
