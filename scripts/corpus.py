"""The main job's corpus: `<corpus>/{train,dev,test}.tsv` (token<TAB>BIO) from the first folder
that holds all three, else the original files that project.yml lists as weasel assets,
fetched by `spacy project assets` and checked against their md5; written as .spacy.

    python scripts/corpus.py NAME OUT_DIR [--data-dir DIR]

Folders searched, in order: DIR (default assets/, where the assets land), $SPACY_AUC_NER_DATA,
data/, and shared/data here or in any parent folder (../shared/data ...).
"""
import argparse
import os
import sys
from pathlib import Path

import srsly
from weasel.util import get_checksum

from spacy_auc_ner.data.columns import DataError, read_columns, write_sentences

SPLITS = ("train", "dev", "test")
ENV_VAR = "SPACY_AUC_NER_DATA"
PROJECT = Path(__file__).resolve().parents[1]
UNTYPED = {"s800": "Species"}  # S800's original files tag bare B/I: the type they stand for


def folders(data_dir: Path, cwd: Path):
    dirs = [data_dir] + ([Path(os.environ[ENV_VAR])] if os.environ.get(ENV_VAR) else [])
    dirs += [cwd / "data"] + [p / "shared" / "data" for p in (cwd, *cwd.parents)]
    return list(dict.fromkeys(d.resolve() for d in dirs))


def assets_of(name: str):
    """project.yml's assets of the corpus, by dest (relative to the project)."""
    assets = srsly.read_yaml(PROJECT / "project.yml").get("assets", [])
    return {a["dest"]: a for a in assets if Path(a["dest"]).parent.name == name}


def locate(name: str, data_dir: Path):
    for folder in folders(data_dir, Path.cwd().resolve()):
        if all((folder / name / f"{split}.tsv").is_file() for split in SPLITS):
            return folder / name
    return None


def main(name: str, out_dir: Path, data_dir: Path) -> None:
    assets = assets_of(name)
    local = locate(name, data_dir)
    if local is None and assets:
        from weasel.cli.assets import project_assets

        # the project's assets (the corpora other than the default are marked extra)
        project_assets(PROJECT, extra=any(a.get("extra") for a in assets.values()))
        local = locate(name, PROJECT / "assets")
    if local is None:
        tried = ", ".join(map(str, folders(data_dir, Path.cwd().resolve())))
        fetch = "; the download failed (above)" if assets else f"; project.yml lists no download of {name!r}"
        raise DataError(f"{name}: no folder holds {name}/{{train,dev,test}}.tsv (searched {tried}){fetch}")
    for split in SPLITS:
        path = local / f"{split}.tsv"
        asset = assets.get(str(path.relative_to(PROJECT)) if path.is_relative_to(PROJECT) else "")
        if asset and asset.get("checksum") and get_checksum(path) != asset["checksum"]:
            print(f"Warning: {path}: md5 {get_checksum(path)} differs from project.yml's {asset['checksum']} (its original file)", file=sys.stderr)
        sentences = read_columns(path, scheme="bio", untyped_type=UNTYPED.get(name))
        n = write_sentences(out_dir / f"{split}.spacy", sentences)
        print(f"{name}/{split}: {n} sentences from {path}", file=sys.stderr)


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
