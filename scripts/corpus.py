"""The main job's corpus: `<corpus>/{train,dev,test}.tsv` (token<TAB>BIO) from the first folder
that holds all three, else the original files that project.yml lists as weasel assets,
fetched by `spacy project assets` (which checks their md5); written as .spacy, and compared
with the reference copy of a known corpus (the sha256 of `spacy_auc_ner.data.corpora.CORPORA`,
the table the lab's `corpus get` checks too).

    python scripts/corpus.py NAME OUT_DIR [--data-dir DIR]

Folders searched, in order (`spacy_auc_ner.data.corpora.data_dirs`, shared with the lab): DIR
(default assets/, where the assets land), $SPACY_AUC_NER_DATA, assets/, data/ and
../shared/data of the working folder.
"""
import argparse
import sys
from pathlib import Path

import srsly

from spacy_auc_ner.data.columns import DataError, read_columns, write_sentences
from spacy_auc_ner.data.corpora import CORPORA, SPLITS, data_dirs, locate_corpus

PROJECT = Path(__file__).resolve().parents[1]


def assets_of(name: str):
    """project.yml's assets of the corpus, by dest (relative to the project)."""
    assets = srsly.read_yaml(PROJECT / "project.yml").get("assets", [])
    return {a["dest"]: a for a in assets if Path(a["dest"]).parent.name == name}


def main(name: str, out_dir: Path, data_dir: Path) -> None:
    assets = assets_of(name)
    local = locate_corpus(name, data_dir)
    if local is None and assets:
        from weasel.cli.assets import project_assets

        # the project's assets (the corpora other than the default are marked extra)
        project_assets(PROJECT, extra=any(a.get("extra") for a in assets.values()))
        local = locate_corpus(name, PROJECT / "assets")
    if local is None:
        tried = ", ".join(map(str, data_dirs(data_dir)))
        fetch = "; the download failed (above)" if assets else f"; project.yml lists no download of {name!r}"
        raise DataError(f"{name}: no folder holds {name}/{{train,dev,test}}.tsv (searched {tried}){fetch}")
    source = CORPORA.get(name)
    splits = {split: read_columns(local / f"{split}.tsv", scheme="bio", untyped_type=source.untyped_type if source else None) for split in SPLITS}
    for split, sentences in splits.items():
        n = write_sentences(out_dir / f"{split}.spacy", sentences)
        print(f"{name}/{split}: {n} sentences from {local / f'{split}.tsv'}", file=sys.stderr)
    for difference in source.differences(splits) if source else []:
        print(f"Warning: {difference} ({local})", file=sys.stderr)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("name")
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--data-dir", type=Path, default=Path("assets"))
    args = parser.parse_args()
    try:
        main(args.name, args.out_dir, args.data_dir)
    except (DataError, OSError) as err:
        sys.exit(f"Error: {err}")
