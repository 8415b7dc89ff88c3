"""The main job's annotated sentences: the draw of N sentences of a corpus's training split that
``spacy_auc_ner.LowResource.v1`` takes with the seed (the user's "n annotated sentences"),
written as spaCy / Prodigy JSONL, the form an annotation tool exports.

    python scripts/draw.py TRAIN.spacy N SEED OUT.jsonl
"""
import argparse
import sys
from pathlib import Path

from spacy.vocab import Vocab

from spacy_auc_ner.data.annotation_json import doc_record, write_annotations
from spacy_auc_ner.data.columns import DataError, read_docs
from spacy_auc_ner.training.readers import draw_indices


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("train", type=Path)
    parser.add_argument("n", type=int)
    parser.add_argument("seed", type=int)
    parser.add_argument("out", type=Path)
    args = parser.parse_args(argv)
    try:
        docs = read_docs(args.train, Vocab())
        chosen = draw_indices(len(docs), args.n, args.seed, where=args.train)
        written = write_annotations(args.out, (doc_record(docs[i]) for i in chosen))
    except DataError as err:
        print(f"Error: {err}", file=sys.stderr)
        return 1
    print(f"Wrote {written} annotated sentences to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
