"""Pretraining: the merged config names the encoder to pretrain, `spacy pretrain` runs on it,
and `spacy train` loads the weights through [initialize] init_tok2vec (which spaCy ignores
while [pretraining] is empty, the reason for the merge)."""
import json
from pathlib import Path

import pytest
import spacy
import srsly
from spacy.tokens import Doc, DocBin
from spacy.training.initialize import init_nlp
from spacy.training.pretrain import get_tok2vec_ref, pretrain
from spacy.util import load_config
from typer.testing import CliRunner

from spacy_auc_ner.cli.app import app
from spacy_auc_ner.data.columns import DataError
from spacy_auc_ner.training.pretraining import pretraining_config
from toy_data import TOY

CONFIGS = Path(__file__).parents[1] / "configs"
CHARACTERS = CONFIGS / "pretrain" / "characters.cfg"
runner = CliRunner()


@pytest.fixture
def data(tmp_path):
    vocab = spacy.blank("en").vocab
    DocBin(docs=[Doc(vocab, words=w, ents=t) for w, t in TOY]).to_disk(tmp_path / "train.spacy")
    srsly.write_jsonl(tmp_path / "raw.jsonl", [{"text": " ".join(w)} for w, _ in TOY * 4])
    return tmp_path


@pytest.mark.parametrize("base,component,layer,pipeline", [
    ("ova_auc_all", "auc_ner", "tok2vec", ["auc_ner"]),
    ("bilstm_crf", "auc_ner", "tok2vec", ["auc_ner"]),
    ("spacy_ner", "tok2vec", "", ["tok2vec", "ner"]),
])
def test_merged_config_names_the_encoder(base, component, layer, pipeline, full_configs):
    config = pretraining_config(full_configs[base], CHARACTERS)
    assert config["pretraining"]["component"] == component and config["pretraining"]["layer"] == layer
    assert config["nlp"]["pipeline"] == pipeline
    assert config["pretraining"]["objective"]["@architectures"] == "spacy.PretrainCharacters.v1"
    assert config["corpora"]["pretrain"]["path"] == "${paths.raw_text}"
    # spaCy's JsonlCorpus.v1 read nothing from a .txt file, and spacy pretrain said it succeeded
    assert config["corpora"]["pretrain"]["@readers"] == "spacy_auc_ner.RawText.v1"
    assert config["initialize"]["init_tok2vec"] == "${paths.init_tok2vec}"
    original = load_config(full_configs[base], interpolate=False)
    assert config["training"]["max_steps"] == original["training"]["max_steps"]
    if component == "tok2vec":
        # spaCy's ner: the same encoder block, moved into a tok2vec pipe the ner listens to
        assert config["components"]["tok2vec"]["model"] == original["components"]["ner"]["model"]["tok2vec"]
        assert config["components"]["ner"]["model"]["tok2vec"] == {"@architectures": "spacy.Tok2VecListener.v1", "width": 96, "upstream": "tok2vec"}


def _weights(nlp, config):
    return get_tok2vec_ref(nlp, config["pretraining"]).to_bytes()


@pytest.mark.slow
@pytest.mark.parametrize("base", ["ova_auc_all", "spacy_ner"])
def test_spacy_pretrain_then_init_tok2vec_loads_the_weights(data, base, full_configs):
    merged = data / "pretrain.cfg"
    result = runner.invoke(app, ["pretrain-config", str(full_configs[base]), str(CHARACTERS), str(merged)])
    assert result.exit_code == 0, result.output
    overrides = {"paths.raw_text": str(data / "raw.jsonl"), "pretraining.max_epochs": 1, "paths.train": str(data / "train.spacy"), "paths.dev": str(data / "train.spacy")}
    config = load_config(merged, overrides=overrides, interpolate=False)
    (data / "weights").mkdir()
    pretrain(config.interpolate(), data / "weights", silent=True)
    weights = (data / "weights" / "model-last.bin").read_bytes()
    assert (data / "weights" / "model0.bin").exists()

    trained = init_nlp(load_config(merged, overrides={**overrides, "paths.init_tok2vec": str(data / "weights" / "model-last.bin")}, interpolate=False))
    assert _weights(trained, config) == weights
    fresh = init_nlp(load_config(merged, overrides=overrides, interpolate=False))
    assert _weights(fresh, config) != weights
    # the same weights through a base config with its empty [pretraining] are silently ignored
    base_config = load_config(full_configs[base], overrides={k: v for k, v in overrides.items() if k in ("paths.train", "paths.dev")}, interpolate=False)
    base_config["paths"]["init_tok2vec"] = str(data / "weights" / "model-last.bin")
    if base == "ova_auc_all":
        ignored = init_nlp(base_config)
        assert ignored.get_pipe("auc_ner").model.get_ref("tok2vec").to_bytes() != weights


def test_vectors_fragment_and_errors(tmp_path, full_configs):
    config = pretraining_config(full_configs["ova_auc_all"], CONFIGS / "pretrain" / "vectors.cfg")
    assert config["pretraining"]["objective"]["@architectures"] == "spacy.PretrainVectors.v1"
    with pytest.raises(DataError, match="no pipe 'tagger'"):
        pretraining_config(full_configs["ova_auc_all"], CHARACTERS, component="tagger")
    (tmp_path / "empty.cfg").write_text("[paths]\nraw_text = null\n")
    with pytest.raises(DataError, match=r"empty\.cfg: has no \[pretraining\] block"):
        pretraining_config(full_configs["ova_auc_all"], tmp_path / "empty.cfg")
    result = runner.invoke(app, ["pretrain-config", str(tmp_path / "none.cfg"), str(CHARACTERS), str(tmp_path / "out.cfg")])
    assert result.exit_code == 1 and result.stderr.strip() == f"Error: {tmp_path / 'none.cfg'}: no such config file"
    assert not (tmp_path / "out.cfg").exists()


def test_a_fragment_is_taken_by_its_name(tmp_path, full_configs, monkeypatch):
    """A pip install has no checkout's configs/pretrain/characters.cfg: the fragment's name is
    enough, as config and recipe take names; a file is still taken as a file."""
    monkeypatch.chdir(tmp_path)  # where no configs/ folder is, as for a pip user
    base = str(full_configs["ova_auc_all"])
    for name in ("characters", "vectors"):
        result = runner.invoke(app, ["pretrain-config", base, name, f"{name}.cfg"])
        assert result.exit_code == 0, result.output
        assert load_config(tmp_path / f"{name}.cfg", interpolate=False) == pretraining_config(base, CONFIGS / "pretrain" / f"{name}.cfg")
    mine = tmp_path / "mine.cfg"
    mine.write_text(CHARACTERS.read_text())
    assert runner.invoke(app, ["pretrain-config", base, str(mine), "by_file.cfg"]).exit_code == 0
    for fragment, message in [
        ("charcters", "charcters: neither a config file nor a pretraining fragment (characters, vectors)"),
        ("configs/pretrain/characters.cfg", "configs/pretrain/characters.cfg: no such config file; give the package's fragment by its name: characters"),
        ("other.cfg", "other.cfg: no such config file"),
    ]:
        result = runner.invoke(app, ["pretrain-config", base, fragment, "out.cfg"])
        assert result.exit_code == 1 and result.stderr.strip() == f"Error: {message}"
    assert not (tmp_path / "out.cfg").exists()
    help_text = " ".join(runner.invoke(app, ["pretrain-config", "--help"]).stdout.replace("│", " ").split())  # out of its box
    assert "by name (characters, vectors;" in help_text and "pretrain-config spacy_ner.cfg characters pretrain.cfg" in help_text


def test_a_file_that_is_no_config_or_no_full_one_is_named(tmp_path, full_configs):
    """A corpus given as the fragment, or a method's partial config as the base: one line
    naming the file, not spaCy's parser message on '<string>' or its dump of the config."""
    (tmp_path / "train.tsv").write_text("Identification\tO\nof\tO\n\n")
    out = tmp_path / "out.cfg"
    result = runner.invoke(app, ["pretrain-config", str(full_configs["ova_auc_all"]), str(tmp_path / "train.tsv"), str(out)])
    assert result.exit_code == 1 and result.stderr.strip() == f"Error: {tmp_path / 'train.tsv'}:1: not a config file (no section header)"
    partial = CONFIGS / "methods" / "focal.cfg"
    result = runner.invoke(app, ["pretrain-config", str(partial), str(CHARACTERS), str(out)])
    assert result.exit_code == 1
    assert result.stderr.strip() == f"Error: {partial}: not a full training config (no [nlp]); assemble one with spacy-auc-ner config first"
    assert not out.exists()


def _texts(reader):
    nlp = spacy.blank("en")
    return [eg.reference.text for eg in reader(nlp)]


def test_raw_text_reads_txt_jsonl_and_spacy_alike(data):
    """The same texts from the three formats; a .spacy file's annotation is not carried over."""
    from spacy_auc_ner.training.pretraining import create_raw_text

    texts = [" ".join(w) for w, _ in TOY]
    (data / "raw.txt").write_text("\n".join(texts) + "\n\n")  # a blank line is skipped
    srsly.write_jsonl(data / "one.jsonl", [{"text": t} for t in texts])
    assert _texts(create_raw_text(data / "raw.txt")) == texts
    assert _texts(create_raw_text(data / "one.jsonl")) == texts
    nlp = spacy.blank("en")
    from_spacy = list(create_raw_text(data / "train.spacy")(nlp))
    assert [[t.text for t in eg.reference] for eg in from_spacy] == [list(w) for w, _ in TOY]
    assert all(not eg.reference.ents and eg.predicted is eg.reference for eg in from_spacy)


def test_raw_text_refuses_a_column_file_named_txt(tmp_path):
    """Read a text a line, a token/label file gave pretraining a 'sentence' per token."""
    from spacy_auc_ner.training.pretraining import create_raw_text

    (tmp_path / "cols.txt").write_text("Aspirin\tB-Chemical\nworks\tO\n")
    with pytest.raises(DataError, match=r"cols.txt:1: looks like a token/label column file \('Aspirin\\tB-Chemical' ends in a label\)"):
        _texts(create_raw_text(tmp_path / "cols.txt"))


def test_raw_text_bounds_and_limit_as_spacys_jsonl_corpus(data):
    """min_length, max_length (exclusive) and limit as spacy.JsonlCorpus.v1 reads them."""
    from spacy.training.corpus import JsonlCorpus

    from spacy_auc_ner.training.pretraining import create_raw_text

    texts = ["a", "a b", "a b c", "a b c d"]
    srsly.write_jsonl(data / "lengths.jsonl", [{"text": t} for t in texts])
    for bounds in ({"min_length": 2, "max_length": 4}, {"min_length": 0, "max_length": 0}, {"min_length": 3, "max_length": 0}):
        ours = _texts(create_raw_text(data / "lengths.jsonl", **bounds))
        assert ours == _texts(JsonlCorpus(data / "lengths.jsonl", **bounds))
    assert _texts(create_raw_text(data / "lengths.jsonl", min_length=2, max_length=4)) == ["a b", "a b c"]
    assert _texts(create_raw_text(data / "lengths.jsonl", limit=3)) == texts[:3]


@pytest.mark.parametrize("kwargs,message", [
    ({"path": "x.txt", "limit": -1}, r"RawText.v1: limit = -1"),
    ({"path": "x.txt", "max_length": 2.5}, r"RawText.v1: max_length = 2.5"),
])
def test_raw_text_refuses_bad_settings(kwargs, message):
    from spacy_auc_ner.training.pretraining import create_raw_text

    with pytest.raises(DataError, match=message):
        create_raw_text(**kwargs)


def test_raw_text_without_a_path_is_made_but_refused_when_read():
    """spacy train makes every reader of [corpora] (the pool's and pretraining's included) and
    reads neither: a recipe's null raw text must not stop it."""
    from spacy_auc_ner.training.pretraining import create_raw_text

    reader = create_raw_text(None)
    with pytest.raises(DataError, match=r"RawText.v1 reads no file \(its path is null\): give the raw text with --paths.raw_text"):
        _texts(reader)


def test_raw_text_names_the_file_and_line_of_a_bad_line(tmp_path):
    from spacy_auc_ner.training.pretraining import create_raw_text

    (tmp_path / "bad.jsonl").write_text('{"text": "fine"}\n{"txt": 1}\n')
    with pytest.raises(DataError, match=r"bad.jsonl:2: expected a JSON object"):
        _texts(create_raw_text(tmp_path / "bad.jsonl"))


def test_raw_text_that_its_bounds_leave_empty_is_refused_with_the_count(tmp_path):
    """Issue 45 R10: every line longer than max_length, and pretraining ran on 0 words, silently."""
    from spacy_auc_ner.training.pretraining import create_raw_text

    (tmp_path / "raw.txt").write_text("".join(" ".join(w) + "\n" for w, _ in TOY))  # 4 to 7 tokens each
    with pytest.raises(DataError, match=rf"^{tmp_path / 'raw.txt'}: none of its 5 texts is within min_length = 1 and max_length = 4 tokens "
                                        r"\(0 shorter, 5 as long or longer\), so it gives no text; lower min_length or raise max_length \(0: no bound\)$"):
        _texts(create_raw_text(tmp_path / "raw.txt", max_length=4))
    with pytest.raises(DataError, match=r"none of its 5 texts is within min_length = 8 and max_length = 0 tokens \(5 shorter, 0 as long or longer\)"):
        _texts(create_raw_text(tmp_path / "raw.txt", min_length=8, max_length=0))
    assert len(_texts(create_raw_text(tmp_path / "raw.txt", max_length=5))) == 2  # the two of 4 tokens


@pytest.mark.slow
def test_a_written_pretraining_config_reads_a_txt_file(data, full_configs, tmp_path):
    """pretrain-config, then spacy pretrain on the .txt raw text that README's recipe takes:
    it pretrains on its words (with JsonlCorpus.v1 it found no .jsonl file and ran on 0)."""
    merged = tmp_path / "pretrain.cfg"
    assert runner.invoke(app, ["pretrain-config", str(full_configs["ova_auc_all"]), str(CHARACTERS), str(merged)]).exit_code == 0
    (tmp_path / "raw.txt").write_text("Aspirin treats breast cancer .\nColon cancer is rare in Paris .\n")
    overrides = {"paths.raw_text": str(tmp_path / "raw.txt"), "pretraining.max_epochs": 1, "paths.train": str(data / "train.spacy"),
                 "paths.dev": str(data / "train.spacy")}
    (tmp_path / "weights").mkdir()
    pretrain(load_config(merged, overrides=overrides, interpolate=False).interpolate(), tmp_path / "weights", silent=True)
    log = [json.loads(line) for line in (tmp_path / "weights" / "log.jsonl").read_text().splitlines()]
    assert log[-1]["nr_word"] == 12
