"""Entity scores (:data:`METRICS`): spaCy's ``get_ner_prf``, the same on span boundaries alone
(how the AUC-2T paper scores CoNLL 2003 in its Table 2), and seqeval strict IOB2 on the
predicted tokens. All three score what spaCy's scorer scores: a doc without entity annotation
is left out, and a predicted entity over a token with missing gold annotation (or aligned to
no gold token) is neither right nor wrong (`scored_entities`). No score is ever None or NaN
(an undefined one is 0), so ``spacy evaluate --output`` always writes its JSON and a dev set
without entities trains without warnings.
"""
from typing import Any, Callable, Dict, Iterable, Iterator, List, Tuple

from spacy.scorer import get_ner_prf
from spacy.training import Example
from spacy.util import registry

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


def scored_entities(example: Example) -> Iterator[Tuple[Any, int, int]]:
    """``(entity, start, end)`` for each predicted entity that spaCy's ``get_ner_prf`` scores,
    ``start:end`` its span on the reference tokens: those aligned to no reference token, or
    to a span with a token of missing gold annotation (``ent_iob == 0``), are neither right
    nor wrong and left out. The reference must have entity annotation (else spaCy skips the doc)."""
    from spacy.attrs import ENT_IOB

    annotated = example.y.to_array(ENT_IOB) != 0
    x2y = example.alignment.x2y
    for ent in example.x.ents:
        indices = x2y[ent.start : ent.end]
        if not len(indices):
            continue
        start, end = int(indices[0]), int(indices[-1]) + 1
        if annotated[start:end].all():
            yield ent, start, end


def gold_bio_tags(example: Example) -> List[str]:
    """The reference entities as IOB2 tags on the predicted tokens (misaligned or missing: O)."""
    tags = []
    for t in example.get_aligned_ner():
        if not t or t in ("O", "-"):
            tags.append("O")
        elif t[0] in "BU":
            tags.append("B" + t[1:])
        else:
            tags.append("I" + t[1:])
    return tags


def predicted_bio_tags(example: Example) -> List[str]:
    """The predicted entities as IOB2 tags, less those spaCy's scorer does not score
    (`scored_entities`): over missing gold annotation they are neither right nor wrong, so
    their tokens are O, as the gold's are there."""
    tags = ["O"] * len(example.x)
    for ent, _, _ in scored_entities(example):
        tags[ent.start : ent.end] = [f"B-{ent.label_}"] + [f"I-{ent.label_}"] * (len(ent) - 1)
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
    tp = fp = fn = 0
    for eg in examples:
        if not eg.y.has_annotation("ENT_IOB"):
            continue
        golds = {(e.start, e.end) for e in eg.y.ents}
        for _, start, end in scored_entities(eg):
            if (start, end) in golds:
                tp += 1
                golds.remove((start, end))
            else:
                fp += 1
        fn += len(golds)
    return prf("ents_untyped", tp, fp, fn)


def iob2_entities(tags: List[str]) -> List[Tuple[str, int, int]]:
    """The entities ``(type, start, end)`` of an IOB2 sequence in seqeval's strict mode: an
    entity is a B-X and the I-X that follow it; an I-X without its B-X (after O or another
    type) begins none and belongs to none. ``seqeval.scheme.Tokens(tags, IOB2).entities``
    on the same tags (tests compare the two), without seqeval, whose scikit-learn brings scipy."""
    out: List[Tuple[str, int, int]] = []
    start, kind = -1, ""
    for i, tag in enumerate([*tags, "O"]):
        if start >= 0 and not (tag[0] == "I" and tag[1:].strip("-") == kind):
            out.append((kind, start, i))
            start = -1
        if tag[0] == "B":
            start, kind = i, tag[1:].strip("-") or "_"
        elif tag[0] not in "IO":
            raise ValueError(f"not an IOB2 tag: {tag!r}")
    return out


def seqeval_scores(y_true: List[List[str]], y_pred: List[List[str]]) -> Dict[str, float]:
    """Strict IOB2 seqeval precision, recall and F1 (``mode="strict", scheme=IOB2``), micro
    and macro averaged over the types found in either side; 0 where undefined (seqeval's
    ``zero_division=0``), and macro over no type is 0, where seqeval's would be NaN."""
    true = {(s, *e) for s, tags in enumerate(y_true) for e in iob2_entities(tags)}
    pred = {(s, *e) for s, tags in enumerate(y_pred) for e in iob2_entities(tags)}
    out = {f"ents_seqeval_micro_{k[-1]}": v for k, v in prf("micro", len(true & pred), len(pred - true), len(true - pred)).items()}
    per_type = []
    for kind in sorted({e[1] for e in true | pred}):
        t, p = {e for e in true if e[1] == kind}, {e for e in pred if e[1] == kind}
        per_type.append(prf("t", len(t & p), len(p - t), len(t - p)))
    for m in "prf":
        out[f"ents_seqeval_macro_{m}"] = sum(s[f"t_{m}"] for s in per_type) / len(per_type) if per_type else 0.0
    return out


def score_entities(examples: Iterable[Example], **kwargs) -> Dict[str, Any]:
    """Every score of this module (see the module docstring) for the examples."""
    examples = list(examples)
    scores = typed_scores(examples)
    scores.update(untyped_scores(examples))
    annotated = [eg for eg in examples if eg.y.has_annotation("ENT_IOB")]  # as spaCy's get_ner_prf
    y_true = [gold_bio_tags(eg) for eg in annotated]
    y_pred = [predicted_bio_tags(eg) for eg in annotated]
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
    (ents_untyped_f) and strict-IOB2 seqeval micro and macro, all three over what spaCy's
    scorer scores (not over missing gold annotation); never None or NaN."""
    return score_entities
