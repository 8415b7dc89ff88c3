"""The annotation loop simulated (auc_ner_lab/selection_loop.py, issue 47 point 2): its spec
settings, the candidates, what the model sees and what each training reads, on the toy corpus
with a tiny CPU config (the loop's mechanics, not MiniLM's numbers)."""
from pathlib import Path

import pytest
import spacy

from auc_ner_lab import selection_loop
from auc_ner_lab.selection_loop import pool_indices, rest_order, rest_writer
from auc_ner_lab.spec import SpecError, load_spec, parse_spec
from lab_data import write_toy_corpus
from lab_helpers import train_tiny
from spacy_auc_ner.api import DEFAULT_MAX_SIMILARITY, draw_indices, read_docs, suggest_docs

LAB = Path(__file__).resolve().parents[1]
RUNNER = "auc_ner_lab.selection_loop:run_cell"
NO_DEV = {"corpora.dev": {"@readers": "spacy_auc_ner.NoDev.v1"}}


def _loop(name, selection, **entry):
    return {"name": name, "base": "crf", "runner": RUNNER, "selection": selection, **entry}


def test_the_campaign_is_90_cells_whose_round_0_is_campaign_trf_nodev_n20(monkeypatch):
    """3 corpora x 5 partitions x {mnlp, entropy, random} x {30, 10 + 10 + 10}; each cell's
    config is exactly that of campaign_trf_nodev's n=20 lowres_best_trf cell of its draw."""
    monkeypatch.chdir(LAB)  # the specs' config files are named from the lab's folder, where its commands run
    spec = load_spec(LAB / "studies" / "campaign_selection.yaml", configs_dir=LAB / "configs")
    cells = spec.cells()
    assert len(cells) == 90 and len({c.key for c in cells}) == 90
    spec.check_configs()
    spec.check_overrides()
    plans = {(c.extras["selection"]["strategy"], c.extras["selection"]["batch"], c.extras["selection"]["rounds"]) for c in cells}
    assert plans == {(s, b, r) for s in ("mnlp", "entropy", "random") for b, r in ((30, 1), (10, 3))}
    assert {c.extras["selection"]["pool"] for c in cells} == {2000} and {c.runner for c in cells} == {RUNNER}
    assert all(c.describe()["extras"] == ["selection", "self_train"] for c in cells)
    nodev = load_spec(LAB / "studies" / "campaign_trf_nodev.yaml", configs_dir=LAB / "configs")
    twins = {(c.corpus, c.partition): c for c in nodev.cells() if c.method == "lowres_best_trf" and c.size == 20}
    assert len(twins) == 15
    for cell in cells:
        twin = twins[(cell.corpus, cell.partition)]
        assert cell.overrides == twin.overrides and cell.training_config() == twin.training_config(), cell.id


def test_the_guarded_campaign_is_the_one_batch_cells_with_the_length_guard(monkeypatch):
    """campaign_selection_guard: each cell is campaign_selection's mnlp_30 or entropy_30 cell of
    its draw with min_tokens 5 added to the selection, and nothing else changed."""
    monkeypatch.chdir(LAB)
    guard = load_spec(LAB / "studies" / "campaign_selection_guard.yaml", configs_dir=LAB / "configs")
    guard.check_configs()
    loop = {(c.method, c.corpus, c.partition): c for c in load_spec(LAB / "studies" / "campaign_selection.yaml", configs_dir=LAB / "configs").cells()}
    cells = guard.cells()
    assert len(cells) == 30 and len({c.key for c in cells}) == 30
    for cell in cells:
        twin = loop[(cell.method.replace("_min5", ""), cell.corpus, cell.partition)]
        assert cell.extras["selection"] == {**twin.extras["selection"], "min_tokens": 5}, cell.id
        assert (cell.overrides, cell.seed, cell.training_config()) == (twin.overrides, twin.seed, twin.training_config()), cell.id


def test_the_settings_are_in_the_key():
    methods = [_loop("a", {"strategy": "mnlp"}), _loop("b", {"strategy": "entropy"}), _loop("c", {"strategy": "mnlp", "batch": 10, "rounds": 3}),
               _loop("d", {"strategy": "mnlp", "pool": 0}), _loop("e", {"strategy": "mnlp", "max_similarity": 1.0}),
               _loop("f", {"strategy": "mnlp", "min_tokens": 5}), _loop("g", {"strategy": "mnlp", "min_tokens": 1})]
    spec = parse_spec({"name": "x", "corpora": ["toy"], "methods": methods, "sizes": [5]}, corpora_dir="corpus", configs_dir=LAB / "configs")
    cells = spec.cells()
    # the guard is in the key when on; off (1, its default) the cell is the cell without it (g is a)
    assert len({c.key for c in cells}) == 6 and cells[6].key == cells[0].key
    assert cells[0].extras == {"selection": {"strategy": "mnlp", "batch": 30, "rounds": 1, "pool": 2000, "max_similarity": 0.7}}
    assert cells[5].extras["selection"]["min_tokens"] == 5
    assert DEFAULT_MAX_SIMILARITY == 0.7
    plain = parse_spec({"name": "x", "corpora": ["toy"], "methods": ["crf"], "sizes": [5]}, corpora_dir="corpus", configs_dir=LAB / "configs")
    assert cells[0].training_config() == plain.cells()[0].training_config()  # the method's own config, as its plain cells have it


@pytest.mark.parametrize("entry, message", [
    (_loop("m", {"strategy": "margin"}), r"methods\[0\] \(m\)\.selection\.strategy: 'margin' is not a strategy \(mnlp, entropy, random\)"),
    (_loop("m", {"strategy": "mnlp", "batch": 0}), r"methods\[0\] \(m\)\.selection\.batch: 0 is not a positive whole number of sentences"),
    (_loop("m", {"strategy": "mnlp", "pool": -1}), r"methods\[0\] \(m\)\.selection\.pool: -1 is not a whole number of sentences \(0: all the rest\)"),
    (_loop("m", {"strategy": "mnlp", "max_similarity": 2}), r"methods\[0\] \(m\)\.selection\.max_similarity: 2 is not a Jaccard similarity"),
    (_loop("m", {"strategy": "mnlp", "size": 3}), r"methods\[0\] \(m\)\.selection: unknown setting\(s\) size; allowed: strategy, batch"),
    (_loop("m", {}), r"methods\[0\] \(m\)\.selection\.strategy: missing"),
    ({"name": "m", "base": "crf", "selection": {"strategy": "mnlp"}}, r"methods\[0\] \(m\): 'selection' is the settings of the annotation loop: give its runner"),
    ({"name": "m", "recipe": "lowres_best_trf", "runner": RUNNER}, r"methods\[0\] \(m\): the annotation loop \(auc_ner_lab.selection_loop:run_cell\) needs its settings: give 'selection'"),
    ({"name": "m", "recipe": "lowres_best_trf", "runner": "auc_ner_lab.hf_peer:run_cell"},
     r"methods\[0\] \(m\): a method trained by its own function \('runner'\) takes no recipe: the function trains alone"),
])
def test_bad_settings_are_one_line_errors(entry, message):
    with pytest.raises(SpecError, match=message):
        parse_spec({"name": "x", "corpora": ["toy"], "methods": [entry], "sizes": [5]}, corpora_dir="corpus", configs_dir=LAB / "configs")


def test_the_candidates_are_the_rest_in_the_draws_order(tmp_path):
    """With nothing chosen, the candidates of a limit are the pool reader's sentences of that
    limit (spacy_auc_ner.Pool.v1, what a cell's self-training reads); the chosen ones leave the
    pool and the next of the order come in; the draw is never one."""
    from spacy.util import registry

    train = write_toy_corpus(tmp_path / "corpus") / "toy" / "train.spacy"
    docs = read_docs(train, spacy.blank("en").vocab)
    rest = rest_order(len(docs), 5, 3)
    draw = draw_indices(len(docs), 5, 3)
    assert sorted(rest + draw) == list(range(len(docs)))
    for limit in (None, 4):
        pooled = registry.readers.get("spacy_auc_ner.Pool.v1")(path=str(train), n=5, seed=3, limit=limit or 0)(spacy.blank("en"))
        assert [eg.reference.text for eg in pooled] == [docs[i].text for i in pool_indices(rest, limit=limit)]
    assert pool_indices(rest, [rest[0], rest[2]], 3) == sorted([rest[1], rest[3], rest[4]])
    n = rest_writer(docs, rest, [rest[1]])(tmp_path / "st.spacy", 2)
    pooled = read_docs(tmp_path / "st.spacy", spacy.blank("en").vocab)
    assert n == 2 and [d.text for d in pooled] == [docs[i].text for i in sorted([rest[0], rest[2]])] and not any(d.ents for d in pooled)


def _spied(monkeypatch):
    """What each training reads (its reference Docs: text and gold entities) and what each
    ranking shows the model (its Docs' entities)."""
    from auc_ner_lab.training_extras import _reader_docs

    trained, shown = [], []
    real_train = selection_loop.train_with_extras

    def train(cell, config, tmp, pool):
        trained.append(sorted((d.text, tuple((e.start, e.end, e.label_) for e in d.ents)) for d in _reader_docs(config, "corpora.train")))
        return real_train(cell, config, tmp, pool)

    def suggest(nlp, docs, n, strategy, **kwargs):
        if nlp is not None:  # random's choice reads no model
            shown.append([(d.text, len(d.ents), d.has_annotation("ENT_IOB")) for d in docs])
        return suggest_docs(nlp, docs, n, strategy, **kwargs)

    monkeypatch.setattr(selection_loop, "train_with_extras", train)
    monkeypatch.setattr(selection_loop, "suggest_docs", suggest)  # what selection_loop.choose calls
    return trained, shown


def _gold(docs, indices):
    return sorted((docs[i].text, tuple((e.start, e.end, e.label_) for e in docs[i].ents)) for i in indices)


@pytest.mark.slow
def test_ten_plus_ten_plus_ten_retrains_between_rounds_on_what_was_revealed(tmp_path, monkeypatch):
    """1 + 1 + 1 on the toy corpus (5 drawn, 6 candidates of the 7 left): four trainings, on the
    draw, then on the draw and every sentence chosen so far with its gold; the model ranks the
    candidates not chosen yet, shown without entities; the draw is never chosen."""
    trained, shown = _spied(monkeypatch)
    spec, outcome, (row,) = train_tiny(tmp_path, [_loop("loop", {"strategy": "mnlp", "batch": 1, "rounds": 3, "pool": 6}, overrides=NO_DEV)])
    assert outcome.ok == 1
    docs = read_docs(tmp_path / "corpus" / "toy" / "train.spacy", spacy.blank("en").vocab)
    record = row["scores"]["selection"]
    draw = draw_indices(len(docs), 5, spec.seed)
    candidates = pool_indices(rest_order(len(docs), 5, spec.seed), limit=6)
    chosen = [i for batch in record["batches"] for i in batch["selected"]]
    assert record["draw"] == draw and record["candidates"] == 6
    assert [len(b["selected"]) for b in record["batches"]] == [1, 1, 1] and len(set(chosen)) == 3
    assert set(chosen) <= set(candidates) and not set(chosen) & set(draw)
    assert [t["sentences"] for t in record["trainings"]] == [5, 6, 7, 8]
    assert trained == [_gold(docs, draw + chosen[:k]) for k in range(4)]
    assert [len(docs_shown) for docs_shown in shown] == [6, 5, 4]
    assert all(n_ents == 0 and not annotated for docs_shown in shown for _, n_ents, annotated in docs_shown)
    assert all(isinstance(s, float) for b in record["batches"] for s in b["scores"])
    assert [b["entities"] for b in record["batches"]] == [len(docs[i].ents) for i in chosen]
    assert row["scores"]["train_seconds"] >= sum(t["seconds"] for t in record["trainings"])
    assert 0.0 <= row["scores"]["ents_seqeval_micro_f"] <= 1.0 and row["scores"]["dev_score"] is None
    assert row["runner"] == RUNNER and row["extras"] == ["selection"]


@pytest.mark.slow
def test_one_batch_trains_twice_and_random_once(tmp_path, monkeypatch):
    """entropy, one batch of 3: the draw's model ranks once, then the 8 train; random reads no
    model: one training, no ranking by the model."""
    trained, shown = _spied(monkeypatch)
    spec, outcome, rows = train_tiny(tmp_path, [_loop("entropy", {"strategy": "entropy", "batch": 3}, overrides=NO_DEV),
                                                _loop("random", {"strategy": "random", "batch": 3}, overrides=NO_DEV)])
    assert outcome.ok == 2
    by = {r["method"]: r["scores"]["selection"] for r in rows}
    assert [t["sentences"] for t in by["entropy"]["trainings"]] == [5, 8] and len(shown) == 1
    assert [t["sentences"] for t in by["random"]["trainings"]] == [8] and by["random"]["batches"][0]["scores"] == [None] * 3
    docs = read_docs(tmp_path / "corpus" / "toy" / "train.spacy", spacy.blank("en").vocab)
    for strategy in ("entropy", "random"):
        picked = by[strategy]["batches"][0]["selected"]
        assert len(set(picked)) == 3 and not set(picked) & set(by[strategy]["draw"])
        assert _gold(docs, by[strategy]["draw"] + picked) in trained


@pytest.mark.slow
def test_self_training_pools_leave_the_chosen_sentences_out(tmp_path, monkeypatch):
    """With the recipe's self-training (its layer), each training's pool is the rest of the split
    without the sentences chosen so far, and the row has the last training's rounds."""
    pools = []
    real = selection_loop.train_with_extras

    def train(cell, config, tmp, pool):
        pool(tmp / "probe.spacy", None)
        pools.append(sorted(d.text for d in read_docs(tmp / "probe.spacy", spacy.blank("en").vocab)))
        return real(cell, config, tmp, pool)

    monkeypatch.setattr(selection_loop, "train_with_extras", train)
    overrides = {**NO_DEV, "self_training.rounds": 1, "self_training.threshold": 0.0}
    spec, outcome, (row,) = train_tiny(tmp_path, [_loop("st", {"strategy": "entropy", "batch": 2}, layers=["self_training.cfg"], overrides=overrides)])
    assert outcome.ok == 1
    docs = read_docs(tmp_path / "corpus" / "toy" / "train.spacy", spacy.blank("en").vocab)
    rest = rest_order(len(docs), 5, spec.seed)
    picked = row["scores"]["selection"]["batches"][0]["selected"]
    assert pools == [sorted(docs[i].text for i in rest), sorted(docs[i].text for i in rest if i not in picked)]
    assert [r["round"] for r in row["scores"]["extras"]["rounds"]] == [0, 1] and row["scores"]["extras"]["tokens"] == "annotated"
    assert row["extras"] == ["selection", "self_train"]


def test_choose_applies_the_length_guard():
    """Random choice (no model) of 3 from candidates of 1, 4, 2, 5 and 3 tokens with min_tokens 3:
    only the sentences of at least 3 tokens; with the guard off, any of them."""
    from spacy.tokens import Doc

    from auc_ner_lab.selection_loop import SelectionSettings, choose

    vocab = spacy.blank("en").vocab
    docs = [Doc(vocab, words=[f"w{i}{j}" for j in range(n)]) for i, n in enumerate([1, 4, 2, 5, 3])]
    picked, scores = choose(None, docs, [0, 1, 2, 3, 4], SelectionSettings(strategy="random", batch=3, min_tokens=3), seed=0)
    assert sorted(picked) == [1, 3, 4] and scores == [None, None, None]
    picked, _ = choose(None, docs, [0, 1, 2, 3, 4], SelectionSettings(strategy="random", batch=5), seed=0)
    assert sorted(picked) == [0, 1, 2, 3, 4]
