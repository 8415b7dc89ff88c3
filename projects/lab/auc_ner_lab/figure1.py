"""Figure 1 of the OVA-AUC paper: how confidently each OVA classifier claims its tokens.

For every token with a gold BIO label: the probability of its gold label's classifier (x)
against the highest probability among the other classifiers (y). Well-separated classifiers
put tokens in the lower right corner; the lower left (nobody claims the token) and upper right
(two classifiers claim it) are the confusion areas. One panel per trained pipeline (AUC, BCE).
"""
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

import numpy

from spacy_auc_ner.api import PathLike, bio_layout

from .plots import pyplot, save_and_close


def label_prefix(index) -> numpy.ndarray:
    """"O", "B" or "I" of each (known) BIO label index."""
    index = numpy.asarray(index)
    _, is_begin = bio_layout((int(index.max(initial=0)) + 1) // 2 * 2 + 1)
    return numpy.where(index == 0, "O", numpy.where(is_begin[index], "B", "I"))


def gold_vs_best_other(probs: numpy.ndarray, gold: numpy.ndarray) -> Tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray]:
    """(p_gold, p_best_other, gold) for the tokens whose gold label is known (gold >= 0).

    `probs`: (N, K) per-label probabilities; `gold`: (N,) label index, -1 where missing.
    """
    probs = numpy.asarray(probs, dtype="f")
    gold = numpy.asarray(gold, dtype="i")
    if probs.ndim != 2 or probs.shape[0] != gold.shape[0]:
        raise ValueError(f"gold_vs_best_other: probs {probs.shape} and gold {gold.shape} do not match")
    keep = gold >= 0
    probs, gold = probs[keep], gold[keep]
    if probs.shape[1] < 2 or not len(gold):
        return numpy.zeros(0, "f"), numpy.zeros(0, "f"), gold
    rows = numpy.arange(len(gold))
    p_gold = probs[rows, gold]
    others = probs.copy()
    others[rows, gold] = -numpy.inf
    return p_gold, others.max(axis=1), gold


def confusion_shares(p_gold: numpy.ndarray, p_other: numpy.ndarray, threshold: float = 0.5) -> Dict[str, float]:
    """Shares of tokens in each corner: correct (gold claims, no other does), unclaimed,
    contested (gold and another claim it), wrong (only another claims it)."""
    n = max(1, len(p_gold))
    g, o = p_gold >= threshold, p_other >= threshold
    return {"correct": float((g & ~o).sum() / n), "unclaimed": float((~g & ~o).sum() / n),
            "contested": float((g & o).sum() / n), "wrong": float((~g & o).sum() / n)}


def ova_token_probabilities(nlp, corpus_path: PathLike, pipe_name: str = "auc_ner") -> Tuple[numpy.ndarray, numpy.ndarray, List[str]]:
    """Per-token OVA probabilities (N, K) of the `pipe_name` component on the gold corpus at
    `corpus_path` (.spacy), the gold BIO label indices (N,) and the K column names."""
    from scipy.special import expit
    from spacy.training import Corpus, Example

    if pipe_name not in nlp.pipe_names:
        raise ValueError(f"the pipeline has no component {pipe_name!r} (it has {', '.join(nlp.pipe_names)})")
    pipe = nlp.get_pipe(pipe_name)
    scheme = getattr(pipe, "scheme", None)
    if getattr(scheme, "name", None) != "ova":
        raise ValueError(
            f"component {pipe_name!r} uses scheme {getattr(scheme, 'name', scheme)!r}; Figure 1 needs an OVA pipeline"
        )
    examples = list(Corpus(str(corpus_path))(nlp))
    docs = [eg.predicted for eg in examples]
    for name, proc in nlp.pipeline:  # run what comes before (e.g. a shared tok2vec or transformer)
        if name == pipe_name:
            break
        docs = list(proc.pipe(docs))
    probs, golds = [], []
    for start in range(0, len(docs), 256):
        batch = docs[start : start + 256]
        scores = pipe.predict(batch)
        egs = [Example(doc, eg.reference) for doc, eg in zip(batch, examples[start : start + 256])]
        golds.append(numpy.asarray(pipe.label_set.gold(egs), dtype="i"))
        probs += [numpy.asarray(expit(pipe.model.ops.to_numpy(s)), dtype="f") for s in scores]
    all_probs = numpy.concatenate(probs) if probs else numpy.zeros((0, len(pipe.columns)), "f")
    all_gold = numpy.concatenate(golds) if golds else numpy.zeros(0, "i")
    return all_probs, all_gold, list(pipe.columns)


def plot_figure1(panels: Sequence[Tuple[str, numpy.ndarray, numpy.ndarray, numpy.ndarray]], out_stem: PathLike, *,
                 max_points: int = 20000, seed: int = 0, formats: Sequence[str] = ("png", "svg")) -> List[Path]:
    """Scatter per panel (title, p_gold, p_other, gold): O, B- and I- tokens in three colours."""
    plt = pyplot()
    out_stem = Path(out_stem)
    rng = numpy.random.default_rng(seed)
    fig, axes = plt.subplots(1, len(panels), figsize=(4.4 * len(panels), 4.2), squeeze=False)
    for ax, (title, p_gold, p_other, gold) in zip(axes.flat, panels):
        idx = numpy.arange(len(gold))
        if len(idx) > max_points:
            idx = numpy.sort(rng.choice(idx, max_points, replace=False))
        kinds = label_prefix(gold[idx])
        for kind, c in (("O", "tab:gray"), ("B", "tab:blue"), ("I", "tab:orange")):
            sel = idx[kinds == kind]
            ax.scatter(p_gold[sel], p_other[sel], s=4, alpha=0.35, color=c, label=f"gold {kind}", rasterized=True)
        shares = confusion_shares(p_gold, p_other)
        ax.axhline(0.5, color="k", lw=0.5, ls=":")
        ax.axvline(0.5, color="k", lw=0.5, ls=":")
        ax.set(xlim=(-0.02, 1.02), ylim=(-0.02, 1.02), xlabel="probability of the gold label",
               ylabel="highest probability of another label")
        ax.set_title(f"{title}\n" + ", ".join(f"{k} {v:.0%}" for k, v in shares.items()), fontsize=9)
        ax.legend(loc="upper left", fontsize=7, markerscale=3)
    fig.tight_layout()
    return save_and_close(fig, out_stem.parent, out_stem.stem, formats, bbox_inches=None)


def figure1(models: Sequence[Tuple[str, PathLike]], corpus_path: PathLike, out_stem: PathLike,
            pipe_name: str = "auc_ner") -> Dict[str, Dict[str, float]]:
    """Load each (title, model path), compute its points on `corpus_path`, draw Figure 1.
    Returns the corner shares per title."""
    import spacy

    panels, shares = [], {}
    for title, model_path in models:
        nlp = spacy.load(model_path)
        probs, gold, _ = ova_token_probabilities(nlp, corpus_path, pipe_name)
        p_gold, p_other, g = gold_vs_best_other(probs, gold)
        panels.append((title, p_gold, p_other, g))
        shares[title] = confusion_shares(p_gold, p_other)
    plot_figure1(panels, out_stem)
    return shares
