"""The ``suggest`` command's work: read raw text, rank its sentences by a strategy
(:mod:`.selection`) on the model's uncertainty (:mod:`.uncertainty`), and write the chosen ones
with the model's entities as pre-annotations, most worth annotating first: ``OUT.spacy``
(entities set, every other token O) and, beside it, ``OUT.jsonl`` with the same stem, one
spaCy / Prodigy record a line (``{"text", "tokens", "spans", "score", "meta"}``: what spaCy's
and Prodigy's manual NER recipes load, and what ``convert`` and ``recipe`` read back with the
same tokens). ``meta`` keeps the input line's own ``meta`` and adds the strategy, the score,
the rank and the source: the raw file, its line and its sha256.
"""
import hashlib
from pathlib import Path
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

from spacy.language import Language
from spacy.tokens import Doc, Span

from ..data.annotation_json import doc_record, write_annotations
from ..data.columns import tokens_only, write_docs
from ..data.files import DataError, PathLike
from ..outputs import check_output_file
from ..training.confidences import load_pipeline
from ..training.unlabeled import PoolText, pool_docs, read_pool_texts
from .selection import DEFAULT_MAX_SIMILARITY, DEFAULT_MIN_TOKENS, check_selection, select_sentences, token_set
from .uncertainty import annotate, recognizer, sentence_uncertainty


class Suggestion(NamedTuple):
    """A sentence to annotate: its index in the pool, the Doc with the model's entities, and its
    strategy score (None for random)."""

    pool_index: int
    doc: Doc
    score: Optional[float]


def suggest_docs(
    nlp: Optional[Language],
    docs: Sequence[Doc],
    n: int,
    strategy: str,
    *,
    seed: int = 0,
    max_similarity: float = DEFAULT_MAX_SIMILARITY,
    min_tokens: int = DEFAULT_MIN_TOKENS,
    component: Optional[str] = None,
    beam_width: int = 16,
    progress: bool = True,
) -> List[Suggestion]:
    """The ``n`` docs of the pool most worth annotating by ``strategy``, best first, with the
    model's entities (random: only the chosen docs go through the model; with ``nlp`` None,
    none does and they come back as given, since random reads no model); sentences of fewer than
    ``min_tokens`` tokens are skipped. The settings are checked here, once (`check_selection`)."""
    check_selection(strategy, n, max_similarity, seed, min_tokens)
    return _suggest_docs(nlp, docs, n, strategy, seed=seed, max_similarity=max_similarity, min_tokens=min_tokens,
                         component=component, beam_width=beam_width, progress=progress)


def _suggest_docs(nlp: Optional[Language], docs: Sequence[Doc], n: int, strategy: str, *, seed: int, max_similarity: float,
                  min_tokens: int, component: Optional[str], beam_width: int, progress: bool) -> List[Suggestion]:
    """`suggest_docs` on checked settings."""
    if nlp is None and strategy != "random":
        raise DataError(f"--strategy {strategy} ranks by a model's uncertainty: it needs the model (only random reads none)")
    if nlp is not None:
        name = recognizer(nlp, component)  # refused before any scoring
        if strategy != "random" and not nlp.get_pipe(name).labels:  # every score would be 0: a ranking of nothing
            raise DataError(f"pipe {name!r} of the pipeline has no entity labels (it was trained on no entity): "
                            f"--strategy {strategy} cannot rank by it; train on annotated entities, or use --strategy random")
    sets = [token_set(t.text for t in doc) for doc in docs]
    lengths = [len(doc) for doc in docs]
    if strategy == "random":
        chosen = select_sentences(strategy, sets, n, seed=seed, max_similarity=max_similarity, lengths=lengths, min_tokens=min_tokens)
        picked = [docs[i] for i in chosen]
        return [Suggestion(i, d, None) for i, d in zip(chosen, picked if nlp is None else annotate(nlp, picked, component))]
    annotated, scores = sentence_uncertainty(nlp, docs, strategy, component, beam_width, progress=progress)
    chosen = select_sentences(strategy, sets, n, scores, seed=seed, max_similarity=max_similarity, lengths=lengths, min_tokens=min_tokens)
    return [Suggestion(i, annotated[i], float(scores[i])) for i in chosen]


class Source(NamedTuple):
    """The raw file suggestions come from: its path, its sha256 and its texts (`PoolText`)."""

    path: str
    sha256: str
    texts: Sequence[PoolText]


def task(suggestion: Suggestion, strategy: str, rank: int, source: Optional[Source] = None) -> Dict[str, Any]:
    """The JSONL record of a suggestion (module docstring); ``rank`` 1 is the first to annotate."""
    meta: Dict[str, Any] = {}
    if source is not None:
        text = source.texts[suggestion.pool_index]
        meta = dict(text.meta) if isinstance(text.meta, dict) else {} if text.meta is None else {"input_meta": text.meta}
        meta["source"] = {"file": source.path, "line": text.line, "sha256": source.sha256}
    meta.update(strategy=strategy, score=suggestion.score, rank=rank, pool_index=suggestion.pool_index)
    return {**doc_record(suggestion.doc), "score": suggestion.score, "meta": meta}


def jsonl_path(out: PathLike) -> Path:
    """The JSONL written beside ``OUT.spacy``: the same name, suffix .jsonl."""
    return Path(out).with_suffix(".jsonl")


def write_suggestions(out: PathLike, suggestions: Sequence[Suggestion], strategy: str, source: Optional[Source] = None) -> Path:
    """Write ``out`` (.spacy) and its JSONL (:func:`jsonl_path`); returns the JSONL's path."""
    docs = []
    for s in suggestions:
        ref = tokens_only(s.doc)
        ref.set_ents([Span(ref, e.start, e.end, label=e.label_) for e in s.doc.ents], default="outside")
        docs.append(ref)
    jsonl = jsonl_path(out)
    write_annotations(jsonl, (task(s, strategy, rank, source) for rank, s in enumerate(suggestions, 1)))
    write_docs(out, docs)
    return jsonl


def file_sha256(path: PathLike) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def suggest(
    model: PathLike,
    raw: PathLike,
    out: PathLike,
    n: int = 30,
    strategy: str = "mnlp",
    *,
    seed: int = 0,
    max_similarity: float = DEFAULT_MAX_SIMILARITY,
    min_tokens: int = DEFAULT_MIN_TOKENS,
    component: Optional[str] = None,
    beam_width: int = 16,
    overwrite: bool = False,
    progress: bool = True,
) -> Tuple[List[Suggestion], int, int]:
    """Suggest the ``n`` sentences of the raw text ``raw`` (.txt, .jsonl or .spacy, as
    ``RawText.v1`` reads it) to annotate next, and write them to ``out`` (.spacy) and its
    JSONL; every input is checked, and neither output may be an input, before anything is written.
    Returns the suggestions, the number of sentences in the pool and how many of them are shorter
    than ``min_tokens`` (`shortfall` words fewer than ``n``)."""
    check_selection(strategy, n, max_similarity, seed, min_tokens)
    out = Path(out)
    if out.suffix != ".spacy":
        raise DataError(f"{out}: OUT must be a .spacy file (the JSONL goes beside it, as {jsonl_path(out).name})")
    for path in (out, jsonl_path(out)):
        check_output_file(path, [raw, model], overwrite)
    texts = read_pool_texts(raw)
    nlp = load_pipeline(model)
    docs = pool_docs(nlp, [t.item for t in texts])
    suggestions = _suggest_docs(nlp, docs, n, strategy, seed=seed, max_similarity=max_similarity, min_tokens=min_tokens,
                                component=component, beam_width=beam_width, progress=progress)
    too_short = sum(1 for doc in docs if len(doc) < min_tokens)
    if not suggestions:  # empty files, written over a previous batch with --overwrite, are no batch
        raise DataError(f"{raw}: no sentence to suggest ({shortfall(n, 0, len(docs), too_short)}); nothing written")
    write_suggestions(out, suggestions, strategy, Source(str(raw), file_sha256(raw), texts))
    return suggestions, len(docs), too_short


def shortfall(n: int, found: int, pool: int, too_short: int = 0) -> str:
    """Why ``found`` sentences of a ``pool`` were suggested instead of ``n`` ("" when all were):
    every strategy ranks the whole pool, so the guards skipped what the pool holds beyond them:
    ``too_short`` sentences below --min-tokens, the rest as near-duplicates; a guard is named
    only when it skipped some (with --max-similarity 1 and --min-tokens 1 neither does)."""
    if found >= n:
        return ""
    near = pool - too_short - found
    if not near and not too_short:
        return f"only {found}: the pool holds only {pool} sentences"
    why = [f"the --min-tokens guard skipped {too_short}" if too_short else "",
           f"the --max-similarity guard skipped {near} as near-duplicates of those suggested" if near else ""]
    return f"only {found} of the pool's {pool} sentences: " + " and ".join(w for w in why if w)
