"""Training sets: the reader blocks of `training_set_config`, resolved as spaCy's training loop
resolves them (``resolve_dot_names`` on ``corpora.train``) and read to the last sentence, for one
cell of every study setting, for a partition's manifest and for the papers' imbalance grid."""
from pathlib import Path

import pytest
import spacy
from spacy.tokens import Doc, DocBin
from spacy.util import resolve_dot_names
from thinc.api import Config

from auc_ner_lab.partitions import write_partitions
from auc_ner_lab.sets import dev_set_config, sample_config, training_set_config
from auc_ner_lab.settings import SETTINGS
from auc_ner_lab.spec import load_spec, parse_spec
from lab_data import shared_corpus

ROOT = Path(__file__).resolve().parents[1]
WORDS = "a b c d e f g h i j".split()
# 6 sentences with one entity token in 10 and 6 without: 4 sentences at 5 % take 2 of each
SENTENCES = [["B-X"] + ["O"] * 9] * 6 + [["O"] * 10] * 6
# one cell of every setting: its spec keys
CELLS = {
    "lowres": {"sizes": [4]},
    "imbalance": {"sizes": [4], "shares": [0.05]},
    "missing": {"sizes": [8], "mask_p": [0.9]},
    "resampling": {"sizes": [4], "resamplers": ["sCR"]},
}


def _write_corpus(folder: Path) -> Path:
    vocab = spacy.blank("en").vocab
    (folder / "toy").mkdir(parents=True)
    docs = [Doc(vocab, words=[f"{w}{i}" for w in WORDS], ents=tags) for i, tags in enumerate(SENTENCES)]
    for split in ("train", "dev", "test"):
        DocBin(docs=docs).to_disk(folder / "toy" / f"{split}.spacy")
    return folder


def _read_train(config: Config, train_path: str):
    """The cell's training examples, read the way `spacy train` reads them."""
    nlp = spacy.blank("en")
    config = Config(config).merge({"paths": {"train": train_path, "dev": train_path}})
    (reader,) = resolve_dot_names(config.interpolate(), ["corpora.train"])
    return list(reader(nlp))


def _entity_tokens(examples):
    return sum(tok.ent_iob_ != "O" for eg in examples for tok in eg.reference)


def test_every_setting_has_a_cell_here():
    assert set(CELLS) == set(SETTINGS)


@pytest.mark.parametrize("setting", sorted(CELLS))
def test_one_cell_of_every_setting_resolves_and_reads_sentences(tmp_path, setting):
    corpora = _write_corpus(tmp_path / "corpus")
    spec = parse_spec(
        {"name": "t", "setting": setting, "corpora": ["toy"], "methods": ["ce"], "partitions": 2, "seed": 4, **CELLS[setting]},
        corpora_dir=corpora, configs_dir=ROOT / "configs",
    )
    cell = spec.cells()[-1]  # partition 1: seed 5
    examples = _read_train(cell.training_config(), cell.train)
    texts = [eg.reference.text for eg in examples]
    assert texts and all(t.split()[0].startswith("a") for t in texts)
    if setting == "lowres":
        assert len(texts) == len(set(texts)) == 4
    elif setting == "imbalance":
        assert len(texts) == 4 and _entity_tokens(examples) == 2  # 2 of 40 tokens: 5 %
    elif setting == "missing":
        drawn = _read_train(Config(cell.training_config()).merge({"corpora": {"train": cell.overrides["corpora.train"]["corpus"]}}), cell.train)
        assert [eg.reference.text for eg in drawn] == texts  # the same 8 sentences, entities hidden
        assert _entity_tokens(examples) < _entity_tokens(drawn)
    else:  # sCR: f = 1 + ceil(sqrt(r c)) > 1 for a sentence with an entity, 1 without
        assert len(set(texts)) == 4 and len(texts) > 4
        assert all(texts.count(t) > 1 for t in set(texts) if t.endswith(tuple(f"j{i}" for i in range(6))))


def test_paper_imbalance_cells_resolve_their_readers(tmp_path):
    """The bug of the first imbalance spec (a `ratio` key the reader does not take) fails here."""
    corpora = _write_corpus(tmp_path / "corpus")
    spec = load_spec(ROOT / "studies" / "paper_imbalance.yaml", corpora_dir=corpora, configs_dir=ROOT / "configs",
                     set_values=["corpora=[toy]", "sizes=[4]", "shares=[0.05]", "partitions=1"])
    for cell in spec.cells():
        train = cell.overrides["corpora.train"]
        assert train["@readers"] == "spacy_auc_ner.EntityRatio.v1" and train["percent"] == 5.0
        examples = _read_train(cell.training_config(), cell.train)
        assert len(examples) == 4 and _entity_tokens(examples) == 2


@pytest.mark.slow
def test_paper_imbalance_share_on_ncbi_disease():
    """The grid's smallest share on a real corpus: 100 NCBI-disease sentences, 1 % entity tokens."""
    train = shared_corpus("ncbi_disease") / "train.tsv"
    spec = load_spec(ROOT / "studies" / "paper_imbalance.yaml", configs_dir=ROOT / "configs",
                     set_values=["sizes=[100]", "shares=[0.01]", "partitions=1", "methods=[ce]"], only_corpora=["ncbi_disease"])
    (cell,) = spec.cells()
    examples = _read_train(cell.training_config(), str(train))
    n_tokens = sum(len(eg.reference) for eg in examples)
    assert len(examples) == 100 and abs(100 * _entity_tokens(examples) / n_tokens - 1.0) <= 0.1


def test_partition_manifest_readers_read_the_partition_files(tmp_path):
    corpora = _write_corpus(tmp_path / "corpus")
    train = corpora / "toy" / "train.spacy"
    nlp = spacy.blank("en")
    for percent in (None, 5.0):
        out = tmp_path / f"parts{percent}"
        manifest = write_partitions(train, out, [4], partitions=2, seed=3, entity_percent=percent)
        for entry in manifest["files"]:
            config = Config({"corpora": {"train": entry["reader"]}})
            (reader,) = resolve_dot_names(config, ["corpora.train"])
            from_reader = [[t.text for t in eg.reference] for eg in reader(nlp)]
            from_file = [[t.text for t in doc] for doc in DocBin().from_disk(out / entry["path"]).get_docs(nlp.vocab)]
            assert from_reader == from_file and len(from_file) == 4


def test_training_set_config_per_setting():
    low = training_set_config("lowres", 50, None, 3)
    assert low == {"@readers": "spacy_auc_ner.LowResource.v1", "path": "${paths.train}", "n": 50, "seed": 3}
    assert training_set_config("lowres", None, None, 3) == {"@readers": "spacy.Corpus.v1", "path": "${paths.train}"}
    imb = training_set_config("imbalance", 100, 0.07, 1)
    assert imb == {"@readers": "spacy_auc_ner.EntityRatio.v1", "path": "${paths.train}", "n": 100, "percent": 7.0, "seed": 1}
    miss = training_set_config("missing", None, 0.3, 2)
    assert miss == {"@readers": "spacy_auc_ner.MaskedEntities.v1", "p": 0.3, "seed": 2,
                    "corpus": {"@readers": "spacy.Corpus.v1", "path": "${paths.train}"}}
    res = training_set_config("resampling", 50, "sCR", 0)
    assert res == {"@readers": "spacy_auc_ner.Resampled.v1", "method": "sCR", "corpus": {**low, "seed": 0}}
    assert training_set_config("resampling", 50, "none", 3) == low
    assert training_set_config("lowres", 5, None, 0, path="x.spacy")["path"] == "x.spacy"
    assert dev_set_config(None, 0) is None and dev_set_config(7, 0) == sample_config("${paths.dev}", 7, 0)
    with pytest.raises(ValueError, match="unknown setting 'weird'"):
        training_set_config("weird", 5, None, 0)
    with pytest.raises(ValueError, match="imbalance setting draws a number of sentences"):
        training_set_config("imbalance", None, 0.1, 0)
