"""Write the sentences that `spacy_auc_ner.LowResource.v1` draws (n with a seed) to a .spacy
file, for the tools that read a training file rather than a reader: the recipe's self-training
adds its pseudo-labels to that file's sentences. The main job draws in its config instead.

    python scripts/draw.py TRAIN.spacy OUT.spacy --n N --seed S
"""
import argparse
from pathlib import Path

import spacy
from spacy.tokens import DocBin
from spacy.util import registry

from spacy_auc_ner.data.columns import DataError

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("train", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--n", type=int, required=True)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    try:
        reader = registry.readers.get("spacy_auc_ner.LowResource.v1")(path=str(args.train), n=args.n, seed=args.seed)
        docs = [eg.reference for eg in reader(spacy.blank("en"))]
    except (DataError, OSError) as err:
        raise SystemExit(f"Error: {err}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    DocBin(docs=docs, store_user_data=True).to_disk(args.out)
    print(f"Wrote {len(docs)} sentences to {args.out}")
