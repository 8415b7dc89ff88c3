"""The results store (auc_ner_lab/store.py): rows found by what their cell trains, whatever a
spec calls it, and every committed row still found by its study's cells."""
import json
from pathlib import Path

import pytest
import yaml

import lab_helpers
from auc_ner_lab.runner import run_study
from auc_ner_lab.spec import load_spec, parse_spec
from auc_ner_lab.store import ResultsStore, spec_of
from auc_ner_lab.study_cli import study_app
from lab_helpers import QUIET, invoke, rows
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
    folder of the cell that matched it then (`study import`; it and `study rekey` are gone since,
    the tag lab-migrations-2026-11-27 keeps them): nothing moves rows any more, so a change to
    what keys hash, to a spec or to a method's config file that would orphan them fails here (an
    intended change of what a method trains leaves its rows unread, and says so here)."""
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


GPU_ROWS = ROOT / "docs" / "evidence" / "gpu" / "study_gpu.jsonl"


def _preset_spec(tmp_path: Path) -> Path:
    """The preset spec at 50 sentences, one partition: the cells of the GPU run's rows (GPU_ROWS)."""
    spec = tmp_path / "preset.yaml"
    data = yaml.safe_load((ROOT / "studies" / "preset_cpu.yaml").read_text())
    spec.write_text(yaml.safe_dump({**data, "sizes": [50], "partitions": 1, "configs_dir": str(CONFIGS)}))
    return spec


def _imported_store(path: Path, spec: Path, lines) -> ResultsStore:
    """A store holding `lines` (rows of the old one-file format) as `study import` left such
    rows: each in the folder of the spec's cell of its corpus, method, size and partition, with
    the file and line it came from (``imported``; its cell_id is of the old format)."""
    cells = {(c.corpus, c.method, c.size, c.partition): c for c in load_spec(spec).cells()}
    store = ResultsStore(path)
    for lineno, row in enumerate(lines, 1):
        cell = cells[row["corpus"], row["method"], row["size"], row["partition"]]
        store.add({**row, "imported": {"from": GPU_ROWS.name, "line": lineno}}, cell.key)
    return store


def test_study_status_counts_rows_and_seconds(tmp_path):
    """The rows a GPU run wrote in the old format (GPU_ROWS: the preset spec at 50 sentences,
    one partition), as `study import` brought them in, are found by that spec's cells; status
    counts them."""
    spec = _preset_spec(tmp_path)
    old = GPU_ROWS
    _imported_store(tmp_path / "r", spec, [json.loads(line) for line in old.read_text().splitlines() if line.strip()])
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
    spec = _preset_spec(tmp_path)
    lines = [json.loads(line) for line in GPU_ROWS.read_text().splitlines() if line.strip()]
    for i, r in enumerate(lines):  # the GPU run's rows are all "+changes": one left so here
        r["versions"] = {"git_commit": "a" * 40 + ("+changes" if i == 0 else "")}
    _imported_store(tmp_path / "r", spec, lines)
    status = invoke(study_app, "status", spec, "--results", tmp_path / "r")
    assert status.exit_code == 0, status.output
    assert "Warning: 1 of the 5 finished rows were trained from a working tree with uncommitted changes" in status.stderr
    lines[0]["versions"] = {"git_commit": "a" * 40}
    clean = tmp_path / "clean"
    _imported_store(clean, spec, lines)
    assert "Warning" not in invoke(study_app, "status", spec, "--results", clean).stderr
