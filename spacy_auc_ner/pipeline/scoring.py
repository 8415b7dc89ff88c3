"""Scores: spaCy's NER scorer names (ents_p/r/f, ents_per_type) plus seqeval entity F1.

seqeval runs in strict mode with the IOB2 scheme (an entity counts only when its boundaries
and type match exactly), micro and macro averaged, reported as ``ents_seqeval_*``.
"""
from typing import Any, Callable, Dict, Iterable, List

from seqeval.metrics import f1_score, precision_score, recall_score
from seqeval.scheme import IOB2
from spacy.scorer import get_ner_prf
from spacy.training import Example
from spacy.util import registry


def doc_bio_tags(doc) -> List[str]:
    return [f"{t.ent_iob_}-{t.ent_type_}" if t.ent_iob_ in ("B", "I") else "O" for t in doc]


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


def seqeval_scores(y_true: List[List[str]], y_pred: List[List[str]]) -> Dict[str, float]:
    """Strict IOB2 seqeval precision, recall and F1, micro and macro averaged."""
    out: Dict[str, float] = {}
    for avg in ("micro", "macro"):
        kw = dict(mode="strict", scheme=IOB2, average=avg, zero_division=0)
        out[f"ents_seqeval_{avg}_p"] = float(precision_score(y_true, y_pred, **kw))
        out[f"ents_seqeval_{avg}_r"] = float(recall_score(y_true, y_pred, **kw))
        out[f"ents_seqeval_{avg}_f"] = float(f1_score(y_true, y_pred, **kw))
    return out


def score_entities(examples: Iterable[Example], **kwargs) -> Dict[str, Any]:
    examples = list(examples)
    scores = get_ner_prf(examples, **kwargs)
    y_true = [gold_bio_tags(eg) for eg in examples]
    y_pred = [doc_bio_tags(eg.predicted) for eg in examples]
    if any(y_true):
        scores.update(seqeval_scores(y_true, y_pred))
    return scores


@registry.scorers("spacy_auc_ner.entity_scorer.v1")
def make_entity_scorer() -> Callable:
    """spaCy's entity P/R/F (ents_f, ents_per_type) plus strict-IOB2 seqeval micro and macro."""
    return score_entities
