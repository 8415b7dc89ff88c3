"""A method tuned as another (spec key ``tuned_as``): no trials of its own, its reported cells
train with the grid point the other method's trials choose in the same group, its key hashes
those trials; the keys of every other cell stay as they were; bad uses refused in one line."""
from collections import Counter

import pytest

import lab_helpers
from auc_ner_lab.report import write_report
from auc_ner_lab.runner import run_study
from auc_ner_lab.spec import SpecError, load_spec, parse_spec
from auc_ner_lab.study_cli import mean_seconds_lines
from lab_helpers import QUIET
from lab_helpers import rows as read_results

LR = "training.optimizer.learn_rate"
GRID = [0.0005, 0.001, 0.003]
# ce with another dropout: the fake cells score it as ce, whose own dev-best rate is 0.001,
# while spacy_ner's trials choose 0.003 (lab_helpers.DEV_BY_LR)
VARIANT = {"name": "ce_dropout", "base": "ce", "overrides": {"training.dropout": 0.2}}


def _spec(variant=None, methods=("ce", "spacy_ner"), **kw):
    data = {"name": "t", "corpora": ["toy"], "methods": [*methods, *([variant] if variant else [])],
            "sizes": [10, 20], "partitions": 2, "tune": {"grid": {LR: GRID}}}
    data.update(kw)
    return {k: v for k, v in data.items() if v is not None}


def _tuned_as(target="spacy_ner"):
    return {**VARIANT, "tuned_as": target}


def test_a_method_tuned_as_another_has_no_trials_and_selects_with_the_others():
    own = parse_spec(_spec(VARIANT)).cells()
    cells = parse_spec(_spec(_tuned_as())).cells()
    trials = [c for c in cells if c.tuning is not None]
    # 2 sizes x 3 points: 3 methods' trials before, 2 methods' now; the reported cells are as many
    assert len([c for c in own if c.tuning is not None]) == 2 * 3 * 3 and len(trials) == 2 * 2 * 3
    assert Counter(c.method for c in trials) == {"ce": 6, "spacy_ner": 6}
    assert len(cells) - len(trials) == len(own) - (2 * 3 * 3) == 3 * 2 * 2
    reported = {(c.method, c.size, c.partition): c for c in cells if c.tuning is None}
    spacy_trials = {c.key for c in trials if c.method == "spacy_ner"}
    for (method, size, partition), cell in reported.items():
        if method != "ce_dropout":
            assert "tuned_as" not in cell.selection
            continue
        target = reported[("spacy_ner", size, partition)]
        assert cell.selection["tuned_as"] == "spacy_ner"
        assert cell.selection["trials"] == target.selection["trials"]  # spacy_ner's trials of the same group
        assert {k for keys in cell.selection["trials"] for k in keys} <= spacy_trials
        assert len(cell.selection["trials"]) == len(GRID)


def test_keys_of_other_methods_stay_and_the_key_names_the_trials_that_choose():
    plain = {c.id.split("#")[0]: c.key for c in parse_spec(_spec()).cells()}
    own = {c.id.split("#")[0]: c.key for c in parse_spec(_spec(VARIANT)).cells()}
    as_spacy = {c.id.split("#")[0]: c.key for c in parse_spec(_spec(_tuned_as("spacy_ner"))).cells()}
    as_ce = {c.id.split("#")[0]: c.key for c in parse_spec(_spec(_tuned_as("ce"))).cells()}
    others = {label: key for label, key in as_spacy.items() if "/ce_dropout/" not in label}
    assert others == plain == {label: key for label, key in own.items() if "/ce_dropout/" not in label}
    assert others == {label: key for label, key in as_ce.items() if "/ce_dropout/" not in label}
    variant = sorted(label for label in as_spacy if "/ce_dropout/" in label)
    assert len(variant) == 4 and variant == sorted(label for label in as_ce if "/ce_dropout/" in label)
    # the same training and grid, chosen by other trials: other cells, so rows never mix
    assert all(len({own[label], as_spacy[label], as_ce[label]}) == 3 for label in variant)
    assert as_spacy == {c.id.split("#")[0]: c.key for c in parse_spec(_spec(_tuned_as("spacy_ner"))).cells()}  # stable


def _run(tmp_path, spec, **kw):
    out = tmp_path / "r"
    outcome = run_study(spec.cells(), out, workers=0, runner=lab_helpers.tuning_cell, **QUIET, **kw)
    return outcome, read_results(out), out


def test_the_reported_cells_train_with_the_point_the_others_trials_chose(tmp_path):
    outcome, rows, out = _run(tmp_path, parse_spec(_spec(_tuned_as())))
    assert (outcome.total, outcome.ok, outcome.failed) == (12 + 12, 24, 0)
    variant = [r for r in rows if r["method"] == "ce_dropout"]
    assert len(variant) == 4 and not any(r.get("tuning") for r in variant)
    for row in variant:  # spacy_ner's dev-best 0.003, not ce's 0.001 (what its own trials would pick)
        assert row["tuned"]["point"] == {LR: 0.003} and row["scores"]["lr"] == 0.003 and row["overrides"][LR] == 0.003
        assert row["tuned"]["tuned_as"] == "spacy_ner"
        assert row["tuned"]["dev_score"] == lab_helpers.DEV_BY_LR["spacy_ner"][0.003]
        assert row["overrides"]["training.dropout"] == 0.2
    for row in rows:
        if row["method"] == "ce" and not row.get("tuning"):
            assert row["tuned"]["point"] == {LR: 0.001} and "tuned_as" not in row["tuned"]
    # what the tables and `study status` say of it
    md = write_report(out, tmp_path / "rep", metric="ents_f", plots=False)["markdown"]
    assert "| ce_dropout | learn_rate=0.003 (dev 45.0 of spacy_ner's trials) | learn_rate=0.003 (dev 45.0 of spacy_ner's trials) |" in md
    lines = mean_seconds_lines(parse_spec(_spec(_tuned_as())).cells(), {r["key"]: r for r in rows})
    assert [line.split(":")[0].strip() for line in lines[1:]] == ["ce", "spacy_ner", "ce_dropout"]  # the spec's order
    assert [line for line in lines if "ce_dropout" in line][0].endswith("; none, tuned as spacy_ner")
    assert [line for line in lines if line.startswith("  ce:")][0].endswith("(n=6)")


def test_a_method_run_alone_runs_the_trials_of_the_method_it_is_tuned_as(tmp_path):
    import yaml

    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(_spec(_tuned_as())))
    alone = load_spec(path, only_methods=["ce_dropout"])
    cells = alone.cells()
    assert [m.name for m in alone.methods] == ["ce_dropout"] and [m.name for m in alone.choosers] == ["spacy_ner"]
    assert Counter((c.method, c.tuning is not None) for c in cells) == {("spacy_ner", True): 6, ("ce_dropout", False): 4}
    whole = {c.key for c in load_spec(path).cells()}
    assert {c.key for c in cells} <= whole  # the same cells as in the whole grid
    outcome, rows, out = _run(tmp_path, alone)
    assert outcome.ok == 10 and all(r["tuned"]["point"] == {LR: 0.003} for r in rows if not r.get("tuning"))
    both = load_spec(path, only_methods=["ce_dropout", "spacy_ner"])
    assert both.choosers == [] and Counter(c.method for c in both.cells() if c.tuning is not None) == {"spacy_ner": 6}
    later = run_study(load_spec(path).cells(), out, workers=0, runner=lab_helpers.tuning_cell, **QUIET)
    assert (later.skipped, later.ok) == (10, 14)  # spacy_ner's trials and the variant's cells are done


def test_the_config_of_a_method_whose_trials_run_alone_is_checked(tmp_path):
    import yaml

    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(_spec(_tuned_as("mine"), methods=("ce", {"name": "mine", "config": "missing.cfg"}))))
    with pytest.raises(SpecError, match=r"spec.yaml: method 'mine': config missing.cfg not found; a relative path is read "
                                        r"from the folder the command runs in, /"):
        load_spec(path, only_methods=["ce_dropout"]).check_configs()


def test_a_cell_tuned_as_a_method_whose_trials_failed_says_whose(tmp_path):
    spec = parse_spec(_spec(_tuned_as("broken"), methods=("ce", {"name": "broken", "config": "y.cfg"}), sizes=[10], partitions=1))
    outcome, rows, _ = _run(tmp_path, spec)
    assert Counter((r["method"], r["status"]) for r in rows) == {("ce", "ok"): 4, ("broken", "failed"): 4, ("ce_dropout", "failed"): 1}
    (refused,) = [r for r in rows if r["method"] == "ce_dropout"]
    assert refused["error"].startswith("tuning: tuned as broken: no grid point has a dev ents_f on every tuning partition (3 of 3 trials")


@pytest.mark.parametrize(
    "variant,keys,message",
    [
        (_tuned_as(), {"tune": None}, "methods[2] (ce_dropout).tuned_as: 'spacy_ner': takes the grid point another method's "
                                      "tuning trials choose, but the spec has no tune: block"),
        (_tuned_as("ce_dropout"), {}, "methods[2] (ce_dropout).tuned_as: 'ce_dropout' is the method itself; "
                                      "leave tuned_as out for trials of its own"),
        (_tuned_as("bilstm"), {}, "methods[2] (ce_dropout).tuned_as: 'bilstm' is not a method of this spec (ce, spacy_ner, ce_dropout)"),
        (_tuned_as(), {"methods": ["ce", {"name": "spacy_ner", "tuned_as": "ce"}]},
         "methods[2] (ce_dropout).tuned_as: 'spacy_ner' has no trials of its own (tuned_as: ce); name a method whose trials choose (e.g. 'ce')"),
        (_tuned_as(3), {}, "methods[2] (ce_dropout).tuned_as: 3 is not a method name"),
    ],
)
def test_bad_tuned_as_is_refused_with_file_and_key(variant, keys, message):
    with pytest.raises(SpecError) as err:
        parse_spec(_spec(variant, **keys), source="my.yaml")
    assert str(err.value) == "my.yaml: " + message


def test_the_transformer_ablation_keeps_the_recipes_learn_rate_and_shares_its_trials(monkeypatch):
    """campaign_trf_ablation: the six variants take lowres_best_trf's rate, crf tunes its own;
    every trial left is a trial of campaign_trf_recipe (the same key), so none is trained twice."""
    from lab_helpers import LAB

    monkeypatch.chdir(LAB)  # its recipe's config file is named from the project folder, as study run reads it

    ablation = load_spec(LAB / "studies" / "campaign_trf_ablation.yaml", configs_dir=LAB / "configs")
    recipe = {c.key for c in load_spec(LAB / "studies" / "campaign_trf_recipe.yaml", configs_dir=LAB / "configs").cells()}
    cells = ablation.cells()
    trials = [c for c in cells if c.tuning is not None]
    assert Counter(c.method for c in trials) == {"lowres_best_trf": 18, "crf": 18} and {c.key for c in trials} <= recipe
    reported = {(c.method, c.corpus, c.size, c.partition): c for c in cells if c.tuning is None}
    assert len(reported) == 8 * 3 * 2 * 3
    for (method, corpus, size, partition), cell in reported.items():
        own = reported[("lowres_best_trf", corpus, size, partition)] if method != "crf" else cell
        assert cell.selection["trials"] == own.selection["trials"]
        assert cell.selection.get("tuned_as") == (None if method in ("crf", "lowres_best_trf") else "lowres_best_trf")


def test_a_missing_config_is_named_once_with_the_methods_that_read_it(tmp_path):
    """Run from another folder than the one a spec's paths are relative to, every method that
    reads the same file names it in one problem, and the error says which folder was read."""
    import yaml

    path = tmp_path / "spec.yaml"
    methods = ("ce", {"name": "a", "config": "gone.cfg"}, {"name": "b", "config": "gone.cfg"})
    path.write_text(yaml.safe_dump(_spec(_tuned_as("a"), methods=methods)))
    with pytest.raises(SpecError) as err:
        load_spec(path).check_configs()
    message = str(err.value)
    assert "methods 'a', 'b': config gone.cfg not found; a relative path is read from the folder the command runs in, " in message
    assert message.count("gone.cfg") == 1
