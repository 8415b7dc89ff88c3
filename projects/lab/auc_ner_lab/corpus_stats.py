"""Corpus statistics as in Table I of the papers: size, B/I/O shares, sentences with an
entity, and each entity type's token share and rareness r_t = -log_b(share), counted from the
sentences' BIO labels (a token with missing entity annotation reads as O)."""
from collections import Counter
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import numpy

from spacy_auc_ner.api import DataError, Sentence

from .corpora import SPLITS, read_sentences

_SUFFIXES = (".spacy", ".tsv", ".conll", ".txt", ".iob", ".bio")


def entity_counts(sentences: Sequence[Sentence]) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """(S,) tokens and (S,) entity tokens (B or I, any type) of each sentence."""
    lengths = numpy.asarray([len(s.labels) for s in sentences], dtype="i8")
    entities = numpy.asarray([sum(lab != "O" for lab in s.labels) for s in sentences], dtype="i8")
    return lengths, entities


def split_statistics(sentences: Sequence[Sentence], base: float = 2.0) -> dict:
    """The statistics of one split."""
    if base <= 0 or base == 1:
        raise DataError(f"log base must be positive and not 1, got {base}")
    labels = [lab for s in sentences for lab in s.labels]
    prefixes = Counter(lab[0] for lab in labels)  # O, B, I
    counts = Counter(lab[2:] for lab in labels if lab != "O")  # tokens per type
    types = sorted(counts)
    type_tokens = numpy.asarray([counts[t] for t in types], dtype="f8")
    mentions = Counter(lab[2:] for lab in labels if lab[0] == "B")  # B tokens per type
    n_tokens = len(labels)
    with_entity = entity_counts(sentences)[1] > 0
    r = -numpy.log(type_tokens / n_tokens) / numpy.log(base)  # the type's self-information, as Resampled.v1 weighs it
    pct = lambda x: round(100.0 * float(x) / max(n_tokens, 1), 2)  # noqa: E731
    return {
        "sentences": len(sentences),
        "tokens": n_tokens,
        "entities": sum(mentions.values()),
        "types": types,
        "B%": pct(prefixes["B"]),
        "I%": pct(prefixes["I"]),
        "O%": pct(prefixes["O"]),
        "sent_with_entity%": round(100.0 * float(with_entity.mean()), 1) if len(with_entity) else 0.0,
        "per_type": {
            t: {"tokens": int(type_tokens[i]), "entities": mentions[t], "token%": pct(type_tokens[i]), "r": round(float(r[i]), 3)}
            for i, t in enumerate(types)
        },
    }


def find_splits(path: Path) -> Dict[str, Path]:
    """The split files of a corpus folder (train/dev/test, .spacy preferred over column
    files), or {stem: path} for a single file."""
    path = Path(path)
    if path.is_file():
        return {path.stem: path}
    if not path.is_dir():
        raise DataError(f"{path}: no such file or folder")
    files = {split: [f for f in (path / f"{split}{suffix}" for suffix in _SUFFIXES) if f.is_file()]
             for split in SPLITS}
    found = {split: existing[0] for split, existing in files.items() if existing}
    if not found:
        raise DataError(f"{path}: no train/dev/test file (.spacy, .tsv, .conll, .txt, .iob, .bio) in this folder")
    return found


def corpus_statistics(path: Path, name: Optional[str] = None, base: float = 2.0, **column_options) -> dict:
    """Statistics of every split of a corpus folder or file."""
    path = Path(path)
    splits = {s: split_statistics(read_sentences(p, **column_options), base) for s, p in find_splits(path).items()}
    return {"corpus": name or (path.name if path.is_dir() else path.stem), "path": str(path), "base": base, "splits": splits}


def to_markdown(corpora: List[dict]) -> str:
    """Two markdown tables: one row per corpus split, and one per entity type (on the train
    split, or the first split when there is none)."""
    rows = ["| corpus | split | sentences | tokens | entities | types | B % | I % | O % | sentences with entity % |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    rows += [f"| {c['corpus']} | {split} | {s['sentences']:,} | {s['tokens']:,} | {s['entities']:,} | "
             f"{len(s['types'])} | {s['B%']:.2f} | {s['I%']:.2f} | {s['O%']:.2f} | {s['sent_with_entity%']:.1f} |"
             for c in corpora for split, s in c["splits"].items()]
    base = corpora[0]["base"] if corpora else 2.0
    base_txt = "2" if base == 2 else ("e" if abs(base - numpy.e) < 1e-9 else f"{base:g}")
    rows += ["", f"| corpus | split | type | tokens | entities | token % | r_t (log{base_txt}) |",
             "|---|---|---|---:|---:|---:|---:|"]
    for c in corpora:
        split = "train" if "train" in c["splits"] else next(iter(c["splits"]))
        for t, s in c["splits"][split]["per_type"].items():
            rows.append(f"| {c['corpus']} | {split} | {t} | {s['tokens']:,} | {s['entities']:,} | {s['token%']:.2f} | {s['r']:.2f} |")
    return "\n".join(rows)
