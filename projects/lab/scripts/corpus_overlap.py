"""How many test sentences of a corpus also occur in its training split (the same token
sequence), and how many of those carry the same labels: a training pool drawn from the
training split can so hold sentences identical to test sentences.

    python scripts/corpus_overlap.py conll2003 [--data-dir DIR] [--out docs/evidence/corpus_overlap.md]

The corpus is found as `spacy-auc-ner` finds it (`--data-dir`, `$SPACY_AUC_NER_DATA`, `assets/`,
`data/`, `shared/data` up the tree). With `--out`, a markdown table row per corpus is written
there (corpora not found are said so in the table) and the counts beside it as JSON
(`--out x.md` -> `x.json`), which the evidence reads (`auc_ner_lab/evidence/caveats.py`).
"""
import argparse
from pathlib import Path
from typing import Any, Callable, Dict, Optional, Sequence

import srsly

from auc_ner_lab.corpora import locate, read_local


def overlap(train, test) -> Dict[str, int]:
    """Counts of test sentences whose tokens (and tokens with labels) occur in train, each test
    sentence once (repeats inside test included), and of train sentences equal to a test one
    (what a pool drawn from train can carry)."""
    train_tokens = {s.tokens for s in train}
    train_labelled = {(s.tokens, s.labels) for s in train}
    test_tokens = {s.tokens for s in test}
    return {
        "test": len(test),
        "in_train": sum(s.tokens in train_tokens for s in test),
        "in_train_same_labels": sum((s.tokens, s.labels) in train_labelled for s in test),
        "in_train_with_entity": sum(s.tokens in train_tokens and any(l != "O" for l in s.labels) for s in test),
        "distinct_in_train": len({s.tokens for s in test} & train_tokens),
        "train": len(train),
        "train_in_test": sum(s.tokens in test_tokens for s in train),
    }


def counts(corpora: Sequence[str], data_dir: Optional[Path] = None) -> Dict[str, Optional[Dict[str, int]]]:
    """{corpus: overlap counts, or None when the corpus is not found}."""
    out: Dict[str, Optional[Dict[str, int]]] = {}
    for name in corpora:
        folder = locate(name, data_dir)
        out[name] = None if folder is None else overlap(read_local(folder / "train.tsv", None), read_local(folder / "test.tsv", None))
    return out


def per_corpus_table(header: Sequence[str], found: Dict[str, Any], cells: Callable[[Any], Sequence[str]]) -> str:
    """A markdown table: the `header` columns after the corpus, then per corpus `cells(counts)`,
    or "not found"."""
    lines = ["| corpus | " + " | ".join(header) + " |", "|---|" + "---:|" * len(header)]
    for name, c in found.items():
        row = ["not found"] + ["–"] * (len(header) - 1) if c is None else cells(c)
        lines.append(f"| {name} | " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"


def table(found: Dict[str, Optional[Dict[str, int]]]) -> str:
    header = ["test sentences", "also in train (same tokens)", "same tokens and labels", "of them with an entity",
              "distinct such sentences", "train sentences", "train sentences equal to a test sentence"]
    keys = ["test", "in_train", "in_train_same_labels", "in_train_with_entity", "distinct_in_train", "train",
            "train_in_test"]
    return per_corpus_table(header, found, lambda c: [f"{c[k]:,}" for k in keys])


def table_command(description: str, count, write_table, argv: Optional[Sequence[str]] = None) -> None:
    """The command line of a per-corpus table script (this one, corpus_tokens.py): CORPORA
    [--data-dir DIR] [--out FILE.md]; `count(corpora, data_dir)` gives {corpus: counts or
    None}, `write_table` their markdown, printed and, with --out, written with the counts
    beside it as JSON (x.md -> x.json)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("corpora", nargs="+")
    parser.add_argument("--data-dir", type=Path)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    found = count(args.corpora, args.data_dir)
    text = write_table(found)
    print(text, end="")
    if args.out is not None:
        args.out.write_text(text, encoding="utf8")
        srsly.write_json(args.out.with_suffix(".json"), found)


def main() -> None:
    table_command(__doc__.splitlines()[0], counts, table)


if __name__ == "__main__":
    main()
