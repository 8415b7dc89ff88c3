"""How many test sentences of a corpus also occur in its training split (the same token
sequence), and how many of those carry the same labels: a training pool drawn from the
training split can so hold sentences identical to test sentences.

    python scripts/corpus_overlap.py conll2003 [--data-dir DIR] [--out docs/evidence/corpus_overlap.md]

The corpus is found as `spacy-auc-ner` finds it (`--data-dir`, `$SPACY_AUC_NER_DATA`, `assets/`,
`data/`, `shared/data` up the tree). With `--out`, a markdown table row per corpus is written
there (corpora not found are said so in the table).
"""
import argparse
from collections import Counter
from pathlib import Path
from typing import Dict, Optional, Sequence

from spacy_auc_ner.data.columns import read_columns
from spacy_auc_ner.data.corpora import locate


def overlap(train, test) -> Dict[str, int]:
    """Counts of test sentences whose tokens (and tokens with labels) occur in train; each test
    sentence counts once, repeats inside test included."""
    train_tokens = {s.tokens for s in train}
    train_labelled = {(s.tokens, s.labels) for s in train}
    return {
        "test": len(test),
        "in_train": sum(s.tokens in train_tokens for s in test),
        "in_train_same_labels": sum((s.tokens, s.labels) in train_labelled for s in test),
        "in_train_with_entity": sum(s.tokens in train_tokens and any(l != "O" for l in s.labels) for s in test),
        "distinct_in_train": len({s.tokens for s in test} & train_tokens),
        "train": len(train),
    }


def table(corpora: Sequence[str], data_dir: Optional[Path] = None) -> str:
    lines = [
        "| corpus | test sentences | also in train (same tokens) | same tokens and labels | of them with an entity | distinct such sentences | train sentences |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name in corpora:
        folder = locate(name, data_dir)
        if folder is None:
            lines.append(f"| {name} | not found | – | – | – | – | – |")
            continue
        c = overlap(read_columns(folder / "train.tsv"), read_columns(folder / "test.tsv"))
        lines.append(f"| {name} | {c['test']:,} | {c['in_train']:,} | {c['in_train_same_labels']:,} | "
                     f"{c['in_train_with_entity']:,} | {c['distinct_in_train']:,} | {c['train']:,} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpora", nargs="+")
    parser.add_argument("--data-dir", type=Path)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    text = table(args.corpora, args.data_dir)
    print(text, end="")
    if args.out is not None:
        args.out.write_text(text, encoding="utf8")


if __name__ == "__main__":
    main()
