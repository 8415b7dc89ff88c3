"""The protocol "n in all" (studies/campaign_trf_nodev.yaml): its learn rates are the ones each
method's own trials of campaign_trf_recipe choose on the other corpora, its draws are that
campaign's, and its cells have no dev sample."""
from pathlib import Path

from auc_ner_lab.spec import load_spec
from auc_ner_lab.store import ResultsStore, latest_rows
from auc_ner_lab.tuning import leave_one_corpus_out

LAB = Path(__file__).resolve().parents[1]
RATE = "training.optimizer.learn_rate.initial_rate"


def test_the_learn_rates_are_chosen_leaving_the_corpus_out(monkeypatch):
    """Recomputed from the committed trial rows: a spec edited by hand, or rows that choose
    otherwise, fail here."""
    monkeypatch.chdir(LAB)
    tuned = load_spec("studies/campaign_trf_recipe.yaml")
    latest = latest_rows(ResultsStore("results/campaign_trf_recipe").rows())
    chosen = leave_one_corpus_out(tuned, latest)
    nodev = load_spec("studies/campaign_trf_nodev.yaml")
    for cell in nodev.cells():
        assert cell.overrides[RATE] == chosen[cell.method][cell.corpus].point[RATE], (cell.method, cell.corpus)


def test_the_draws_are_the_dev_campaigns_and_there_is_no_dev_sample(monkeypatch):
    monkeypatch.chdir(LAB)
    twins = {(c.method, c.corpus, c.size, c.partition): c for c in load_spec("studies/campaign_trf_recipe.yaml").cells() if c.tuning is None}
    for cell in load_spec("studies/campaign_trf_nodev.yaml").cells():
        twin = twins[(cell.method, cell.corpus, cell.size, cell.partition)]
        assert cell.overrides["corpora.train"] == twin.overrides["corpora.train"] and cell.seed == twin.seed
        assert cell.overrides["corpora.dev"] == {"@readers": "spacy_auc_ner.NoDev.v1"}


def test_leave_one_corpus_out_by_hand(monkeypatch):
    """Two corpora, two points: for corpus a the point best on b alone, and the other way."""
    from types import SimpleNamespace

    from auc_ner_lab.tuning import TuneSpec

    cells, latest = [], {}
    for corpus, scores in {"a": (0.9, 0.1), "b": (0.2, 0.3)}.items():
        for rate, score in zip((1, 2), scores):
            key = f"{corpus}{rate}"
            cells.append(SimpleNamespace(method="m", corpus=corpus, key=key, tuning={"partition": 0, "point": {RATE: rate}}))
            latest[key] = {"status": "ok", "scores": {"dev_scores": {"ents_f": score}}}
    spec = SimpleNamespace(tune=TuneSpec({RATE: [1, 2]}, 1, "ents_f"), corpora={"a": {}, "b": {}}, cells=lambda: cells,
                           tuning_methods=lambda: [SimpleNamespace(name="m")])
    chosen = leave_one_corpus_out(spec, latest)
    assert chosen["m"]["a"].point == {RATE: 2} and chosen["m"]["b"].point == {RATE: 1}



def test_the_shipped_cpu_recipe_trains_the_budget_its_rows_measured(monkeypatch):
    """`lowres_best`'s rows trained 600 steps with a dev sample (lowres_recipe: dev scored every
    50, patience 300) and without one (campaign_cpu_nodev); the shipped recipe trains the same,
    not the CPU base's 2000 steps."""
    from spacy_auc_ner.api import recipe_config

    monkeypatch.chdir(LAB)
    shipped = recipe_config("lowres_best")["training"]

    def measured(spec: str):
        return next(c for c in load_spec(spec).cells() if c.method == "lowres_best").training_config()["training"]

    with_dev, without_dev = measured("studies/lowres_recipe.yaml"), measured("studies/campaign_cpu_nodev.yaml")
    assert {k: with_dev[k] for k in ("max_steps", "eval_frequency", "patience")} == {k: shipped[k] for k in ("max_steps", "eval_frequency", "patience")}
    assert without_dev["max_steps"] == shipped["max_steps"] == 600
