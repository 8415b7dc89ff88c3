"""Study specs: expansion into cells, stable ids, methods on an encoder's base, clear errors.
(The training-set blocks themselves are tested in test_training_sets.py.)"""
from pathlib import Path

import pytest
import yaml

from auc_ner_lab.spec import SpecError, load_spec, parse_spec
from spacy_auc_ner.api import method_config

ROOT = Path(__file__).parents[1]
STUDIES = ROOT / "studies"


def _spec(**kw):
    data = {"name": "t", "corpora": ["toy"], "methods": ["ce", "ova_auc"], "sizes": [10, 20], "partitions": 2}
    data.update(kw)
    return {k: v for k, v in data.items() if v is not None}


def test_preset_spec_expands_to_the_issue_grid():
    spec = load_spec(STUDIES / "preset_cpu.yaml")
    cells = spec.cells()
    assert len(cells) == 5 * 3 * 3
    assert {c.method for c in cells} == {"ce", "spacy_ner", "ova_auc_all", "ova_bce", "two_task_auc"}
    assert {c.describe()["encoder"] for c in cells} == {"cpu"}
    assert sorted({c.size for c in cells}) == [50, 100, 200]
    assert len({c.id for c in cells}) == len(cells)
    assert {c.train for c in cells} == {str(Path("corpus/ncbi_disease/train.spacy"))}
    # partition-major: the first 15 cells are a whole grid of partition 0
    assert {c.partition for c in cells[:15]} == {0}


@pytest.mark.parametrize("name", ["paper_lowres.yaml", "paper_imbalance.yaml"])
def test_paper_specs_parse(name):
    spec = load_spec(STUDIES / name)
    assert spec.partitions == 10 and spec.gpu_id == 0 and spec.encoder == "trf"
    assert "conll2003" in spec.corpora
    assert {"ova_auc", "ova_auc_sampled"} <= {m.name for m in spec.methods}  # Algorithms 1 and 2
    cell = spec.cells()[0]
    assert cell.overrides["paths.transformer"] == "bert-base-cased"
    assert cell.describe()["encoder"] == "trf" and cell.base_config == str(Path("configs/base_trf.cfg"))


def test_cell_ids_are_stable_and_track_what_is_trained():
    a = parse_spec(_spec()).cells()
    assert [c.id for c in a] == [c.id for c in parse_spec(_spec()).cells()]
    assert a[0].id.startswith("toy/ce/n=10/p0#")
    moved = parse_spec(_spec(), corpora_dir="/elsewhere").cells()
    assert [c.id for c in moved] == [c.id for c in a]  # paths do not matter
    assert moved[0].train == str(Path("/elsewhere/toy/train.spacy"))
    changed = parse_spec(_spec(overrides={"training.max_steps": 5})).cells()
    assert not {c.id for c in changed} & {c.id for c in a}
    on_trf = parse_spec(_spec(encoder="trf")).cells()
    assert not {c.id for c in on_trf} & {c.id for c in a}


def test_same_partition_same_training_sample_across_methods():
    cells = parse_spec(_spec()).cells()
    by = {(c.method, c.size, c.partition): c for c in cells}
    ce, auc = by[("ce", 10, 1)], by[("ova_auc", 10, 1)]
    assert ce.overrides["corpora.train"] == auc.overrides["corpora.train"]
    assert ce.overrides["corpora.train"]["seed"] == 1 and ce.overrides["system.seed"] == 1
    assert by[("ce", 10, 0)].overrides["corpora.train"]["seed"] == 0


def test_overrides_load_into_a_spacy_config():
    spec = parse_spec(_spec(setting="missing", sizes=[10], mask_p=[0.5], dev_size=7), configs_dir=ROOT / "configs")
    cell = spec.cells()[0]
    config = cell.training_config()
    assert config["components"]["auc_ner"]["scheme"] == "softmax"  # ce on the CPU base
    assert config["training"] == method_config("ce", "cpu", ROOT / "configs")["training"]
    train = config["corpora"]["train"]
    assert train["@readers"] == "spacy_auc_ner.MaskedEntities.v1"
    assert train["corpus"]["@readers"] == "spacy_auc_ner.LowResource.v1" and train["corpus"]["n"] == 10
    assert config["corpora"]["dev"]["n"] == 7
    assert config["system"]["seed"] == 0


def test_methods_by_name_base_or_config(tmp_path):
    configs = ROOT / "configs"
    spec = parse_spec(_spec(methods=[
        "ova_auc_sampled",
        {"name": "auc_m3", "base": "ova_auc_sampled", "overrides": {"components.auc_ner.strategy.m": 3}},
        {"name": "mine", "config": "my.cfg", "overrides": {"training.dropout": 0.2}},
    ], encoder="trf"), configs_dir=configs)
    sampled, m3, mine = spec.methods
    assert sampled.overrides == {} and m3.overrides == {"components.auc_ner.strategy.m": 3}
    assert sampled.config == m3.config == str(configs / "methods" / "ova_auc_sampled.cfg")
    assert sampled.base_config == m3.base_config == str(configs / "base_trf.cfg")
    assert mine.config == "my.cfg" and mine.base_config is None  # a full config of the user's, as given
    cells = {c.method: c for c in spec.cells() if c.partition == 0 and c.size == 10}
    strategy = cells["auc_m3"].training_config()["components"]["auc_ner"]["strategy"]
    assert strategy == {"@misc": "spacy_auc_ner.SampledClassifiers.v1", "m": 3}
    assert cells["auc_m3"].training_config()["paths"]["transformer"] == "bert-base-cased"
    (tmp_path / "my.cfg").write_text(method_config("ce", "cpu", configs).to_str(interpolate=False))
    mine_cell = parse_spec(_spec(methods=[{"name": "mine", "config": str(tmp_path / "my.cfg")}])).cells()[0]
    assert mine_cell.training_config()["corpora"]["train"]["n"] == 10 and mine_cell.describe()["encoder"] is None


def test_imbalance_and_resampling_values():
    spec = parse_spec(_spec(setting="imbalance", shares=[0.01, 0.1], sizes=[100]))
    cells = spec.cells()
    assert len(cells) == 2 * 2 * 2 and cells[0].id.startswith("toy/ce/n=100/share=0.01/p0#")
    res = parse_spec(_spec(setting="resampling", resamplers=["none", "sCRD"], sizes=None)).cells()
    assert {c.value for c in res} == {"none", "sCRD"} and {c.size for c in res} == {None}


@pytest.mark.parametrize(
    "change,message",
    [
        ({"bogus": 1}, "unknown key(s) bogus"),
        ({"setting": "weird"}, "setting: 'weird' is not one of"),
        ({"sizes": None}, "sizes: a lowres study needs"),
        ({"sizes": [10, "x"]}, "sizes[1]: 'x' is not a positive"),
        ({"sizes": [10, 10]}, "sizes: 10 is listed twice"),
        ({"methods": ["nope"]}, "methods[0]: unknown method 'nope'; known: "),
        ({"methods": [{"name": "x", "base": "ce_trf"}]}, "the method 'ce' on encoder 'trf'"),
        ({"encoder": "gpu"}, "encoder: 'gpu' is not one of cpu, trf"),
        ({"methods": [{"name": "a", "config": "a.cfg", "base": "ce"}]}, "methods[0] (a): give one of 'base' (a method), 'recipe' (a recipe) or 'config' (a full config file), not base and config"),
        ({"methods": [{"name": "r", "recipe": "lowres_bst"}]}, "methods[0] (r): unknown recipe 'lowres_bst'; known: lowres_best, lowres_best_trf, lowres_crf_auc, lowres_spacy_ner"),
        ({"methods": [{"name": "r", "recipe": "lowres_best"}], "encoder": "trf"}, "methods[0] (r): recipe 'lowres_best' is built on the cpu base; this spec's encoder is 'trf'"),
        ({"methods": [{"name": "r", "recipe": "lowres_best_trf"}]}, "methods[0] (r): recipe 'lowres_best_trf' is built on the trf base; this spec's encoder is 'cpu'"),
        ({"methods": [{"name": "ce", "colour": 1}]}, "methods[0] (ce): unknown key(s) colour"),
        ({"methods": ["ce", "ce"]}, "methods: 'ce' is listed twice"),
        ({"corpora": None}, "corpora: name at least one corpus"),
        ({"corpora": {"toy": {"tets": "x"}}}, "corpora.toy: unknown key(s) tets"),
        ({"setting": "imbalance"}, "shares: a imbalance study needs"),
        ({"setting": "imbalance", "shares": [5]}, "shares[0]: 5 is not a fraction between 0 and 1 (write 2% as 0.02)"),
        ({"setting": "missing", "mask_p": [0.1], "shares": [0.1]}, "shares: only used by the imbalance setting"),
        ({"partitions": 0}, "partitions: 0 is not a positive"),
        ({"runner": "nocolon"}, "runner: 'nocolon' is not a 'module:function'"),
        ({"gpu_id": "cuda"}, "gpu_id: 'cuda' is not a GPU number (0, 1, ...) or -1 / null for the CPU"),
        ({"gpu_id": -2}, "gpu_id: -2 is not a GPU number"),
    ],
)
def test_spec_errors_name_file_and_key(change, message):
    with pytest.raises(SpecError) as err:
        parse_spec(_spec(**change), source="my.yaml")
    assert str(err.value).startswith("my.yaml: ")
    assert message in str(err.value)


def test_a_config_that_is_not_one_is_named_in_one_line(tmp_path):
    broken = tmp_path / "broken.cfg"
    broken.write_text("[nlp]\nlang = \n[")
    # the file and the line the parser refused (spacy_auc_ner's config_syntax_error)
    with pytest.raises(SpecError, match=r"^my.yaml: methods\[0\]( \(b\))?: .*broken.cfg:3: cannot parse '\[' .*$"):
        parse_spec(_spec(methods=[{"name": "b", "config": str(broken)}]), source="my.yaml")


def test_gpu_id_null_means_the_cpu():
    # _spec drops keys whose value is None, so the null goes in afterwards
    assert parse_spec({**_spec(), "gpu_id": None}).gpu_id == -1
    assert parse_spec(_spec(gpu_id=0)).gpu_id == 0
    assert parse_spec(_spec(gpu_id=0), gpu_id=-1).gpu_id == -1


def test_spec_file_errors(tmp_path):
    with pytest.raises(SpecError, match="study spec not found"):
        load_spec(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: [unclosed\n")
    with pytest.raises(SpecError, match="bad.yaml: not valid YAML"):
        load_spec(bad)
    listy = tmp_path / "list.yaml"
    listy.write_text(yaml.safe_dump(["ce"]))
    with pytest.raises(SpecError, match="list.yaml: a study spec is a mapping"):
        load_spec(listy)


def test_check_files_lists_every_missing_file(tmp_path):
    spec = parse_spec(_spec(), corpora_dir=tmp_path, configs_dir=ROOT / "configs", source="s.yaml")
    with pytest.raises(SpecError) as err:
        spec.check_files()
    text = str(err.value)
    assert "corpus 'toy': train file" in text and "test file" in text and "config" not in text


def test_every_preset_cell_loads_as_a_spacy_config():
    spec = load_spec(STUDIES / "preset_cpu.yaml", configs_dir=ROOT / "configs")
    seen = set()
    for cell in spec.cells():
        if cell.method in seen:
            continue
        seen.add(cell.method)
        config = cell.training_config()
        assert config["corpora"]["train"]["@readers"] == "spacy_auc_ner.LowResource.v1"
        assert config["training"]["max_steps"] == 600
    assert len(seen) == 5


def test_cli_dry_run_and_spec_errors(tmp_path):
    from typer.testing import CliRunner

    from auc_ner_lab.study_cli import study_app
    from lab_data import write_toy_corpus

    runner = CliRunner()
    corpora = write_toy_corpus(tmp_path / "corpora")
    (corpora / "toy").rename(corpora / "ncbi_disease")  # the dry run checks the corpus files, as the run does
    out = runner.invoke(study_app, ["run", str(STUDIES / "preset_cpu.yaml"), "--dry-run", "--corpora-dir", str(corpora),
                                    "--results", str(tmp_path / "r.jsonl")])
    assert out.exit_code == 0, out.output
    assert "ncbi_disease/ce/n=50/p0#" in out.output and "45 of 45 cells to run" in out.output
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({"corpora": ["x"], "methods": ["nope"], "sizes": [1]}))
    out = runner.invoke(study_app, ["run", str(bad)])
    assert out.exit_code == 1 and "Error: " in out.output and "unknown method 'nope'" in out.output
    missing_files = runner.invoke(study_app, ["run", str(STUDIES / "preset_cpu.yaml"), "--corpora-dir", str(tmp_path),
                                              "--results", str(tmp_path / "r.jsonl")])
    assert missing_files.exit_code == 1 and "train file" in missing_files.output
    assert not (tmp_path / "r.jsonl").exists()


def test_subset_of_a_grid_shares_the_whole_grids_ids():
    full = load_spec(STUDIES / "paper_lowres.yaml")
    part = load_spec(STUDIES / "paper_lowres.yaml", set_values=["sizes=[20, 50, 100]", "partitions=3"],
                     only_corpora=["conll2003"])
    cells = part.cells()
    assert len(cells) == len(full.methods) * 3 * 3 and {c.corpus for c in cells} == {"conll2003"}
    assert {c.id for c in cells} <= {c.id for c in full.cells()}
    with pytest.raises(SpecError, match="--corpus nope not in the spec's corpora"):
        load_spec(STUDIES / "paper_lowres.yaml", only_corpora=["nope"])
    with pytest.raises(SpecError, match="is not KEY=VALUE"):
        load_spec(STUDIES / "paper_lowres.yaml", set_values=["sizes"])
    with pytest.raises(SpecError, match=r"sizes\[0\]: 'x' is not a positive"):
        load_spec(STUDIES / "paper_lowres.yaml", set_values=["sizes=[x]"])


def test_some_methods_of_a_grid_share_the_whole_grids_ids():
    full = load_spec(STUDIES / "lowres_recipe.yaml")
    # named as the spec names them (entries with their own config or extras too), kept in the spec's order
    part = load_spec(STUDIES / "lowres_recipe.yaml", only_methods=["lowres_spacy_ner_rounds1_no_augment", "spacy_ner"],
                     only_corpora=["s800"], set_values=["sizes=[20]"])
    assert [m.name for m in part.methods] == ["spacy_ner", "lowres_spacy_ner_rounds1_no_augment"]
    cells = part.cells()
    assert len(cells) == 2 * full.partitions and {c.method for c in cells} == {"spacy_ner", "lowres_spacy_ner_rounds1_no_augment"}
    assert {c.id for c in cells} <= {c.id for c in full.cells()}
    with pytest.raises(SpecError, match=r"lowres_recipe.yaml: --method nope not in the spec's methods \(spacy_ner, lowres_spacy_ner_rounds1, "):
        load_spec(STUDIES / "lowres_recipe.yaml", only_methods=["spacy_ner", "nope"])


# studies/claims.yaml is the claims file of `study verdicts`, not a spec (tests/test_study_verdicts.py)
@pytest.mark.parametrize("path", sorted(p for p in STUDIES.glob("*.yaml") if p.name != "claims.yaml"), ids=lambda p: p.stem)
def test_every_study_spec_expands_and_its_methods_build(path, monkeypatch):
    from spacy.util import load_model_from_config

    monkeypatch.chdir(ROOT)  # a spec's config files are named from the project folder, as study run reads them
    spec = load_spec(path, configs_dir=ROOT / "configs")
    cells = spec.cells()
    assert len({c.id for c in cells}) == len(cells)
    first = {}
    for cell in cells:
        first.setdefault(cell.method, cell)
    assert set(first) == {m.name for m in spec.methods}
    for cell in first.values():
        nlp = load_model_from_config(cell.training_config().merge({"paths": {"transformer": "unused"}}) if spec.encoder == "trf"
                                     else cell.training_config(), auto_fill=True, validate=True)
        assert nlp.pipe_names


def test_a_method_override_wins_over_the_spec_override_of_the_same_key():
    """campaign_minilm's spacy_ner_full_budget sets training.patience 0 where the spec sets 36
    for every method; the method's own key used to lose, training the spec's value under the
    other method's id."""
    spec = parse_spec(_spec(overrides={"training.patience": 36},
                            methods=["ce", {"name": "ce_no_patience", "base": "ce", "overrides": {"training.patience": 0}}]))
    cells = {c.method: c for c in spec.cells() if c.partition == 0}
    assert cells["ce"].overrides["training.patience"] == 36
    assert cells["ce_no_patience"].overrides["training.patience"] == 0
    assert cells["ce"].id.split("#")[1] != cells["ce_no_patience"].id.split("#")[1]


def test_size_overrides_give_each_size_its_budget_and_keep_the_campaigns_keys():
    """One spec with sizes 20 and 50 and each size's steps (size_overrides) has the cells of the
    two one-size MiniLM specs: the same keys, so their rows are this spec's."""
    joint = load_spec(STUDIES / "campaign_trf_recipe.yaml", corpora_dir=ROOT / "corpus", only_methods=["crf"], only_corpora=["ncbi_disease"])
    keys = {c.key for c in joint.cells()}
    for size in (20, 50):
        alone = load_spec(STUDIES / f"campaign_minilm_{size}.yaml", corpora_dir=ROOT / "corpus", only_methods=["crf"], only_corpora=["ncbi_disease"])
        assert {c.key for c in alone.cells()} <= keys
        cell = next(c for c in joint.cells() if c.size == size and c.tuning is None)
        assert cell.overrides["training.max_steps"] == {20: 90, 50: 210}[size]
    # part of the grid (--set 'sizes=[20]', as scripts/run_campaign_trf.sh runs it) has the same cells
    part = load_spec(STUDIES / "campaign_trf_recipe.yaml", corpora_dir=ROOT / "corpus", only_methods=["crf"], only_corpora=["ncbi_disease"], set_values=["sizes=[20]"])
    assert {c.key for c in part.cells()} == {c.key for c in joint.cells() if c.size == 20}
    with pytest.raises(SpecError, match=r"size_overrides\[0\]"):
        parse_spec({"corpora": ["toy"], "methods": ["ce"], "sizes": [20], "size_overrides": {0: {"training.max_steps": 1}}})


def test_a_dev_only_study_never_scores_test_and_its_cells_are_other_rows():
    """score_on: dev (an ablation that chooses parts on dev): reported cells have no test split,
    their rows say so and their keys differ from the same training scored on test; tuning
    trials, dev-only anyway, keep their keys."""
    data = {"corpora": ["toy"], "methods": ["ce"], "sizes": [20], "tune": {"grid": {"training.dropout": [0.1, 0.2]}}}
    on_test, on_dev = (parse_spec({**data, **extra}).cells() for extra in ({}, {"score_on": "dev"}))
    trials = lambda cells: [c.key for c in cells if c.tuning is not None]  # noqa: E731
    assert trials(on_test) == trials(on_dev)
    test_cell, dev_cell = (next(c for c in cells if c.tuning is None) for cells in (on_test, on_dev))
    assert test_cell.test_split() == test_cell.test and dev_cell.test_split() is None and test_cell.key != dev_cell.key
    assert dev_cell.describe()["scored_on"] == "dev" and "scored_on" not in test_cell.describe()
    from auc_ner_lab.aggregate import row_score

    row = {"scored_on": "dev", "scores": {"dev_scores": {"ents_f": 0.4}}}
    assert row_score(row, "ents_f") == 0.4 and row_score({"scores": {"ents_f": 0.3, "dev_scores": {"ents_f": 0.4}}}, "ents_f") == 0.3
    with pytest.raises(SpecError, match="score_on: 'test2' is not one of test, dev"):
        parse_spec({**data, "score_on": "test2"})


def test_a_size_override_of_a_size_the_spec_lacks_is_refused(tmp_path):
    """Issue 66 S9: a size_overrides entry of a size not in `sizes` (a typo: 300 for 30) was
    ignored without a word; it is refused when the spec is read, naming the key. Part of a grid
    (`--set 'sizes=[20]'`) keeps the entries of the file's own sizes it leaves out."""
    with pytest.raises(SpecError) as err:
        parse_spec(_spec(sizes=[20, 50], size_overrides={20: {"training.max_steps": 90}, 300: {"training.max_steps": 9}}),
                   source="my.yaml")
    assert str(err.value) == "my.yaml: size_overrides: 300 is not one of the spec's sizes (20, 50)"
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(_spec(sizes=[20, 50], size_overrides={20: {"training.max_steps": 90}, 50: {"training.max_steps": 210}})))
    part = load_spec(path, set_values=["sizes=[20]"])
    assert {c.size for c in part.cells()} == {20} and part.size_overrides == {20: {"training.max_steps": 90}}
    with pytest.raises(SpecError, match=r"^.*s\.yaml: size_overrides: 300 is not one of the spec's sizes \(20\)$"):
        load_spec(path, set_values=["sizes=[20]", "size_overrides={300: {training.max_steps: 9}}"])


NO_DEV = {"@readers": "spacy_auc_ner.NoDev.v1"}
TUNE = {"grid": {"training.dropout": [0.1, 0.2]}}


@pytest.mark.parametrize("change,key", [
    ({"overrides": {"corpora.dev": NO_DEV}}, "overrides.corpora.dev"),
    ({"size_overrides": {10: {"corpora.dev": NO_DEV}}}, "size_overrides[10].corpora.dev"),
    ({"methods": ["ce", {"name": "o", "base": "ova_auc", "overrides": {"corpora.dev": NO_DEV}}]}, "methods[1] (o).overrides.corpora.dev"),
    ({"methods": [{"name": "ce", "corpus_overrides": {"toy": {"corpora.dev.@readers": NO_DEV["@readers"]}}}]},
     "methods[0] (ce).corpus_overrides.toy.corpora.dev.@readers"),
    ({"corpora": {"toy": {"overrides": {"corpora.dev": NO_DEV}}}}, "corpora.toy.overrides.corpora.dev"),
])
@pytest.mark.parametrize("needs,why", [({"tune": TUNE}, "tune"), ({"score_on": "dev"}, "score_on: dev")])
def test_no_dev_corpus_with_tuning_or_dev_scores_is_refused(change, key, needs, why):
    """Issue 66 S10: cells without a dev corpus (NoDev.v1 in an overrides) in a tuned study
    failed their trials ("failed or missing; rerun to retry them"), and with score_on: dev wrote
    ok rows without a score; the spec is refused when read, in one line naming the key."""
    parse_spec(_spec(**change))  # without tuning or dev scores: a no-dev study
    with pytest.raises(SpecError) as err:
        parse_spec(_spec(**change, **needs), source="my.yaml")
    assert str(err.value).startswith(f"my.yaml: {key}: spacy_auc_ner.NoDev.v1 leaves the cells no dev corpus, ")
    assert why in str(err.value) and "\n" not in str(err.value)
    parse_spec(_spec(**change, **needs, dev_size=5))  # a dev sample replaces the dev corpus


def test_a_method_tuned_as_another_trains_without_dev_in_a_tuned_study():
    """Its cells train with the point the other method's trials choose: no trial of its own
    needs a dev corpus."""
    methods = ["ce", {"name": "o", "base": "ova_auc", "tuned_as": "ce", "overrides": {"corpora.dev": NO_DEV}}]
    assert [m.name for m in parse_spec(_spec(methods=methods, tune=TUNE)).methods] == ["ce", "o"]
