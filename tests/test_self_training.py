"""Self-training: the pool readers and writer, confidences from auc_ner and spaCy's ner,
pseudo-labels by hand, the rounds end to end, one-line errors and nothing partial written."""
import json
import random
from pathlib import Path

import numpy
import pytest
import spacy
from spacy.tokens import Doc, DocBin
from spacy.training import Example
from thinc.api import Config
from typer.testing import CliRunner

from spacy_auc_ner.cli.app import app
from spacy_auc_ner.data.columns import DataError, read_docs, write_docs
from spacy_auc_ner.outputs import MANIFEST
from spacy_auc_ner.pipeline.scoring import dev_scores
from spacy_auc_ner.training import recipe, self_training
from spacy_auc_ner.training.confidences import scored_entities
from spacy_auc_ner.training.pseudo_labels import label_pool, pseudo_label
from spacy_auc_ner.training.readers import LowResourceCorpus
from spacy_auc_ner.training.recipe import self_train
from spacy_auc_ner.training.self_training import best_round
from spacy_auc_ner.training.unlabeled import read_pool, write_pool
from toy_data import TOY, fit_toy

CONFIGS = Path(__file__).parents[1] / "configs"
runner = CliRunner()
# a handful of steps on a small encoder: the plumbing, not the accuracy
SMALL = {
    "training.max_steps": 12, "training.eval_frequency": 6,
    "components.ner.model.tok2vec.embed.width": 32, "components.ner.model.tok2vec.encode.width": 32,
    "components.ner.model.tok2vec.encode.depth": 1,
}


def _files(corpus):
    return {"paths.train": str(corpus / "train.spacy"), "paths.dev": str(corpus / "dev.spacy"), "paths.raw_text": str(corpus / "pool.txt")}


def _args(overrides):
    return [str(x) for k, v in overrides.items() for x in (f"--{k}", v)]


def _one_line_error(result):
    assert result.exit_code != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


@pytest.fixture(scope="module")
def trained():
    """Tiny auc_ner and spaCy ner pipelines fitted to the toy corpus."""
    return {factory: fit_toy(n_iter=25, factory=factory)[0] for factory in ("auc_ner", "ner")}


@pytest.fixture
def corpus(tmp_path):
    """train (the toy corpus x 4), dev (the toy corpus) and a .txt pool."""
    vocab = spacy.blank("en").vocab
    docs = [Doc(vocab, words=w, ents=t) for w, t in TOY]
    DocBin(docs=docs * 4).to_disk(tmp_path / "train.spacy")
    DocBin(docs=docs).to_disk(tmp_path / "dev.spacy")
    (tmp_path / "pool.txt").write_text("Aspirin treats colon cancer in Rome .\n\nJohn Smith met Mary in Paris\nNothing here\n")
    return tmp_path


# -- the pool ---------------------------------------------------------------------------------


def test_read_pool_formats(tmp_path):
    (tmp_path / "p.txt").write_text("one text\n\n  \ntwo texts here\n")
    assert read_pool(tmp_path / "p.txt") == ["one text", "two texts here"]
    (tmp_path / "p.jsonl").write_text('{"text": "a b"}\n\n{"text": "c", "meta": 1}\n')
    assert read_pool(tmp_path / "p.jsonl") == ["a b", "c"]
    vocab = spacy.blank("en").vocab
    DocBin(docs=[Doc(vocab, words=["Flu", "here"], spaces=[True, False], ents=["B-D", "O"])]).to_disk(tmp_path / "p.spacy")
    assert read_pool(tmp_path / "p.spacy") == [(["Flu", "here"], [True, False])]  # annotation dropped


def test_read_pool_reads_a_byte_order_mark_and_lines_as_json_and_text_editors_do(tmp_path):
    """A BOM (Windows editors) was the first character of the first text ('\\ufeffJohn': an
    entity's offsets counted it) or made a .jsonl's first line 'not a JSON line'; a JSON string
    holding U+2028 or U+0085 unescaped (json.dumps(..., ensure_ascii=False)) was cut in two by
    str.splitlines() ('not a JSON line'), and a .txt line was three texts."""
    (tmp_path / "p.txt").write_bytes("\ufeffJohn lives in Rome\r\nMary\x85met Anna\u2028today\x1c.\rlast".encode("utf-8"))
    assert read_pool(tmp_path / "p.txt") == ["John lives in Rome", "Mary\x85met Anna\u2028today\x1c.", "last"]
    text = "".join(json.dumps({"text": t}, ensure_ascii=False) + "\n" for t in ("a\u2028b", "c\x85d"))
    (tmp_path / "p.jsonl").write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))
    assert read_pool(tmp_path / "p.jsonl") == ["a\u2028b", "c\x85d"]


@pytest.mark.parametrize("name,text,message", [
    ("bad.jsonl", '{"text": "ok"}\n{"text": \n', r"bad\.jsonl:2: not a JSON line"),
    ("bad.jsonl", '{"text": "ok"}\n\n["a"]\n', r'bad\.jsonl:3: expected a JSON object with a "text" string'),
    ("bad.jsonl", '{"txt": "a"}\n', r'bad\.jsonl:1: expected a JSON object with a "text" string'),
    ("empty.txt", "\n  \n", r"empty\.txt: the pool holds no text"),
    ("pool.csv", "a\n", r"pool\.csv: an unlabeled pool must be a \.txt, \.jsonl or \.spacy file"),
])
def test_read_pool_errors_name_file_and_line(tmp_path, name, text, message):
    (tmp_path / name).write_text(text)
    with pytest.raises(DataError, match=message):
        read_pool(tmp_path / name)


COLUMNS = "splice\tO\nsite\tB-Gene\nmutation\tI-Gene\n\nin\tO\nBRCA1\tS-Gene\n"


def test_a_column_file_named_txt_is_refused_as_raw_text(tmp_path):
    """A train.tsv copied to .txt was read a token a line (its labels words of the text)."""
    (tmp_path / "cols.txt").write_text("\n" + COLUMNS)
    with pytest.raises(DataError) as err:
        read_pool(tmp_path / "cols.txt")
    cols = tmp_path / "cols.txt"
    assert str(err.value) == (f"{cols}:2: looks like a token/label column file ('splice\\tO' ends in a label), not raw text (a text a line): "
                              f"give it as annotated data (--paths.train, --paths.dev), or, to use its sentences as raw text, convert it "
                              f"('spacy-auc-ner convert {cols} {tmp_path / 'cols.spacy'}': its tokens are read, its labels dropped) and give {tmp_path / 'cols.spacy'}")
    # CoNLL-2003's space-separated columns, a bare B/I label, BILOU: columns too
    (tmp_path / "conll.txt").write_text("-DOCSTART- -X- -X- O\n\nEU NNP B-NP B-ORG\nrejects VBZ B-VP O\nFlu B\nvirus I\nParis U-LOC\n")
    with pytest.raises(DataError, match=r"conll.txt:1: looks like a token/label column file \('-DOCSTART- -X- -X- O' ends"):
        read_pool(tmp_path / "conll.txt")
    # the first 20 non-empty lines decide: a column file whose 21st line is prose is one
    (tmp_path / "long.txt").write_text("".join(f"token{i}\tO\n" for i in range(20)) + "the 21st line is prose\n")
    with pytest.raises(DataError, match=r"long.txt:1: looks like a token/label column file"):
        read_pool(tmp_path / "long.txt")


@pytest.mark.parametrize("text", [
    "I went home O\nThen we left .\n",  # a line ending in a lone O among prose lines
    "Take vitamin B\n",  # one line of prose, which could be a column line
    "Take vitamin B\nand vitamin I\nor O\nfine\n",  # a line of one field is no column line
])
def test_prose_is_never_taken_for_columns(tmp_path, text):
    (tmp_path / "raw.txt").write_text(text)
    assert read_pool(tmp_path / "raw.txt") == [line for line in text.splitlines() if line.strip()]


def test_write_pool_refuses_a_negative_seed(tmp_path):
    """random.Random(-1) draws what seed 1 draws: -1 was taken, quietly the same pool as 1."""
    nlp = spacy.blank("en")
    DocBin(docs=[Doc(nlp.vocab, words=["Flu", "here"], ents=["B-D", "O"])] * 4).to_disk(tmp_path / "c.spacy")
    with pytest.raises(DataError, match=r"^--seed must be a whole number >= 0, not -1$"):
        write_pool(tmp_path / "c.spacy", tmp_path / "pool.txt", size=1, seed=-1)
    assert not (tmp_path / "pool.txt").exists()


def test_write_pool_is_the_complement_of_the_draw_without_entities(tmp_path):
    nlp = spacy.blank("en")
    source = tmp_path / "numbered.spacy"
    DocBin(docs=[Doc(nlp.vocab, words=[f"s{i}", "has", "Flu"], ents=["O", "O", "B-D"]) for i in range(20)]).to_disk(source)
    drawn = {eg.reference.text for eg in LowResourceCorpus(str(source), n=5, seed=3)(nlp)}
    n = write_pool(source, tmp_path / "pool.spacy", size=5, seed=3)
    docs = read_docs(tmp_path / "pool.spacy", nlp.vocab)
    assert n == len(docs) == 15
    assert not any(doc.ents for doc in docs) and all(t.ent_iob_ == "" for doc in docs for t in doc)
    texts = {doc.text for doc in docs}
    assert not texts & drawn and len(texts | drawn) == 20
    # --limit: the first sentences after the draw in its seeded order, written in corpus order
    order = list(range(20))
    random.Random(3).shuffle(order)
    write_pool(source, tmp_path / "pool.jsonl", size=5, seed=3, limit=4)
    lines = [json.loads(line)["text"] for line in (tmp_path / "pool.jsonl").read_text().splitlines()]
    assert lines == [f"s{i} has Flu" for i in sorted(order[5:9])]
    write_pool(source, tmp_path / "pool.txt", size=0, seed=3)
    assert len(read_pool(tmp_path / "pool.txt")) == 20
    with pytest.raises(DataError, match="a draw of 20 sentences leaves none of its 20 for the pool"):
        write_pool(source, tmp_path / "none.txt", size=20, seed=0)
    assert not (tmp_path / "none.txt").exists()


def test_the_pool_reader_is_the_rest_of_the_split_as_write_pool_writes_it(tmp_path):
    """Issue 46: [corpora.pool] and [corpora.pretrain] read the pool from the split itself
    (spacy_auc_ner.Pool.v1), the sentences write_pool would write, in the same order."""
    from spacy.util import registry

    nlp = spacy.blank("en")
    source = tmp_path / "numbered.spacy"
    DocBin(docs=[Doc(nlp.vocab, words=[f"s{i}", "has", "Flu"], ents=["O", "O", "B-D"]) for i in range(20)]).to_disk(source)
    make = registry.readers.get("spacy_auc_ner.Pool.v1")
    for limit in (0, 4):
        write_pool(source, tmp_path / f"pool{limit}.spacy", size=5, seed=3, limit=limit or None)
        written = [[t.text for t in d] for d in read_docs(tmp_path / f"pool{limit}.spacy", nlp.vocab)]
        examples = list(make(path=str(source), n=5, seed=3, limit=limit)(nlp))
        assert [[t.text for t in eg.reference] for eg in examples] == written
        assert all(t.ent_iob_ == "" for eg in examples for t in eg.reference)
    with pytest.raises(DataError, match=r"numbered.spacy: a draw of 20 sentences leaves none of its 20 for the pool"):
        list(make(path=str(source), n=20)(nlp))


def test_a_rounds_corpus_is_the_configs_own_plus_its_pseudo_labels(tmp_path):
    """Issue 46: round k trains on [corpora.train] wrapped (PseudoLabelled.v1), beneath the
    wrappers that transform examples (augmented as when gold and pseudo-labels were one file),
    read on the gold reader's tokens; the gold sentences first, then the pseudo-labelled."""
    from spacy.util import registry

    from spacy_auc_ner.training.self_training import with_pseudo_labels

    draw = {"@readers": "spacy_auc_ner.LowResource.v1", "path": "${paths.train}", "n": 5, "seed": 0}
    corpus = {"@readers": "spacy.Corpus.v1", "path": "${paths.train}", "gold_preproc": False}
    augmented = {"@readers": "spacy_auc_ner.Augmented.v1", "copies": 3, "corpus": corpus}
    pseudo = {"@readers": "spacy_auc_ner.PseudoLabelled.v1", "path": "p.spacy"}
    assert with_pseudo_labels(draw, "p.spacy") == {**pseudo, "corpus": draw, "gold_preproc": True}
    assert with_pseudo_labels(augmented, "p.spacy") == {**augmented, "corpus": {**pseudo, "corpus": corpus, "gold_preproc": False}}
    nlp = spacy.blank("en")
    DocBin(docs=[Doc(nlp.vocab, words=["gold", "Flu"], ents=["O", "B-D"])]).to_disk(tmp_path / "gold.spacy")
    DocBin(docs=[Doc(nlp.vocab, words=["pseudo", "Flu"], ents=["O", "B-D"]),
                 Doc(nlp.vocab, words=["no", "label"])]).to_disk(tmp_path / "p.spacy")
    gold = registry.readers.get("spacy.Corpus.v1")(str(tmp_path / "gold.spacy"), gold_preproc=True)
    read = registry.readers.get("spacy_auc_ner.PseudoLabelled.v1")(gold, str(tmp_path / "p.spacy"))
    assert [[(t.text, t.ent_iob_) for t in eg.reference] for eg in read(nlp)] == [
        [("gold", "O"), ("Flu", "B")], [("pseudo", "O"), ("Flu", "B")], [("no", ""), ("label", "")]]


def test_pool_command(tmp_path, corpus):
    result = runner.invoke(app, ["pool", str(corpus / "train.spacy"), str(tmp_path / "p.jsonl"), "--size", "5", "--seed", "1"])
    assert result.exit_code == 0, result.output
    assert len(read_pool(tmp_path / "p.jsonl")) == 15
    line = _one_line_error(runner.invoke(app, ["pool", str(corpus / "train.spacy"), str(tmp_path / "p.tsv"), "--size", "5"]))
    assert line == f"Error: {tmp_path / 'p.tsv'}: the pool is written as .spacy, .jsonl or .txt"


# -- confidences and pseudo-labels ------------------------------------------------------------


def test_pseudo_label_by_hand(tmp_path):
    vocab = spacy.blank("en").vocab
    doc = Doc(vocab, words="Aspirin treats breast cancer in Paris".split())
    spans = [doc[2:4], doc[5:6]]
    spans[0].label_, spans[1].label_ = "Disease", "LOC"
    ref, kept, dropped = pseudo_label(doc, spans, numpy.asarray([0.95, 0.5]), threshold=0.9)
    assert (kept, dropped) == (1, 1)
    assert [t.ent_iob_ + t.ent_type_ for t in ref] == ["O", "O", "BDisease", "IDisease", "O", ""]
    write_docs(tmp_path / "pseudo.spacy", [ref])  # as a round writes them: missing stays missing
    assert [t.ent_iob_ for t in read_docs(tmp_path / "pseudo.spacy", vocab)[0]] == ["O", "O", "B", "I", "O", ""]
    ref, _, _ = pseudo_label(doc, spans, numpy.asarray([0.95, 0.5]), threshold=0.9, low_confidence="outside")
    assert [t.ent_iob_ for t in ref] == ["O", "O", "B", "I", "O", "O"]
    ref, kept, dropped = pseudo_label(doc, spans, numpy.asarray([0.95, 0.9]), threshold=0.9)
    assert (kept, dropped) == (2, 0) and [e.text for e in ref.ents] == ["breast cancer", "Paris"]


def test_auc_ner_confidences_are_its_span_scores(trained):
    nlp = trained["auc_ner"]
    docs = [nlp.make_doc(t) for t in ("Aspirin treats colon cancer in Rome .", "John Smith lives in Berlin")]
    out = scored_entities(nlp, docs, progress=False)
    for (doc, spans, scores), text in zip(out, ("Aspirin treats colon cancer in Rome .", "John Smith lives in Berlin")):
        again = nlp(text)
        assert [(s.start, s.end, s.label_) for s in spans] == [(e.start, e.end, e.label_) for e in again.ents]
        assert numpy.allclose(scores, again.spans["auc_ner"].attrs["scores"])
        assert len(spans) and ((scores >= 0) & (scores <= 1)).all()


def test_spacy_ner_confidences_come_from_the_beam(trained):
    nlp = trained["ner"]
    texts = ["Aspirin treats colon cancer in Rome .", "John Smith lives in Berlin", "Nothing to see"]
    out = scored_entities(nlp, [nlp.make_doc(t) for t in texts], progress=False)
    for (doc, spans, scores), text in zip(out, texts):
        assert [(s.start, s.end, s.label_) for s in spans] == [(e.start, e.end, e.label_) for e in nlp(text).ents]  # greedy entities
        assert ((scores >= 0) & (scores <= 1)).all()
    assert sum(len(s) for _, s, _ in out) >= 2
    # the fitted model is sure of the entities it was trained on
    assert out[1][2].min() > 0.5
    with pytest.raises(DataError, match="no auc_ner or ner pipe"):
        scored_entities(spacy.blank("en"), [], progress=False)


def test_label_pool_counts_and_keep_empty(trained):
    nlp = trained["auc_ner"]
    items = ["John Smith lives in Berlin", "Nothing to see here", (["Colon", "cancer", "is", "rare"], [True, True, True, False])]
    docs, counts = label_pool(nlp, items, threshold=0.0, progress=False)
    predicted = sum(len(nlp(t if isinstance(t, str) else " ".join(t[0])).ents) for t in items)
    assert counts["predicted_entities"] == predicted == counts["kept_entities"]
    assert counts["pseudo_sentences"] == len(docs) == sum(1 for d in docs if d.ents)
    docs_all, counts_all = label_pool(nlp, items, threshold=0.0, keep_empty=True, progress=False)
    assert len(docs_all) == 3 and counts_all["pool_sentences"] == 3
    none, c = label_pool(nlp, items, threshold=1.01, progress=False)
    assert none == [] and c["kept_entities"] == 0 and c["dropped_entities"] == predicted


# -- the rounds -------------------------------------------------------------------------------


@pytest.mark.parametrize("factory", ["auc_ner", "ner"])
def test_the_dev_f1_that_chooses_the_round_is_spacys(trained, factory, tmp_path):
    """A round's dev scores come from the package's scorer (`pipeline.scoring.dev_scores`);
    its ents_f, which chooses the round, is what spaCy's own evaluation gives, for the
    auc_ner pipe (whose scorer is the package's) and for a ner pipe with spaCy's scorer, on
    pipelines fitted to the toy corpus (which find entities), on it and one unseen sentence."""
    nlp = trained[factory]
    vocab = spacy.blank("en").vocab
    dev = [Doc(vocab, words=w, ents=t) for w, t in TOY]
    dev.append(Doc(vocab, words="Anna lives in Rome".split(), ents=["B-PER", "O", "O", "B-LOC"]))
    write_docs(tmp_path / "dev.spacy", dev)
    spacys = nlp.evaluate([Example(Doc(nlp.vocab, words=[t.text for t in d]), d) for d in read_docs(tmp_path / "dev.spacy", nlp.vocab)])
    ours = dev_scores(nlp, self_training.dev_examples(nlp, dev_config(gold_preproc=True, path=tmp_path / "dev.spacy")))
    assert spacys["ents_f"] > 0.3 and ours["ents_f"] == pytest.approx(spacys["ents_f"], abs=1e-12)
    assert (ours["ents_p"], ours["ents_r"]) == pytest.approx((spacys["ents_p"], spacys["ents_r"]), abs=1e-12)


def dev_config(gold_preproc: bool, path) -> Config:
    """The smallest config with a dev reader, interpolated: spaCy's Corpus.v1 on ``paths.dev``."""
    return Config().from_str(f"""
[paths]
dev = "{path}"

[corpora]

[corpora.dev]
@readers = "spacy.Corpus.v1"
path = ${{paths.dev}}
gold_preproc = {str(gold_preproc).lower()}

[training]
dev_corpus = "corpora.dev"
""")


@pytest.mark.parametrize("gold_preproc, words", [(True, ["Co-operation", "helps", "Berlin"]),
                                                 (False, ["Co", "-", "operation", "helps", "Berlin"])])
def test_the_round_is_chosen_on_the_dev_examples_that_spacy_train_scores(tmp_path, gold_preproc, words):
    """The rounds' dev scores read dev through the config's ``training.dev_corpus`` (what early
    stopping scores): with ``gold_preproc = false`` spaCy tokenizes the text again (its
    infixes split the hyphen), with ``true`` the annotated tokens stay."""
    vocab = spacy.blank("en").vocab
    doc = Doc(vocab, words=["Co-operation", "helps", "Berlin"], spaces=[True, True, False], ents=["O", "O", "B-LOC"])
    write_docs(tmp_path / "dev.spacy", [doc])  # with its spaces: spaCy tokenizes only text whose spaces are known
    (example,) = self_training.dev_examples(spacy.blank("en"), dev_config(gold_preproc, tmp_path / "dev.spacy"))
    assert [t.text for t in example.predicted] == words
    assert [t.text for t in example.reference] == ["Co-operation", "helps", "Berlin"]


def test_best_round_is_the_best_dev_f1_earliest_first():
    rounds = lambda *fs: [{"dev": {"ents_f": f}} for f in fs]  # noqa: E731
    assert best_round(rounds(0.2, 0.5, 0.4)) == 1
    assert best_round(rounds(0.3, 0.3, 0.1)) == 0  # a tie keeps the teacher
    assert best_round(rounds(None, 0.0)) == 0  # no score counts as 0
    assert best_round(rounds(None, 0.1)) == 1
    with pytest.raises(ValueError):
        best_round([])


def full_configs_train_block(path):
    return dict(spacy.util.load_config(path, interpolate=False)["corpora"]["train"])


@pytest.mark.slow
def test_self_train_rounds_end_to_end(corpus, full_configs, capsys):
    out = corpus / "st"
    # keep_empty: the tiny teacher predicts no entity, and a round with no pool sentence ends the rounds
    records = self_train(full_configs["spacy_ner"], out, {**_files(corpus), "self_training.rounds": 2, "self_training.threshold": 0.0,
                                                          "self_training.keep_empty": True, **SMALL}, progress=False)
    # spaCy's log names the hidden folder a round trains in; ours names where it was kept
    ours = [line for line in capsys.readouterr().err.splitlines() if "dev F1" in line and line.startswith("[self-train] round ")]
    assert [line.endswith(f", kept in {out / f'round-{k}'}") for k, line in enumerate(ours)] == [True, True, True], ours
    assert [r["round"] for r in records] == [0, 1, 2]
    lines = [json.loads(line) for line in (out / "rounds.jsonl").read_text().splitlines()]
    assert lines == records
    assert sorted(p.name for p in out.iterdir()) == [MANIFEST, "model-best", "round-0", "round-1", "round-2", "rounds.jsonl"]
    best = records[best_round(records)]["model"]
    assert (out / "model-best" / "meta.json").read_text() == (Path(best) / "meta.json").read_text()
    for r in records:
        assert (Path(r["model"]) / "meta.json").exists() and 0.0 <= r["dev"]["ents_f"] <= 1.0
    assert records[1]["teacher"] == records[0]["model"] and records[2]["teacher"] == records[1]["model"]
    r1 = records[1]
    assert r1["pool_sentences"] == 3 and r1["train_sentences"] == 20 + r1["pseudo_sentences"]
    # the round's corpus is the config's own plus its pseudo-labels: the gold sentences are
    # never written out, and the saved config names the pseudo-labels where they now are
    assert len(DocBin().from_disk(out / "round-1" / "pseudo.spacy")) == r1["pseudo_sentences"] == 3
    assert not (out / "round-1" / "train.spacy").exists()
    saved = spacy.util.load_config(out / "round-1" / "model-best" / "config.cfg", interpolate=False)
    assert saved["corpora"]["train"] == {"@readers": "spacy_auc_ner.PseudoLabelled.v1", "path": str(out / "round-1" / "pseudo.spacy"),
                                         "gold_preproc": False, "corpus": full_configs_train_block(full_configs["spacy_ner"])}


@pytest.mark.slow
def test_the_rounds_stop_when_no_pool_sentence_is_kept(corpus, full_configs, capsys):
    """A round with no pseudo-labelled sentence trained on the gold alone, as round 0 did, and
    without a dev set the last round, that copy of round 0, was the one kept."""
    out = corpus / "st"
    records = self_train(full_configs["spacy_ner"], out, {**_files(corpus), "self_training.rounds": 2, "self_training.threshold": 0.0, **SMALL},
                         progress=False)
    assert [r["round"] for r in records] == [0]
    assert sorted(p.name for p in out.iterdir()) == [MANIFEST, "model-best", "round-0", "rounds.jsonl"]
    assert (out / "model-best" / "meta.json").read_text() == (out / "round-0" / "model-best" / "meta.json").read_text()
    err = capsys.readouterr().err
    assert "[self-train] round 1/2: no pool sentence kept (0 predicted entities, none with confidence >= 0.0): self-training stops after round 0" in err
    assert "round 1/2: kept" not in err


def test_self_train_from_a_given_model_nothing_partial_on_failure(corpus, monkeypatch, trained, full_configs):
    teacher = corpus / "teacher"
    trained["auc_ner"].to_disk(teacher)
    calls = []

    def failing(*args, **kwargs):
        calls.append(args)
        raise RuntimeError("training failed")

    monkeypatch.setattr(self_training, "train_config", failing)
    out = corpus / "st"
    with pytest.raises(RuntimeError, match="training failed"):
        self_train(full_configs["ova_auc_all"], out, {**_files(corpus), "self_training.threshold": 0.5}, teacher=teacher, progress=False)
    # round 0 (the given teacher, scored on dev: a line, no folder) was written, then round 1
    # failed: the run takes back all it wrote, so that the same command, corrected, runs
    # again without --overwrite (it was refused: 'already holds a self-training run')
    assert len(calls) == 1 and not out.exists()
    overrides = {**_files(corpus), "self_training.rounds": 1}
    (out / "round-3").mkdir(parents=True)  # the user's: not a name of this run, so it stays
    with pytest.raises(RuntimeError, match="training failed"):
        self_train(full_configs["ova_auc_all"], out, overrides, teacher=teacher, progress=False)
    assert sorted(p.name for p in out.iterdir()) == ["round-3"]
    # a failed --overwrite run: the earlier run's entries went with the claim, its own with the failure
    monkeypatch.setattr(self_training, "train_config", lambda config, output_dir, *a, **k: trained["auc_ner"].to_disk(Path(output_dir) / "model-best"))
    self_train(full_configs["ova_auc_all"], out, overrides, teacher=teacher, progress=False)
    assert sorted(p.name for p in out.iterdir()) == [MANIFEST, "model-best", "round-1", "round-3", "rounds.jsonl"]
    monkeypatch.setattr(self_training, "train_config", failing)
    with pytest.raises(RuntimeError, match="training failed"):
        self_train(full_configs["ova_auc_all"], out, overrides, teacher=teacher, overwrite=True, progress=False)
    assert sorted(p.name for p in out.iterdir()) == ["round-3"]


@pytest.mark.parametrize("args,message", [
    (["--self_training.threshold", "1.5"], "[self_training.threshold] must be a confidence in [0, 1], not 1.5"),
    (["--self_training.rounds", "-1"], "[self_training.rounds] must be a whole number >= 0 (0: train once), not -1"),
    (["--self_training.low_confidence", "drop"], '[self_training.low_confidence] must be "missing" or "outside", not "drop"'),
    (["--self_training.beam_width", "1"], "[self_training.beam_width] must be a whole number from 2 to 1024, not 1"),
    (["--self_training.beam_width", "99999999999"], "[self_training.beam_width] must be a whole number from 2 to 1024, not 99999999999"),
    (["--training.max_stepz", "10"], "--training.max_stepz: names nothing in {config}"),
])
def test_self_train_command_errors(corpus, args, message, full_configs):
    base = ["self-train", str(full_configs["spacy_ner"]), str(corpus / "out"), *_args(_files(corpus))]
    assert _one_line_error(runner.invoke(app, base + args)) == f"Error: {message.format(config=full_configs['spacy_ner'])}"
    assert not (corpus / "out").exists()


def test_self_train_command_refuses_a_used_folder_and_a_bad_pool(corpus, full_configs):
    (corpus / "out").mkdir()
    (corpus / "out" / "rounds.jsonl").write_text("")
    base = ["self-train", str(full_configs["spacy_ner"]), str(corpus / "out"), "--paths.train", str(corpus / "train.spacy"),
            "--paths.dev", str(corpus / "dev.spacy")]
    line = _one_line_error(runner.invoke(app, base + ["--paths.raw_text", str(corpus / "pool.txt")]))
    assert line == (f"Error: {corpus / 'out'}: rounds.jsonl not written by an earlier 'self-train' run here (no record in "
                    ".spacy-auc-ner-outputs.json), so --overwrite leaves it; move it or choose another output folder")
    (corpus / "pool.jsonl").write_text('{"text": "a"}\nnot json\n')
    base[2] = str(corpus / "out2")
    line = _one_line_error(runner.invoke(app, base + ["--paths.raw_text", str(corpus / "pool.jsonl")]))
    assert line.startswith(f"Error: {corpus / 'pool.jsonl'}:2: not a JSON line")
    assert not (corpus / "out2").exists()


@pytest.mark.slow
def test_self_train_command_with_a_model_and_overrides(corpus, trained, full_configs):
    teacher = corpus / "teacher"
    trained["ner"].to_disk(teacher)
    args = ["self-train", str(full_configs["spacy_ner"]), str(corpus / "out"), *_args(_files(corpus)), "--model", str(teacher),
            "--self_training.rounds", "1", "--self_training.threshold", "0.5"]
    for key, value in SMALL.items():
        args += [f"--{key}", str(value)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    rows = [line.split("\t") for line in result.stdout.strip().splitlines()]
    assert [r[0] for r in rows[:-1]] == ["round 0", "round 1"] and rows[0][-1] == str(teacher)
    saved = spacy.util.load_config(corpus / "out" / "round-1" / "model-best" / "config.cfg")
    assert saved["training"]["max_steps"] == 12


def test_self_train_checks_overrides_and_teacher_before_training(corpus, monkeypatch, full_configs):
    monkeypatch.setattr(self_training, "train_config", lambda *a, **k: pytest.fail("trained"))
    with pytest.raises(DataError, match=r"^--trainingx.max_steps: names nothing in .*spacy_ner\.cfg$"):
        self_train(full_configs["spacy_ner"], corpus / "out", {**_files(corpus), "trainingx.max_steps": 3}, progress=False)
    blank = corpus / "blank"
    spacy.blank("en").to_disk(blank)
    with pytest.raises(DataError, match=r"the pipeline \(no pipes\) has no auc_ner or ner pipe"):
        self_train(full_configs["spacy_ner"], corpus / "out", _files(corpus), teacher=blank, progress=False)
    with pytest.raises(DataError, match=r"\[paths.raw_text\] of .*spacy_ner.cfg is null: give the unlabeled text to self-train on with --paths.raw_text"):
        self_train(full_configs["spacy_ner"], corpus / "out", {k: v for k, v in _files(corpus).items() if k != "paths.raw_text"}, progress=False)
    assert not (corpus / "out").exists()


def test_self_train_refuses_an_output_dir_in_its_model(corpus, monkeypatch, full_configs):
    """OUTPUT_DIR the --model folder (or inside it) wrote the run among the pipeline's files."""
    monkeypatch.setattr(self_training, "train_config", lambda *a, **k: pytest.fail("trained"))
    nlp = spacy.blank("en")
    nlp.add_pipe("ner").add_label("Disease")
    nlp.initialize()
    teacher = corpus / "teacher"
    nlp.to_disk(teacher)  # a teacher that passes every other check
    before = sorted(p.name for p in teacher.iterdir())
    for out in (teacher, teacher / "run"):
        line = _one_line_error(runner.invoke(app, ["self-train", str(full_configs["spacy_ner"]), str(out), *_args(_files(corpus)), "--model", str(teacher)]))
        assert line == (f"Error: {out}: OUTPUT_DIR is the --model pipeline {teacher} or lies inside it, so the run would write into "
                        f"your pipeline's folder; choose an output folder outside {teacher}")
    assert sorted(p.name for p in teacher.iterdir()) == before


def test_a_model_that_is_no_pipeline_is_worded_as_suggest_words_it(corpus, monkeypatch, full_configs):
    monkeypatch.setattr(self_training, "train_config", lambda *a, **k: pytest.fail("trained"))
    base = ["self-train", str(full_configs["spacy_ner"]), str(corpus / "out"), *_args(_files(corpus)), "--model"]
    line = _one_line_error(runner.invoke(app, [*base, str(corpus / "pool.txt")]))
    assert line.startswith(f"Error: {corpus / 'pool.txt'}: not a spaCy pipeline that loads ([E053] Could not read meta.json from")
    line = _one_line_error(runner.invoke(app, [*base, str(corpus / "none")]))
    assert line == f"Error: {corpus / 'none'}: no such pipeline folder"
    line = _one_line_error(runner.invoke(app, [*base[:-1], "--system.seed", "-1"]))
    assert line == "Error: [system.seed] must be a whole number >= 0, not -1"
    assert not (corpus / "out").exists()


def test_the_pool_is_read_through_its_config_block(corpus, full_configs, tmp_path):
    """[corpora.pool]: RawText.v1 on ${paths.raw_text}, its limit the first texts of the file."""
    config = self_training.with_self_training(recipe.load_training_config(full_configs["spacy_ner"], _files(corpus)))
    assert self_training.read_pool_config(config, "c") == [(t.split(), [True] * (len(t.split()) - 1) + [False])
                                                          for t in ("Aspirin treats colon cancer in Rome .", "John Smith met Mary in Paris", "Nothing here")]
    config["corpora"]["pool"]["limit"] = 2
    assert len(self_training.read_pool_config(config, "c")) == 2
    config["paths"]["raw_text"] = None
    with pytest.raises(DataError, match=r"^c: \[corpora.pool\] reads no file: give the unlabeled text with --paths.raw_text$"):
        self_training.read_pool_config(config, "c")


def test_a_run_that_fails_after_a_finished_round_keeps_it(corpus, monkeypatch, trained, full_configs):
    """A failure in round 2 takes back nothing: round 1 (perhaps hours of training) stays, with
    the record that lets --overwrite remove it; only a run with no finished round is taken back."""
    teacher = corpus / "teacher"
    trained["auc_ner"].to_disk(teacher)
    calls = []

    def second_fails(config, output_dir, *args, **kwargs):
        calls.append(output_dir)
        if len(calls) == 2:
            raise RuntimeError("training failed")
        trained["auc_ner"].to_disk(Path(output_dir) / "model-best")

    monkeypatch.setattr(self_training, "train_config", second_fails)
    out = corpus / "st2"
    overrides = {**_files(corpus), "self_training.rounds": 2, "self_training.threshold": 0.5}
    with pytest.raises(RuntimeError, match="training failed"):
        self_train(full_configs["ova_auc_all"], out, overrides, teacher=teacher, progress=False)
    assert len(calls) == 2 and (out / "round-1" / "model-best").is_dir() and (out / MANIFEST).is_file()
    assert "round-1" in json.loads((out / MANIFEST).read_text())["written"]


def test_self_train_logs_under_its_own_name(capsys):
    from spacy_auc_ner.training import recipe as recipe_module

    recipe_module._self_train_log("round 1")
    recipe_module._log("round 1")
    assert capsys.readouterr().err.splitlines() == ["[self-train] round 1", "[recipe] round 1"]
