"""Low-resource training sets on disk: sizes x partitions drawn from one corpus, with a JSON
manifest. Partition p of size n holds exactly what its manifest entry's ``reader`` block (the
``[corpora.train]`` block of `training_set_config`: ``LowResource.v1``, or ``EntityRatio.v1``)
yields, so files and readers are interchangeable."""
from pathlib import Path
from typing import List, Optional, Sequence, Tuple

from tqdm import tqdm

from spacy_auc_ner.api import DataError, check_output_file, draw_indices, write_json, write_sentences

from .corpora import read_sentences
from .sets import training_set_config
from .store import check_not_in_store


def write_partitions(input_path: Path, output_dir: Path, sizes: Sequence[int], partitions: int = 10, seed: int = 0,
                     entity_percent: Optional[float] = None, tolerance: float = 0.1, fmt: str = "spacy",
                     overwrite: bool = False) -> dict:
    """Write ``output_dir/n{size}-p{p}.{fmt}`` and ``output_dir/manifest.json``; returns the
    manifest. No file is written over the input, nor over an existing file unless
    `overwrite`; these checks and every draw are made before anything is written."""
    input_path, output_dir = Path(input_path), Path(output_dir)
    for name in [f"n{n}-p{p}.{fmt}" for n in sizes for p in range(partitions)] + ["manifest.json"]:
        check_output_file(output_dir / name, [input_path], overwrite)
    check_not_in_store(output_dir)
    sentences = read_sentences(input_path)
    too_big = [n for n in sizes if n > len(sentences)]
    if too_big:
        raise DataError(f"{input_path}: partition size {max(too_big)} is larger than the corpus ({len(sentences)} sentences)")
    entries: List[dict] = []
    for n in sizes:
        for p in range(partitions):
            entry = {"size": n, "partition": p, "seed": seed + p, "path": f"n{n}-p{p}.{fmt}"}
            if entity_percent is None:
                entry["sentence_ids"] = draw_indices(len(sentences), n, seed + p, where=input_path)
                entry["reader"] = training_set_config("lowres", n, None, seed + p, path=str(input_path))
            else:
                reader = {**training_set_config("imbalance", n, entity_percent / 100.0, seed + p, path=str(input_path)), "tolerance": tolerance}
                ids, reached = entity_ratio_draw(reader)
                entry["sentence_ids"], entry["entity_percent"], entry["reader"] = ids, round(reached, 4), reader
            entries.append(entry)
    for entry in tqdm(entries, desc="partitions", unit="file", disable=None):
        write_sentences(output_dir / entry["path"], [sentences[i] for i in entry["sentence_ids"]])
    manifest = {"source": str(input_path), "source_sentences": len(sentences), "sizes": list(sizes),
                "partitions": partitions, "seed": seed, "entity_percent": entity_percent, "files": entries}
    write_json(output_dir / "manifest.json", manifest, indent=1)
    return manifest


def entity_ratio_draw(block: dict) -> Tuple[List[int], float]:
    """The sentences an ``EntityRatio.v1`` block draws and the entity share they reach (%): the
    registered reader draws them itself (its ``indices`` and ``reached``, set by its first
    read), so a partition's file holds what its manifest's ``reader`` block yields."""
    import spacy
    from spacy.util import registry

    reader = registry.resolve({"reader": block})["reader"]
    next(iter(reader(spacy.blank("xx"))), None)
    return list(reader.indices), float(reader.reached)
