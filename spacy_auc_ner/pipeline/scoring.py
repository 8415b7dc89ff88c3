"""Entity scores (:data:`METRICS`): spaCy's ``get_ner_prf``, the same on span boundaries alone
(how the AUC-2T paper scores CoNLL 2003 in its Table 2), and seqeval strict IOB2 on the
predicted tokens. No score is ever None or NaN (an undefined one is 0), so ``spacy evaluate
--output`` always writes its JSON and a dev set without entities trains without warnings.
"""
from typing import Any, Callable, Dict, Iterable, List

from spacy.scorer import get_ner_prf
from spacy.training import Example
from spacy.util import registry

from ..labels import doc_bio_tags

# Every scalar score of `score_entities`, with what it measures (study reports name them so).
METRICS: Dict[str, str] = {
    "ents_p": "entity precision (spaCy scorer)",
    "ents_r": "entity recall (spaCy scorer)",
    "ents_f": "entity F1 (spaCy scorer)",
    "ents_untyped_p": "entity precision without types (span boundaries only)",
    "ents_untyped_r": "entity recall without types (span boundaries only)",
    "ents_untyped_f": "entity F1 without types (span boundaries only)",
    **{
        f"ents_seqeval_{avg}_{m}": f"entity {name} (seqeval strict IOB2, {avg})"
        for avg in ("micro", "macro")
        for m, name in (("p", "precision"), ("r", "recall"), ("f", "F1"))
    },
}


def gold_bio_tags(example: Example) -> List[str]:
    """The reference entities as IOB2 tags on the predicted tokens (misaligned: O)."""
    tags = []
    for t in example.get_aligned_ner():
        if not t or t in ("O", "-"):
            tags.append("O")
        elif t[0] in "BU":
            tags.append("B" + t[1:])
        else:
            tags.append("I" + t[1:])
    return tags


def prf(prefix: str, tp: int, fp: int, fn: int) -> Dict[str, float]:
    """``{prefix}_p/r/f`` from counts; 0 where a denominator is 0."""
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return {f"{prefix}_p": p, f"{prefix}_r": r, f"{prefix}_f": f}


def typed_scores(examples: List[Example]) -> Dict[str, Any]:
    """spaCy's ents_p/r/f and ents_per_type, with 0 and {} where spaCy gives None."""
    scores = get_ner_prf(examples)
    if scores["ents_f"] is None:
        scores = {**prf("ents", 0, 0, 0), "ents_per_type": {}}
    return scores


def untyped_scores(examples: List[Example]) -> Dict[str, float]:
    """ents_untyped_p/r/f: spaCy's matching (see `get_ner_prf`) on span boundaries alone."""
    from spacy.attrs import ENT_IOB

    tp = fp = fn = 0
    for eg in examples:
        if not eg.y.has_annotation("ENT_IOB"):
            continue
        golds = {(e.start, e.end) for e in eg.y.ents}
        annotated = eg.y.to_array(ENT_IOB) != 0
        x2y = eg.alignment.x2y
        for ent in eg.x.ents:
            indices = x2y[ent.start : ent.end]
            if not len(indices):
                continue
            start, end = int(indices[0]), int(indices[-1]) + 1
            if not annotated[start:end].all():  # over missing gold: neither right nor wrong
                continue
            if (start, end) in golds:
                tp += 1
                golds.remove((start, end))
            else:
                fp += 1
        fn += len(golds)
    return prf("ents_untyped", tp, fp, fn)


def seqeval_scores(y_true: List[List[str]], y_pred: List[List[str]]) -> Dict[str, float]:
    """Strict IOB2 seqeval precision, recall and F1, micro and macro averaged; macro over no
    entity type is 0 (seqeval's own macro average would be NaN, with a numpy warning)."""
    from seqeval.metrics.v1 import precision_recall_fscore_support
    from seqeval.scheme import IOB2

    pairs = [(t, p) for t, p in zip(y_true, y_pred) if t or p]  # seqeval refuses empty input
    if not pairs:
        return {f"ents_seqeval_{avg}_{m}": 0.0 for avg in ("micro", "macro") for m in "prf"}
    y_true, y_pred = [list(t) for t, _ in pairs], [list(p) for _, p in pairs]
    out: Dict[str, float] = {}
    kw = dict(mode="strict", scheme=IOB2, zero_division=0)
    p, r, f, _ = precision_recall_fscore_support(y_true, y_pred, average="micro", **kw)
    out.update(ents_seqeval_micro_p=float(p), ents_seqeval_micro_r=float(r), ents_seqeval_micro_f=float(f))
    p, r, f, _ = precision_recall_fscore_support(y_true, y_pred, average=None, **kw)
    for name, per_type in (("p", p), ("r", r), ("f", f)):
        out[f"ents_seqeval_macro_{name}"] = float(per_type.mean()) if len(per_type) else 0.0
    return out


def score_entities(examples: Iterable[Example], **kwargs) -> Dict[str, Any]:
    """Every score of this module (see the module docstring) for the examples."""
    examples = list(examples)
    scores = typed_scores(examples)
    scores.update(untyped_scores(examples))
    y_true = [gold_bio_tags(eg) for eg in examples]
    y_pred = [doc_bio_tags(eg.predicted) for eg in examples]
    scores.update(seqeval_scores(y_true, y_pred))
    return scores


def predict(nlp, examples: Iterable[Example]) -> List[Example]:
    """The examples with the pipeline's predictions on their predicted side's tokens."""
    examples = list(examples)
    docs = nlp.pipe(eg.predicted for eg in examples)
    return [Example(doc, eg.reference) for doc, eg in zip(docs, examples)]


def dev_scores(nlp, examples: Iterable[Example]) -> Dict[str, float]:
    """Every number of `score_entities` for the pipeline's predictions on ``examples``: the
    package's one dev scorer, the same for every pipeline whatever scorer its pipes name."""
    scores = score_entities(predict(nlp, examples))
    return {k: float(v) for k, v in scores.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}


@registry.scorers("spacy_auc_ner.entity_scorer.v1")
def make_entity_scorer() -> Callable:
    """spaCy's entity P/R/F (ents_f, ents_per_type), the same without types
    (ents_untyped_f) and strict-IOB2 seqeval micro and macro; never None or NaN."""
    return score_entities
