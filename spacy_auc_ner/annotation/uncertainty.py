"""How unsure a pipeline's recogniser is about each sentence, with its entities set on the Docs
(the pre-annotations). ``auc_ner``: from the scores of one prediction, through the scheme
(:meth:`~spacy_auc_ner.schemes.Scheme.label_distribution` and ``best_path_log_prob``; the
CRF's marginals and Viterbi path, the other schemes' per-token distributions), entity bias
included as its decoding includes it. spaCy's ``ner``: from beam search, as self-training's
confidences (:mod:`spacy_auc_ner.training.confidences`): MNLP from the best parse's share of the
beam's probability, entropy from the per-token labels of the beam's parses weighted by theirs.
A sentence without tokens scores as certain (MNLP 0, entropy 0): it has nothing to annotate.

Only the docs' tokens are read, into new Docs: their own annotation is neither changed nor seen
(spaCy's ner keeps entities already set, so a simulation's gold entities would leak into it).
"""
import sys
from typing import List, Optional, Sequence, Tuple

import numpy
from spacy.language import Language
from spacy.tokens import Doc
from tqdm import tqdm

from ..data.columns import tokens_only
from ..data.files import DataError
from ..pipeline.component import AUCNER
from ..training.confidences import beam_width_error, find_recognizer, pipe_factories
from .selection import mnlp, parse_marginals, sentence_means, token_entropy

SCORED = ("mnlp", "entropy")  # the strategies that read the model's uncertainty


def recognizer(nlp: Language, component: Optional[str] = None, where: str = "the pipeline") -> str:
    """The pipe whose entities and uncertainty are read: ``component``, else the last auc_ner or ner."""
    factories = pipe_factories(nlp)
    if component is not None and component not in factories:
        raise DataError(f"--component: {where} has no pipe {component!r} (it has {', '.join(factories) or 'no pipes'})")
    if component is not None and factories[component] not in ("auc_ner", "ner", "beam_ner"):
        raise DataError(f"--component: pipe {component!r} of {where} is a {factories[component]!r}, neither an auc_ner nor a spaCy ner pipe")
    return find_recognizer(factories, component, where)


def annotate(nlp: Language, docs: Sequence[Doc], component: Optional[str] = None, batch_size: int = 256) -> List[Doc]:
    """New docs of the tokens of ``docs`` with the recogniser's entities (the pipes after it are not run)."""
    name = recognizer(nlp, component)
    with nlp.select_pipes(enable=nlp.pipe_names[: nlp.pipe_names.index(name) + 1]):
        return list(nlp.pipe((tokens_only(d, nlp.vocab) for d in docs), batch_size=batch_size))


def sentence_uncertainty(
    nlp: Language,
    docs: Sequence[Doc],
    strategy: str,
    component: Optional[str] = None,
    beam_width: int = 16,
    batch_size: int = 256,
    progress: bool = True,
) -> Tuple[List[Doc], numpy.ndarray]:
    """New docs of the tokens of ``docs`` with the recogniser's entities, and each one's ``strategy`` score (``mnlp``:
    best-sequence log-probability per token; ``entropy``: mean token-label entropy in nats)."""
    if strategy not in SCORED:
        raise DataError(f"--strategy: {strategy!r} reads no uncertainty of the model; choose one of {', '.join(SCORED)}")
    if beam_width_error(beam_width):
        raise DataError(f"--beam-width: {beam_width_error(beam_width)}, not {beam_width!r}")
    name = recognizer(nlp, component)
    pipe = nlp.get_pipe(name)
    before = nlp.pipe_names[: nlp.pipe_names.index(name)]
    out: List[Doc] = []
    scores: List[numpy.ndarray] = []
    bar = tqdm(total=len(docs), desc=f"scoring the pool ({strategy})", unit="sent", disable=None if progress else True, file=sys.stderr)
    for start in range(0, len(docs), batch_size):
        with nlp.select_pipes(enable=before):
            batch = list(nlp.pipe((tokens_only(d, nlp.vocab) for d in docs[start : start + batch_size]), batch_size=batch_size))
        if isinstance(pipe, AUCNER):
            scores.append(_auc_ner_scores(pipe, batch, strategy))
        else:
            scores.append(_beam_scores(pipe, batch, strategy, beam_width))
            batch = list(pipe.pipe(batch, batch_size=batch_size))  # the greedy entities, as the pipeline sets them
        out.extend(batch)
        bar.update(len(batch))
    bar.close()
    return out, numpy.concatenate(scores) if scores else numpy.zeros((0,), dtype="f8")


def _auc_ner_scores(pipe: AUCNER, batch: List[Doc], strategy: str) -> numpy.ndarray:
    """Annotate ``batch`` with ``pipe``'s entities; each doc's score from the same prediction."""
    predicted = pipe.predict(batch)
    pipe.set_annotations(batch, predicted)
    flat, lengths = pipe.flat_scores(predicted)
    to_numpy = pipe.model.ops.to_numpy
    if not numpy.isfinite(to_numpy(flat)).all():
        raise DataError(f"pipe {pipe.name!r} gives scores that are not numbers (NaN or infinite): its weights have diverged; retrain it")
    args = (flat, lengths, pipe.label_set, pipe.head_params())
    if strategy == "entropy":
        return sentence_means(token_entropy(to_numpy(pipe.scheme.label_distribution(*args))), lengths)
    keep = lengths > 0  # best_path_log_prob leaves out sentences without tokens
    out = numpy.zeros(len(batch), dtype="f8")
    out[keep] = mnlp(to_numpy(pipe.scheme.best_path_log_prob(*args)), lengths[keep])
    return out


def _beam_scores(pipe, batch: List[Doc], strategy: str, beam_width: int) -> numpy.ndarray:
    """Each doc's score from spaCy ner's beam search (module docstring)."""
    beams = pipe.beam_parse(batch, beam_width=beam_width, beam_density=0.0001)
    codes = {label: 1 + 2 * i for i, label in enumerate(pipe.labels)}  # B-label; I-label is one more
    out = numpy.zeros(len(batch), dtype="f8")
    for b, (doc, beam) in enumerate(zip(batch, beams)):
        parses = pipe.moves.get_beam_parses(beam)
        if not len(doc) or not parses:
            continue
        probs = numpy.asarray([p for p, _ in parses], dtype="f8")
        # the beam normalises over all its states; renormalised over its finished parses here
        probs = probs / probs.sum() if probs.sum() > 0 else numpy.full(len(probs), 1.0 / len(probs))
        if strategy == "mnlp":
            out[b] = mnlp(numpy.log(probs.max()), len(doc))
            continue
        labels = numpy.zeros((len(parses), len(doc)), dtype="i8")
        for p, (_, ents) in enumerate(parses):  # a loop over parses and their entities, not tokens
            for s, e, label in ents:
                code = codes.setdefault(label, 1 + 2 * len(codes))
                labels[p, s] = code
                labels[p, s + 1 : e] = code + 1
        out[b] = token_entropy(parse_marginals(labels, probs, 1 + 2 * len(codes))).mean()
    return out
