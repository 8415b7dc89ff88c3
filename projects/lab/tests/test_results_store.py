"""The results store (auc_ner_lab/store.py): rows found by what their cell trains, whatever a
spec calls it; rows of the old one-file-per-study format brought in once, in their order,
nothing lost; and every committed row still found by its study's cells."""
import json
from pathlib import Path

import pytest
import yaml

import lab_helpers
from auc_ner_lab.cli import study_app
from auc_ner_lab.runner import run_study
from auc_ner_lab.spec import load_spec, parse_spec
from auc_ner_lab.store import UNMATCHED, ResultsStore, extras_cell_key, import_jsonl, old_cell_id, previous_cell_key, rekey, spec_of
from lab_helpers import QUIET, invoke, rows, written_under
from spacy_auc_ner.api import method_config

ROOT = Path(__file__).parents[1]
CONFIGS = ROOT / "configs"
# stores whose spec is not studies/<store>.yaml
SPEC_OF = {"lowres_recipe_rerun": "lowres_recipe"}


def _spec(methods, configs_dir=CONFIGS, **extra):
    return parse_spec({"name": "t", "corpora": ["toy"], "methods": methods, "sizes": [10], "partitions": 2, **extra},
                      configs_dir=configs_dir)


@pytest.mark.parametrize("store", sorted(p.name for p in (ROOT / "results").iterdir() if p.is_dir() and p.name != "lowres_extras"))
def test_every_committed_row_is_found_by_a_cell_of_its_spec(store, monkeypatch):
    """The migration's check, kept: the 2,599 rows of the old results/*.jsonl each went to the
    folder of the cell that matched it then (`study import`); a change to what keys hash, to a
    spec or to a method's config file that would orphan them fails here (an intended change
    of what a method trains leaves its rows unread, and says so here)."""
    monkeypatch.chdir(ROOT)  # a spec's config files are named from the project folder, as study run reads them
    spec = load_spec(ROOT / "studies" / f"{SPEC_OF.get(store, store)}.yaml", corpora_dir="corpus", configs_dir=CONFIGS)
    keys = {c.key for c in spec.cells()}
    found = ResultsStore(ROOT / "results" / store).rows()
    orphans = [r["cell_id"] for r in found if r["key"] is not None and r["key"] not in keys]
    assert found and not orphans, orphans[:3]
    assert all(r.get("imported") for r in found if r["key"] is None)  # only old rows are kept unmatched


def test_a_cells_key_is_what_it_trains_not_its_names(tmp_path):
    method = tmp_path / "mine.cfg"
    method.write_text((CONFIGS / "methods" / "ce.cfg").read_text())
    renamed = tmp_path / "renamed.cfg"
    renamed.write_text("# the same settings, other comments and layout\n" + method.read_text().replace(" = ", "="))
    a = _spec([{"name": "mine", "config": str(method)}]).cells()
    b = _spec([{"name": "new_name", "config": str(renamed)}]).cells()
    assert [c.key for c in a] == [c.key for c in b] and a[0].id.split("#")[0] == "toy/mine/n=10/p0"
    method.write_text(method.read_text() + "\n[training]\ndropout = 0.3\n")
    assert not {c.key for c in _spec([{"name": "mine", "config": str(method)}]).cells()} & {c.key for c in a}
    # the base, an override, an extra, the draw: other cells
    by_name = _spec(["ce"]).cells()
    for other in (_spec(["ce"], encoder="trf"), _spec(["ce"], overrides={"training.max_steps": 5}),
                  _spec([{"name": "ce", "augment": {"copies": 1}}]), _spec(["ce"], seed=3), _spec(["ce"], corpora=["other"])):
        assert not {c.key for c in other.cells()} & {c.key for c in by_name}


def _configs_copy(folder: Path, changes=None) -> Path:
    """The bases and the methods ce and spacy_ner in `folder`, with `changes` (file -> text)."""
    files = {name: (CONFIGS / name).read_text() for name in ("base_cpu.cfg", "base_trf.cfg", "methods/ce.cfg", "methods/spacy_ner.cfg")}
    for name, text in {**files, **(changes or {})}.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return folder


def test_a_cells_key_is_its_assembled_config(tmp_path):
    """The key hashes the config the method assembles to: a base restructured, or a full config
    written out, keeps a cell's rows when what it trains is the same; a base change that only
    one method trains on (spaCy's ner block of base_trf.cfg) is another cell of that method
    only; the corpus paths a config names are not what a cell trains."""
    today = {m: _spec([m]).cells() for m in ("ce", "spacy_ner")}
    # the base with its sections in another order, and a block that no pipe of ce or spacy_ner uses
    base = (CONFIGS / "base_cpu.cfg").read_text()
    head, _, rest = base.partition("[components]")
    moved = _configs_copy(tmp_path / "moved", {"base_cpu.cfg": "[components]" + rest + "\n" + head + "\n[components.tagger]\nfactory = \"tagger\"\n"})
    for m in today:
        assert [c.key for c in _spec([m], configs_dir=moved).cells()] == [c.key for c in today[m]], m
    # spaCy's ner block in the base (what base_trf.cfg gained on 2026-11-24): spacy_ner trains anew, ce does not
    ner = '\n[components.ner]\nfactory = "ner"\n\n[components.ner.model]\n@architectures = "spacy.TransitionBasedParser.v2"\nuse_upper = false\n'
    with_ner = _configs_copy(tmp_path / "ner", {"base_cpu.cfg": base.replace("\n[corpora]\n", ner + "\n[corpora]\n")})
    assert [c.key for c in _spec(["ce"], configs_dir=with_ner).cells()] == [c.key for c in today["ce"]]
    assert not {c.key for c in _spec(["spacy_ner"], configs_dir=with_ner).cells()} & {c.key for c in today["spacy_ner"]}
    # the method written out as a full config (as `spacy-auc-ner config` writes it), naming its corpora
    full = tmp_path / "spacy_ner_full.cfg"
    config = method_config("spacy_ner", "cpu", CONFIGS)
    config["paths"].update(train="corpus/toy/train.spacy", dev="corpus/toy/dev.spacy")
    full.write_text("# written out\n" + config.to_str(interpolate=False))
    assert [c.key for c in _spec([{"name": "spacy_ner", "config": str(full)}]).cells()] == [c.key for c in today["spacy_ner"]]
    # a config that cannot be read is keyed by its text, so that two broken files differ
    broken = [tmp_path / "a.cfg", tmp_path / "b.cfg"]
    for path, text in zip(broken, ("[nlp\n", "[nlp]\nx = \n[")):
        path.write_text(text)
    keys = [{c.key for c in _spec([{"name": "m", "config": str(path), "augment": False}]).cells()} for path in broken]
    assert not keys[0] & keys[1]


def test_rekey_moves_rows_to_the_keys_of_today_and_loses_none(tmp_path):
    """A store keyed the first way (a method file's content and its base's name) comes over to
    today's keys: each cell's rows move, rows of no cell stay, a row already at its new place
    stays at its old one too, and again nothing moves."""
    spec = _spec(["ce", "ova_auc"])
    cells = spec.cells()
    store = ResultsStore(tmp_path / "r")
    for i, cell in enumerate(cells):
        store.add({**written_under(cell, previous_cell_key(cell)), "status": "ok", "finished": f"2026-01-0{i + 1}"})
    store.add({**written_under(cells[0], "0123456789abcdef"), "status": "ok", "finished": "2026-01-08"})  # a cell the spec no longer has
    twice = {**written_under(cells[0], previous_cell_key(cells[0])), "status": "failed", "finished": "2026-01-09"}
    store.add(twice)
    # moved by another clone's rekey too (a copy of its store): the same row, the same file name
    store.add({**twice, "rekeyed_from": [twice["key"]]}, cells[0].key)
    assert not {c.key for c in cells} & {previous_cell_key(c) for c in cells}
    result = invoke(study_app, "rekey", _spec_file(tmp_path, ["ce", "ova_auc"]), "--results", store.path)
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == f"{store.path}: 4 rows of 4 cells moved to their keys of today; 1 rows left where they were (the same row is in the new folder)"
    by_key = {}
    for row in store.rows():
        by_key.setdefault(row["key"], []).append(row["status"])
    assert by_key == {**{c.key: ["ok"] for c in cells[1:]}, cells[0].key: ["ok", "failed"],
                      previous_cell_key(cells[0]): ["failed"], "0123456789abcdef": ["ok"]}
    assert rekey(store, cells) == (0, 0, 1)
    assert len(store.rows_for(cells)) == 5


# keys of studies/lowres_recipe.yaml's cells when pretraining and self-training were extras, as
# the code of commit e93d443 computed them (its rows were stored under them); methods by their
# names of today (`recipe` then, `recipe_no_raw`, `recipe_bilstm_encoder`,
# `bilstm_crf_cal_wd_extras`, `recipe_augment_only`, `recipe_pool5000`: test_lowres_recipe_names.py)
EXTRAS_KEYS = {
    ("lowres_spacy_ner_rounds1", "ncbi_disease", 20, 0): "77631cd34e8a7bf9",
    ("lowres_spacy_ner_no_raw", "conll2003", 50, 1): "a7c7feeb2b261e65",
    ("spacy_ner_bilstm_extras", "s800", 100, 2): "d47eff01a5c11901",
    ("lowres_best", "ncbi_disease", 50, 4): "08f2d5fbab5c9bd2",
    ("crf_auc_extras_no_pretrain", "conll2003", 20, 3): "10524b1e82c13ad5",
    ("lowres_spacy_ner_augment_only", "s800", 20, 0): "7c0a3f7e5d9211a9",
    ("lowres_spacy_ner_pool5000", "ncbi_disease", 100, 1): "a15843ab9c1d4e53",
    ("crf_extras", "conll2003", 100, 0): "3a9116d118b84d34",
}


def test_the_keys_of_cells_with_extras_are_those_their_rows_were_stored_under():
    """`extras_cell_key`: a cell whose procedure is config now finds the key it had when the
    spec gave pretraining and self-training as extras (a recipe, a base method with layers,
    pretraining on the draw, a step switched off), so `study rekey --from extras` moved its rows."""
    spec = load_spec(ROOT / "studies" / "lowres_recipe.yaml", corpora_dir="corpus", configs_dir=CONFIGS)
    cells = {(c.method, c.corpus, c.size, c.partition): c for c in spec.cells()}
    assert {k: extras_cell_key(cells[k]) for k in EXTRAS_KEYS} == EXTRAS_KEYS
    assert not {cells[k].key for k in EXTRAS_KEYS} & set(EXTRAS_KEYS.values())  # today's keys hash the procedure


def test_rekey_from_extras_moves_the_rows_of_cells_with_steps(tmp_path):
    methods = ["ce", {"name": "r", "recipe": "lowres_spacy_ner", "overrides": {"self_training.rounds": 1}}]
    cells = _spec(methods).cells()
    store = ResultsStore(tmp_path / "r")
    for cell in cells:
        store.add({**written_under(cell, extras_cell_key(cell)), "status": "ok"})
    assert [c.key == extras_cell_key(c) for c in cells] == [True, False, True, False]  # ce has no steps: its key stays
    result = invoke(study_app, "rekey", _spec_file(tmp_path, methods), "--results", store.path, "--from", "extras")
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == f"{store.path}: 2 rows of 2 cells moved to their keys of today; 0 rows left where they were (the same row is in the new folder)"
    assert sorted(p.name for p in store.path.iterdir() if p.is_dir()) == sorted(c.key for c in cells)
    assert "Error: --from x: expected one of assembled, extras" in invoke(study_app, "rekey", _spec_file(tmp_path, methods), "--results", store.path, "--from", "x").output


def _spec_file(tmp_path: Path, methods) -> Path:
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump({"name": "t", "corpora": ["toy"], "methods": methods, "sizes": [10], "partitions": 2,
                                    "configs_dir": str(CONFIGS)}))
    return path


def test_a_renamed_method_keeps_its_rows_and_reports_show_the_spec_name(tmp_path):
    out = tmp_path / "r"
    run_study(_spec(["ce", "ova_auc"]).cells(), out, workers=0, runner=lab_helpers.instant_cell, **QUIET)
    renamed = _spec([{"name": "softmax_ce", "base": "ce"}, "ova_auc"])
    assert run_study(renamed.cells(), out, workers=0, runner=lab_helpers.instant_cell, **QUIET).skipped == 4
    named = ResultsStore(out).rows_for(renamed.cells())
    assert sorted({r["method"] for r in named}) == ["ova_auc", "softmax_ce"] and len(named) == 4
    assert {r["method"] for r in rows(out)} == {"ce", "ova_auc"}  # the rows themselves are as written
    # a spec that dropped a method: its rows are not read, or with `others` read as written
    dropped = _spec([{"name": "softmax_ce", "base": "ce"}])
    assert {r["method"] for r in ResultsStore(out).rows_for(dropped.cells())} == {"softmax_ce"}
    kept = ResultsStore(out).rows_for(dropped.cells(), others=True)
    assert sorted(r["method"] for r in kept) == ["ova_auc", "ova_auc", "softmax_ce", "softmax_ce"]


def test_a_store_s_spec_is_the_study_of_its_name(tmp_path):
    assert spec_of(tmp_path / "results" / "campaign_x") == tmp_path / "studies" / "campaign_x.yaml"


def _old_file(path: Path, cells, extra=()) -> Path:
    """An old-format results file: a row per cell, under its old id, then `extra` rows."""
    lines = [json.dumps({"cell_id": old_cell_id(c), "method": c.method, "corpus": c.corpus, "setting": c.setting, "size": c.size,
                         "value": c.value, "partition": c.partition, "status": "ok", "finished": f"2026-01-0{9 - i}T00:00:00+00:00",
                         "scores": {"ents_seqeval_micro_f": 0.1 * (i + 1)}}) for i, c in enumerate(cells)]
    path.write_text("".join(line + "\n" for line in [*lines, *extra]))
    return path


def test_an_old_results_file_comes_in_once_in_its_order_nothing_lost(tmp_path):
    cells = _spec(["ce", "ova_auc", "ova_bce"]).cells()
    old = _old_file(tmp_path / "t.jsonl", cells[:4], ["not json"])
    old.write_text(old.read_text() + '{"cell_id": "toy/ce/n=10/p1#')  # a line a campaign is writing
    without_bce = [c for c in cells if c.method != "ova_bce"]  # a spec that lost a method
    store = ResultsStore(tmp_path / "r")
    warnings = []
    assert import_jsonl(old, without_bce, store, warn=warnings.append) == (4, 3, 1, 4)
    assert warnings == [f"{old}:5: skipping a line that is not a results row"]
    found = store.rows()
    # the file's order (its rows finished in the other order), each row as it was
    assert [r["cell_id"] for r in found] == [old_cell_id(c) for c in cells[:4]]
    assert [r["key"] for r in found] == [cells[0].key, cells[1].key, None, cells[3].key]
    assert found[2]["imported"] == {"from": "t.jsonl", "line": 3} and (tmp_path / "r" / UNMATCHED).is_dir()
    assert {k: v for k, v in found[0].items() if k not in ("key", "imported")} == json.loads(old.read_text().splitlines()[0])
    # again, the file having grown by a row: only that row is new
    _old_file(old, cells[:5])
    assert import_jsonl(old, without_bce, store) == (5, 4, 1, 1)
    # with the method back in the spec, its row moves from unmatched/ to its cell's folder
    assert import_jsonl(old, cells, store) == (5, 5, 0, 0)
    assert [r["key"] for r in store.rows()] == [c.key for c in cells[:5]]
    assert not list((tmp_path / "r" / UNMATCHED).glob("*.json"))


def test_study_import_and_status_commands(tmp_path):
    """The rows a GPU run wrote in the old format (docs/evidence/gpu/study_gpu.jsonl: the preset
    spec at 50 sentences, one partition) are found by that spec's cells; status counts them."""
    spec = tmp_path / "preset.yaml"
    data = yaml.safe_load((ROOT / "studies" / "preset_cpu.yaml").read_text())
    spec.write_text(yaml.safe_dump({**data, "sizes": [50], "partitions": 1, "configs_dir": str(CONFIGS)}))
    old = ROOT / "docs" / "evidence" / "gpu" / "study_gpu.jsonl"
    result = invoke(study_app, "import", old, spec, "--results", tmp_path / "r")
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == f"{old}: 5 rows, 5 found by a cell of {spec}, 0 kept unmatched; 5 new in {tmp_path / 'r'}"
    again = invoke(study_app, "import", old, spec, "--results", tmp_path / "r")
    assert again.stdout.strip().endswith(f"; 0 new in {tmp_path / 'r'}")
    status = invoke(study_app, "status", spec, "--results", tmp_path / "r", "--list")
    assert status.exit_code == 0, status.output
    lines = status.stdout.splitlines()
    assert lines[0] == "reported cells: 5 ok, 0 failed, 0 to run, of 5"
    assert lines[-1] == f"rows: 5 in {tmp_path / 'r'}, 0 not read by this spec (0 of them unmatched rows of the old format, 0 unreadable)"
    # each method's mean wall seconds: one row each here, its own seconds
    seconds = {json.loads(line)["method"]: json.loads(line)["seconds"] for line in old.read_text().splitlines() if line.strip()}
    assert lines[1:-1] == ["mean seconds per finished cell (reported; tuning trials):",
                           *(f"  {m}: {s:.0f} s (n=1); -" for m, s in seconds.items())]


def test_status_warns_of_rows_from_uncommitted_trees_without_a_stored_diff(tmp_path):
    """Issue 45: a row whose commit ends in "+changes" and whose diff the store does not hold
    does not trace to code; `study status` says how many such rows it reads (their content kept)."""
    spec = tmp_path / "preset.yaml"
    data = yaml.safe_load((ROOT / "studies" / "preset_cpu.yaml").read_text())
    spec.write_text(yaml.safe_dump({**data, "sizes": [50], "partitions": 1, "configs_dir": str(CONFIGS)}))
    old = ROOT / "docs" / "evidence" / "gpu" / "study_gpu.jsonl"
    marked = tmp_path / "old.jsonl"
    lines = [json.loads(line) for line in old.read_text().splitlines() if line.strip()]
    for i, r in enumerate(lines):  # the GPU run's rows are all "+changes": one left so here
        r["versions"] = {"git_commit": "a" * 40 + ("+changes" if i == 0 else "")}
    marked.write_text("".join(json.dumps(r) + "\n" for r in lines))
    assert invoke(study_app, "import", marked, spec, "--results", tmp_path / "r").exit_code == 0
    status = invoke(study_app, "status", spec, "--results", tmp_path / "r")
    assert status.exit_code == 0, status.output
    assert "Warning: 1 of the 5 finished rows were trained from a working tree with uncommitted changes" in status.stderr
    lines[0]["versions"] = {"git_commit": "a" * 40}
    marked.write_text("".join(json.dumps(r) + "\n" for r in lines))
    clean = tmp_path / "clean"
    invoke(study_app, "import", marked, spec, "--results", clean)
    assert "Warning" not in invoke(study_app, "status", spec, "--results", clean).stderr
