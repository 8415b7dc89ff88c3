"""Corpus statistics as in Table I of the papers: size, B/I/O shares, sentences with an
entity, and each entity type's token share and rareness r_t = -log_b(share)."""
from pathlib import Path
from typing import Dict, List, Optional, Sequence

import numpy

from spacy_auc_ner.api import PREFIX_B, PREFIX_I, PREFIX_O, DataError, EntityArrays, Sentence, rareness

from .corpora import SPLITS, read_sentences

_SUFFIXES = (".spacy", ".tsv", ".conll", ".txt", ".iob", ".bio")



def entity_arrays(sentences: Sequence[Sentence]) -> EntityArrays:
    """The library's gold arrays (`EntityArrays.from_docs`) made from BIO label strings."""
    labels = [lab for s in sentences for lab in s.labels]
    types = sorted({lab[2:] for lab in labels if lab != "O"})
    index = {t: i for i, t in enumerate(types)}
    codes = {"O": PREFIX_O, "B": PREFIX_B, "I": PREFIX_I}
    prefix = numpy.fromiter((codes[lab[0]] for lab in labels), dtype="i8", count=len(labels))
    type_index = numpy.fromiter((index[lab[2:]] if lab != "O" else -1 for lab in labels), dtype="i8", count=len(labels))
    lengths = numpy.asarray([len(s.labels) for s in sentences], dtype="i8")
    return EntityArrays(lengths, prefix, type_index, types)


def split_statistics(sentences: Sequence[Sentence], base: float = 2.0) -> dict:
    """The statistics of one split."""
    gold = entity_arrays(sentences)
    prefix, types = gold.prefix, gold.types
    n_tokens = int(gold.lengths.sum())
    with_entity = gold.entity_tokens() > 0
    type_tokens = gold.type_tokens()
    mentions = numpy.bincount(gold.type_index[prefix == PREFIX_B], minlength=len(types))  # B tokens per type
    r = rareness(type_tokens, n_tokens, base) if types else numpy.zeros(0)
    pct = lambda x: round(100.0 * float(x) / max(n_tokens, 1), 2)  # noqa: E731
    return {
        "sentences": len(sentences),
        "tokens": n_tokens,
        "entities": int(mentions.sum()),
        "types": types,
        "B%": pct((prefix == PREFIX_B).sum()),
        "I%": pct((prefix == PREFIX_I).sum()),
        "O%": pct((prefix == PREFIX_O).sum()),
        "sent_with_entity%": round(100.0 * float(with_entity.mean()), 1) if len(with_entity) else 0.0,
        "per_type": {
            t: {"tokens": int(type_tokens[i]), "entities": int(mentions[i]), "token%": pct(type_tokens[i]), "r": round(float(r[i]), 3)}
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
    found = {}
    for split in SPLITS:
        for suffix in _SUFFIXES:
            if (path / f"{split}{suffix}").is_file():
                found[split] = path / f"{split}{suffix}"
                break
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
    rows = [
        "| corpus | split | sentences | tokens | entities | types | B % | I % | O % | sentences with entity % |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for c in corpora:
        for split, s in c["splits"].items():
            rows.append(
                f"| {c['corpus']} | {split} | {s['sentences']:,} | {s['tokens']:,} | {s['entities']:,} | {len(s['types'])} | "
                f"{s['B%']:.2f} | {s['I%']:.2f} | {s['O%']:.2f} | {s['sent_with_entity%']:.1f} |"
            )
    base = corpora[0]["base"] if corpora else 2.0
    base_txt = "2" if base == 2 else ("e" if abs(base - numpy.e) < 1e-9 else f"{base:g}")
    rows += [
        "",
        f"| corpus | split | type | tokens | entities | token % | r_t (log{base_txt}) |",
        "|---|---|---|---:|---:|---:|---:|",
    ]
    for c in corpora:
        split = "train" if "train" in c["splits"] else next(iter(c["splits"]))
        for t, s in c["splits"][split]["per_type"].items():
            rows.append(f"| {c['corpus']} | {split} | {t} | {s['tokens']:,} | {s['entities']:,} | {s['token%']:.2f} | {s['r']:.2f} |")
    return "\n".join(rows)
