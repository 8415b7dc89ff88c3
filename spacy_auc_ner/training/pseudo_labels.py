"""Pseudo-labels: a predicted entity is kept when its confidence (:mod:`.confidences`) reaches
the threshold. Below-threshold entities become missing annotation (the model was unsure, so
nothing is taught there), or O with ``low_confidence = "outside"``; pool sentences with no
kept entity are dropped unless ``keep_empty``, since a model that misses entities would learn
to miss them.
"""
from typing import Dict, List, Optional, Sequence, Tuple

import numpy
from spacy.language import Language
from spacy.tokens import Doc, Span

from ..data.columns import tokens_only
from .confidences import scored_entities
from .unlabeled import PoolItem, pool_docs

LOW_CONFIDENCE = ("missing", "outside")


def pseudo_label(doc: Doc, spans: Sequence[Span], scores: numpy.ndarray, threshold: float, low_confidence: str = "missing") -> Tuple[Doc, int, int]:
    """A gold-like Doc of ``doc``'s tokens: spans scoring at least ``threshold`` as entities, the
    others missing (or O with ``low_confidence = "outside"``); with the kept and dropped counts."""
    keep = numpy.asarray(scores) >= threshold
    ref = tokens_only(doc)
    kept = [Span(ref, s.start, s.end, label=s.label_) for s, k in zip(spans, keep) if k]
    dropped = [Span(ref, s.start, s.end) for s, k in zip(spans, keep) if not k]
    if low_confidence == "missing":
        ref.set_ents(kept, missing=dropped, default="outside")
    else:
        ref.set_ents(kept, default="outside")
    return ref, len(kept), len(dropped)


def label_pool(
    nlp: Language,
    items: Sequence[PoolItem],
    threshold: float,
    *,
    low_confidence: str = "missing",
    keep_empty: bool = False,
    component: Optional[str] = None,
    beam_width: int = 16,
    progress: bool = True,
) -> Tuple[List[Doc], Dict[str, int]]:
    """Pseudo-labelled Docs of the pool, and counts of its sentences and entities."""
    docs, counts = [], {"pool_sentences": len(items), "pseudo_sentences": 0, "predicted_entities": 0, "kept_entities": 0, "dropped_entities": 0}
    for doc, spans, scores in scored_entities(nlp, pool_docs(nlp, items), component, beam_width, progress=progress):
        ref, n_kept, n_dropped = pseudo_label(doc, spans, scores, threshold, low_confidence)
        counts["predicted_entities"] += len(spans)
        counts["dropped_entities"] += n_dropped
        if n_kept or keep_empty:
            docs.append(ref)
            counts["kept_entities"] += n_kept
    counts["pseudo_sentences"] = len(docs)
    return docs, counts
