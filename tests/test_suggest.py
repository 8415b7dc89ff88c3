"""`spacy-auc-ner suggest` on tiny pipelines fitted to the toy corpus: every strategy on every
auc_ner scheme and on spaCy's ner (the files, the pre-annotations, the order of the scores), the
diversity guard, and the one-line errors (nothing written on any of them)."""
import json
import math

import numpy
import pytest
import spacy
from spacy.tokens import Doc, DocBin
from typer.testing import CliRunner

from spacy_auc_ner.annotation.suggestions import shortfall, suggest_docs
from spacy_auc_ner.annotation.uncertainty import sentence_uncertainty
from spacy_auc_ner.cli.app import app
from spacy_auc_ner.data.files import DataError
from toy_data import fit_toy

runner = CliRunner()
SCHEMES = ("ova", "two_task", "softmax", "crf")
PIPELINES = (*SCHEMES, "ner")
POOL = [
    "Aspirin treats colon cancer in Rome .",
    "John Smith lives in Berlin",
    "Nothing to see",
    "Mary met John in Paris .",
    "Colon cancer is rare",
    "Anna lives in Rome",
]


def _run(*args):
    return runner.invoke(app, ["suggest", *[str(a) for a in args]])


def _one_line_error(result):
    assert result.exit_code == 1, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """A pipeline folder per auc_ner scheme and one of spaCy's ner."""
    folder = tmp_path_factory.mktemp("models")
    paths = {}
    for name in PIPELINES:
        factory, config = ("ner", {}) if name == "ner" else ("auc_ner", {"scheme": name})
        nlp = fit_toy(config, n_iter=20, factory=factory)[0]
        paths[name] = folder / name
        nlp.to_disk(paths[name])
    return paths


@pytest.fixture
def raw(tmp_path):
    path = tmp_path / "raw.txt"
    path.write_text("\n".join(POOL) + "\n\n")
    return path


def _read(out):
    records = [json.loads(line) for line in out.with_suffix(".jsonl").read_text().splitlines()]
    docs = list(DocBin().from_disk(out).get_docs(spacy.blank("en").vocab))
    return records, docs


@pytest.mark.parametrize("strategy", ["mnlp", "entropy", "random"])
@pytest.mark.parametrize("name", PIPELINES)
def test_suggest_every_strategy_on_every_scheme(models, raw, tmp_path, name, strategy):
    out = tmp_path / "batch.spacy"
    result = _run(models[name], raw, out, "--n", 3, "--strategy", strategy)
    assert result.exit_code == 0, result.output
    assert f"Wrote 3 sentences to {out} and {tmp_path / 'batch.jsonl'}, by {strategy}" in result.stderr
    records, docs = _read(out)
    assert len(records) == len(docs) == 3
    nlp = spacy.load(models[name])
    for rank, (record, doc) in enumerate(zip(records, docs), 1):
        assert record["text"] in POOL and doc.text == record["text"]
        assert record["meta"]["rank"] == rank and record["meta"]["strategy"] == strategy
        assert POOL[record["meta"]["pool_index"]] == record["text"]
        # the pre-annotations: the model's entities, in characters in the JSONL and as ents in .spacy
        expected = [(e.start_char, e.end_char, e.label_) for e in nlp(record["text"]).ents]
        assert [(s["start"], s["end"], s["label"]) for s in record["spans"]] == expected
        assert [(e.start_char, e.end_char, e.label_) for e in doc.ents] == expected
        assert all(t.ent_iob_ in ("B", "I", "O") for t in doc)  # every token annotated: O outside the entities
    scores = [r["score"] for r in records]
    if strategy == "random":
        assert scores == [None] * 3
    elif strategy == "mnlp":
        assert all(-math.inf < s <= 0 for s in scores) and scores == sorted(scores)  # least confident first
    else:
        assert all(0 <= s < math.log(5) + 1e-9 for s in scores) and scores == sorted(scores, reverse=True)  # 5 BIO labels


@pytest.mark.parametrize("name", PIPELINES)
def test_the_ranking_is_the_models_uncertainty_of_the_whole_pool(models, name):
    nlp = spacy.load(models[name])
    docs = [nlp.make_doc(t) for t in POOL]
    for strategy in ("mnlp", "entropy"):
        annotated, scores = sentence_uncertainty(nlp, docs, strategy, progress=False)
        assert scores.shape == (len(POOL),) and numpy.isfinite(scores).all()
        assert [d.text for d in annotated] == POOL
        chosen = suggest_docs(nlp, docs, len(POOL), strategy, max_similarity=1.0, progress=False)
        order = numpy.argsort(scores if strategy == "mnlp" else -scores, kind="stable")
        assert [s.pool_index for s in chosen] == order.tolist()
        assert [s.score for s in chosen] == pytest.approx(scores[order].tolist())


def test_random_is_seeded_and_reads_the_other_formats(models, tmp_path):
    jsonl = tmp_path / "raw.jsonl"
    jsonl.write_text("".join(json.dumps({"text": t}) + "\n" for t in POOL))
    vocab = spacy.blank("en").vocab
    DocBin(docs=[Doc(vocab, words=t.split()) for t in POOL]).to_disk(tmp_path / "raw.spacy")
    picks = []
    for raw, seed in ((jsonl, 1), (tmp_path / "raw.spacy", 1), (jsonl, 2)):
        out = tmp_path / f"{raw.suffix[1:]}-{seed}.spacy"
        assert _run(models["crf"], raw, out, "--n", 4, "--strategy", "random", "--seed", seed).exit_code == 0
        picks.append([r["meta"]["pool_index"] for r in _read(out)[0]])
    assert picks[0] == picks[1] != picks[2]


def test_near_duplicates_are_not_suggested_together(models, tmp_path):
    raw = tmp_path / "raw.txt"
    raw.write_text("John Smith lives in Berlin today\nJohn Smith lives in Berlin today .\njohn smith lives in berlin today\nColon cancer is rare\n")
    out = tmp_path / "batch.spacy"
    result = _run(models["ova"], raw, out, "--n", 3, "--strategy", "entropy")
    assert result.exit_code == 0, result.output
    assert "Wrote 2 sentences" in result.stderr
    assert "(only 2 of the pool's 4 sentences: the --max-similarity guard skipped 2 as near-duplicates of those suggested)" in result.stderr
    texts = [r["text"] for r in _read(out)[0]]
    assert sum("smith" in t.lower() for t in texts) == 1 and "Colon cancer is rare" in texts
    # --max-similarity 1: no guard
    assert _run(models["ova"], raw, out, "--n", 3, "--strategy", "entropy", "--max-similarity", 1, "--overwrite").exit_code == 0
    assert len(_read(out)[0]) == 3
    # more asked than the pool holds, the guard off: the pool is the reason, not the guard
    result = _run(models["ova"], raw, out, "--n", 10, "--max-similarity", 1, "--overwrite")
    assert result.exit_code == 0 and "Wrote 4 sentences" in result.stderr
    assert "(only 4: the pool holds only 4 sentences)" in result.stderr and "guard" not in result.stderr


def test_the_shortfall_names_the_guard_only_when_it_skipped_some():
    assert shortfall(10, 10, 50) == ""
    assert shortfall(10, 4, 4) == "only 4: the pool holds only 4 sentences"
    assert shortfall(10, 3, 5) == "only 3 of the pool's 5 sentences: the --max-similarity guard skipped 2 as near-duplicates of those suggested"
    assert shortfall(10, 3, 5, too_short=2) == "only 3 of the pool's 5 sentences: the --min-tokens guard skipped 2"
    assert shortfall(10, 2, 5, too_short=1) == ("only 2 of the pool's 5 sentences: the --min-tokens guard skipped 1 and the "
                                                "--max-similarity guard skipped 2 as near-duplicates of those suggested")


@pytest.mark.parametrize("strategy", ["mnlp", "entropy", "random"])
def test_the_length_guard_skips_short_lines(models, tmp_path, strategy):
    """A pool of two one-token lines and three sentences: with --min-tokens 3 no line of fewer than
    3 tokens is suggested, whatever its score, and the shortfall names the guard; without it (the
    default) the lines compete as before."""
    raw = tmp_path / "raw.txt"
    raw.write_text("-----\n*\nJohn Smith lives in Berlin\nColon cancer is rare in children\nMary met Anna in Paris\n")
    out = tmp_path / "batch.spacy"
    result = _run(models["crf"], raw, out, "--n", 5, "--strategy", strategy, "--min-tokens", 3)
    assert result.exit_code == 0, result.output
    assert sorted(r["meta"]["pool_index"] for r in _read(out)[0]) == [2, 3, 4]
    assert "(only 3 of the pool's 5 sentences: the --min-tokens guard skipped 2)" in result.stderr
    assert _run(models["crf"], raw, out, "--n", 5, "--strategy", strategy, "--overwrite").exit_code == 0
    assert len(_read(out)[0]) == 5
    line = _one_line_error(_run(models["crf"], raw, out, "--n", 5, "--min-tokens", 0, "--overwrite"))
    assert line.startswith("Error: --min-tokens: expected a whole number of tokens, 1 or more")
    # a guard that skips the whole pool: no empty batch written (over the last one, with --overwrite)
    before = out.read_bytes(), out.with_suffix(".jsonl").read_bytes()
    line = _one_line_error(_run(models["crf"], raw, out, "--n", 5, "--strategy", strategy, "--min-tokens", 50, "--overwrite"))
    assert line == f"Error: {raw}: no sentence to suggest (only 0 of the pool's 5 sentences: the --min-tokens guard skipped 5); nothing written"
    assert (out.read_bytes(), out.with_suffix(".jsonl").read_bytes()) == before


def test_an_existing_output_is_kept_unless_overwrite(models, raw, tmp_path):
    out = tmp_path / "batch.spacy"
    out.with_suffix(".jsonl").write_text("mine\n")
    line = _one_line_error(_run(models["softmax"], raw, out, "--n", 2))
    assert line == f"Error: {tmp_path / 'batch.jsonl'}: already exists; choose another file, or pass --overwrite to replace it"
    assert out.with_suffix(".jsonl").read_text() == "mine\n" and not out.exists()
    assert _run(models["softmax"], raw, out, "--n", 2, "--overwrite").exit_code == 0
    assert len(_read(out)[0]) == 2


def test_errors_are_one_line_and_write_nothing(models, raw, tmp_path):
    out = tmp_path / "batch.spacy"
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "fine"}\n{"text": oops}\n')
    (tmp_path / "empty").mkdir()
    cases = [
        ((tmp_path / "no-model", raw, out), f"{tmp_path / 'no-model'}: no such pipeline folder"),
        ((tmp_path / "empty", raw, out), f"{tmp_path / 'empty'}: not a spaCy pipeline that loads"),
        ((models["crf"], bad, out), f"{bad}:2: not a JSON line"),
        ((models["crf"], tmp_path / "missing.txt", out), f"{tmp_path / 'missing.txt'}: no such file"),
        ((models["crf"], raw, raw), "OUT must be a .spacy file"),
        ((models["crf"], raw, out, "--n", 0), "--n: expected 1 or more sentences to suggest, got 0"),
        ((models["crf"], raw, out, "--strategy", "margin"), "--strategy: unknown strategy 'margin'; choose one of mnlp, entropy, random"),
        ((models["crf"], raw, out, "--max-similarity", 2), "--max-similarity: expected a Jaccard similarity between 0 and 1"),
        # numpy's "expected non-negative integer", with no word of the option
        ((models["crf"], raw, out, "--strategy", "random", "--seed", -1), "--seed must be a whole number >= 0, not -1"),
        ((models["ner"], raw, out, "--beam-width", 1), "--beam-width: must be a whole number from 2 to 1024, not 1"),
        # spaCy's beam_parse takes a C int: an OverflowError traceback
        ((models["ner"], raw, out, "--beam-width", 3000000000), "--beam-width: must be a whole number from 2 to 1024, not 3000000000"),
        ((models["crf"], raw, out, "--component", "tagger"), "--component: the pipeline has no pipe 'tagger' (it has auc_ner)"),
        ((models["crf"], raw, models["crf"] / "out.spacy"), f"{models['crf'] / 'out.spacy'}: is an input of this command ({models['crf']})"),
    ]
    for args, message in cases:
        line = _one_line_error(_run(*args))
        assert line.startswith("Error: ") and message in line, (args, line)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.jsonl", "empty", "raw.txt"]


def test_a_column_file_as_raw_text_is_refused_and_prose_is_not(models, tmp_path):
    """A train.tsv copied to .txt: each token was a sentence, the tab tagged as an entity."""
    cols = tmp_path / "cols.txt"
    cols.write_text("Aspirin\tB-Chemical\ntreats\tO\ncancer\tB-Disease\n\nJohn\tB-PER\n")
    line = _one_line_error(_run(models["crf"], cols, tmp_path / "out.spacy", "--n", 3))
    assert line.startswith(f"Error: {cols}:1: looks like a token/label column file ('Aspirin\\tB-Chemical' ends in a label), not raw text "
                           "(a text a line): give it as annotated data")
    assert not (tmp_path / "out.spacy").exists()
    prose = tmp_path / "prose.txt"
    prose.write_text("Mary went home O\n" + "\n".join(POOL) + "\n")
    assert _run(models["crf"], prose, tmp_path / "out.spacy", "--n", 3).exit_code == 0


def test_out_equal_to_raw_or_its_jsonl_is_refused(models, tmp_path):
    vocab = spacy.blank("en").vocab
    raw_spacy = tmp_path / "pool.spacy"
    DocBin(docs=[Doc(vocab, words=t.split()) for t in POOL]).to_disk(raw_spacy)
    before = raw_spacy.read_bytes()
    line = _one_line_error(_run(models["crf"], raw_spacy, raw_spacy, "--overwrite"))
    assert line == f"Error: {raw_spacy}: is an input of this command ({raw_spacy}); write the output to another file"
    raw_jsonl = tmp_path / "batch.jsonl"
    raw_jsonl.write_text("".join(json.dumps({"text": t}) + "\n" for t in POOL))
    line = _one_line_error(_run(models["crf"], raw_jsonl, tmp_path / "batch.spacy", "--overwrite"))
    assert line == f"Error: {raw_jsonl}: is an input of this command ({raw_jsonl}); write the output to another file"
    assert raw_spacy.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["batch.jsonl", "pool.spacy"]


def test_a_pipeline_without_a_recogniser_is_refused(tmp_path, raw):
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.to_disk(tmp_path / "plain")
    line = _one_line_error(_run(tmp_path / "plain", raw, tmp_path / "out.spacy"))
    assert "has no auc_ner or ner pipe" in line


@pytest.mark.parametrize("factory", ["auc_ner", "ner"])
def test_a_recogniser_without_labels_ranks_nothing_and_is_refused(tmp_path, raw, factory):
    """Trained on no entity, every score is 0: the ranking would be the pool's order."""
    nlp = spacy.blank("en")
    nlp.add_pipe(factory)
    nlp.initialize()
    nlp.to_disk(tmp_path / "no_labels")
    line = _one_line_error(_run(tmp_path / "no_labels", raw, tmp_path / "out.spacy", "--strategy", "entropy"))
    assert f"pipe {factory!r} of the pipeline has no entity labels" in line and "--strategy random" in line
    assert not (tmp_path / "out.spacy").exists()
    assert _run(tmp_path / "no_labels", raw, tmp_path / "out.spacy", "--strategy", "random", "--n", "2").exit_code == 0


def test_help_names_the_command_and_its_files():
    result = runner.invoke(app, ["--help"])
    assert "suggest" in result.stdout
    result = runner.invoke(app, ["suggest", "--help"])
    assert result.exit_code == 0
    for text in ("mnlp", "entropy", "random", "batch.jsonl", "--max-similarity", "--seed", "--overwrite"):
        assert text in result.stdout


@pytest.mark.parametrize("name", ["crf", "ner"])
def test_the_docs_own_entities_are_neither_read_nor_changed(models, name):
    # a simulated loop hands over gold docs: spaCy's ner would keep entities already set
    nlp = spacy.load(models[name])
    vocab = spacy.blank("en").vocab
    gold = [Doc(vocab, words=t.split(), ents=["B-PER"] + ["I-PER"] * (len(t.split()) - 1)) for t in POOL]
    plain = [Doc(vocab, words=t.split()) for t in POOL]
    for strategy in ("mnlp", "entropy"):
        annotated, scores = sentence_uncertainty(nlp, gold, strategy, progress=False)
        assert scores == pytest.approx(sentence_uncertainty(nlp, plain, strategy, progress=False)[1])
        assert all(len(d.ents) == 1 and d.ents[0].label_ == "PER" for d in gold)
        assert not any(a is g for a, g in zip(annotated, gold))
    chosen = suggest_docs(nlp, gold, 2, "random", progress=False)
    assert [[e.text for e in s.doc.ents] for s in chosen] == [[e.text for e in nlp(POOL[s.pool_index]).ents] for s in chosen]


def test_random_reads_no_model(models):
    """Without a model, random chooses what it chooses with one (the ranking never reads the
    model) and hands the docs back as given; the other strategies need the model."""
    nlp = spacy.load(models["crf"])
    docs = [nlp.make_doc(t) for t in POOL]
    with_model = suggest_docs(nlp, docs, 3, "random", seed=4, progress=False)
    without = suggest_docs(None, docs, 3, "random", seed=4, progress=False)
    assert [s.pool_index for s in without] == [s.pool_index for s in with_model] and len(without) == 3
    assert all(s.doc is docs[s.pool_index] and s.score is None for s in without)
    for strategy in ("mnlp", "entropy"):
        with pytest.raises(DataError, match=f"--strategy {strategy} ranks by a model's uncertainty"):
            suggest_docs(None, docs, 3, strategy, progress=False)


def test_the_entity_bias_moves_the_uncertainty_as_it_moves_the_entities(models):
    # the scores are read from the columns decoding reads, the calibrated entity bias included
    nlp = spacy.load(models["crf"])
    docs = [nlp.make_doc(t) for t in POOL]
    plain = sentence_uncertainty(nlp, docs, "entropy", progress=False)[1]
    nlp.get_pipe("auc_ner").cfg["entity_bias"] = 5.0
    annotated, biased = sentence_uncertainty(nlp, docs, "entropy", progress=False)
    assert not numpy.allclose(plain, biased)
    assert [[e.text for e in d.ents] for d in annotated] == [[e.text for e in nlp(t).ents] for t in POOL]


def test_suggestions_trace_to_their_source_line_keep_its_meta_and_come_back_unchanged(models, tmp_path):
    """S6: suggest dropped the input's meta, and pool_index counted kept texts, not lines; its
    JSONL read back (convert, recipe's --paths.train) gives exactly the Docs of its .spacy."""
    import hashlib

    from spacy.vocab import Vocab

    from spacy_auc_ner.data.columns import read_docs

    raw = tmp_path / "raw.jsonl"
    lines = ["", json.dumps({"text": POOL[0], "meta": {"doc_id": "A7"}}), "", json.dumps({"text": POOL[1]}),
             json.dumps({"text": POOL[3], "meta": 5}), json.dumps({"text": POOL[4], "meta": {"doc_id": "B2"}})]
    raw.write_text("\n".join(lines) + "\n")
    out = tmp_path / "batch.spacy"
    assert _run(models["crf"], raw, out, "--n", 4, "--strategy", "random").exit_code == 0
    records, docs = _read(out)
    line_of = {POOL[0]: 2, POOL[1]: 4, POOL[3]: 5, POOL[4]: 6}
    own = {POOL[0]: {"doc_id": "A7"}, POOL[1]: {}, POOL[3]: {"input_meta": 5}, POOL[4]: {"doc_id": "B2"}}
    digest = hashlib.sha256(raw.read_bytes()).hexdigest()
    for record in records:
        meta = record["meta"]
        assert meta["source"] == {"file": str(raw), "line": line_of[record["text"]], "sha256": digest}
        assert {k: v for k, v in meta.items() if k not in ("source", "strategy", "score", "rank", "pool_index")} == own[record["text"]]
    back = read_docs(out.with_suffix(".jsonl"), Vocab())
    assert [[t.text for t in d] for d in back] == [[t.text for t in d] for d in docs]
    assert [[(t.ent_iob_, t.ent_type_) for t in d] for d in back] == [[(t.ent_iob_, t.ent_type_) for t in d] for d in docs]
    assert runner.invoke(app, ["convert", str(out.with_suffix(".jsonl")), str(tmp_path / "again.spacy")]).exit_code == 0
    again = list(DocBin().from_disk(tmp_path / "again.spacy").get_docs(spacy.blank("en").vocab))
    assert [d.to_json() for d in again] == [d.to_json() for d in docs]


def test_one_suggest_run_checks_its_settings_once(models, raw, tmp_path, monkeypatch):
    """Issue 65: one suggest run checked its strategy three times (suggest, suggest_docs and
    select_sentences); the command's entrance checks it, the layers below trust it."""
    from spacy_auc_ner.annotation import selection, suggestions

    calls = []
    real = selection.check_selection
    monkeypatch.setattr(suggestions, "check_selection", lambda *a, **k: (calls.append(a), real(*a, **k))[1])
    assert _run(models["crf"], raw, tmp_path / "b.spacy", "--n", 2).exit_code == 0
    assert len(calls) == 1
