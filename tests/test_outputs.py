"""Nothing a user has is ever lost (issue 25): a command never deletes or replaces anything it
did not create itself, never writes over one of its inputs, and checks every input before it
deletes or writes anything (spacy_auc_ner/outputs.py). Training is replaced by a stand-in that
writes what `spacy train` writes: these tests are about files, not models."""
import hashlib
import json
import shutil
import sys
import time
from pathlib import Path

import pytest
import spacy
from spacy.tokens import Doc, DocBin
from typer.testing import CliRunner

from spacy_auc_ner.cli.app import app
from spacy_auc_ner.data.files import DataError
from spacy_auc_ner.outputs import MANIFEST, OutputFolder, check_output_file, same_or_inside
from spacy_auc_ner.training import recipe as recipe_module
from spacy_auc_ner.training import self_training
from toy_data import TOY

CONFIGS = Path(__file__).parents[1] / "configs"
RECIPE = "lowres_best"  # the shipped recipe, by name
runner = CliRunner()


def _error(result) -> str:
    assert result.exit_code == 1, (result.exit_code, result.output)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    return lines[0]


def _hashes(folder: Path):
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.rglob("*")) if p.is_file()}


def _tsv(path: Path, copies: int = 1) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join("".join(f"{w}\t{t}\n" for w, t in zip(words, tags)) + "\n" for words, tags in TOY * copies))
    return path


def _docbin(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    vocab = spacy.blank("en").vocab
    DocBin(docs=[Doc(vocab, words=w, ents=t) for w, t in TOY]).to_disk(path)
    return path


@pytest.fixture
def fake_training(monkeypatch):
    """`spacy train` and `spacy pretrain` replaced by stand-ins that write their folders."""
    calls = []

    def train(config_path, output_dir, overrides, gpu_id=-1):
        calls.append(("train", overrides))
        for name in ("model-best", "model-last"):
            (Path(output_dir) / name).mkdir(parents=True)
            (Path(output_dir) / name / "meta.json").write_text("{}")
        return Path(output_dir) / "model-best"

    def pretrain(config, output_dir, **kwargs):
        calls.append(("pretrain", config["paths"]["raw_text"]))
        (Path(output_dir) / "model-last.bin").write_bytes(b"w")

    monkeypatch.setattr(recipe_module, "train_config", train)
    monkeypatch.setattr("spacy.training.pretrain.pretrain", pretrain)
    return calls


def _recipe(out, train, dev, *extra):
    return runner.invoke(app, ["recipe", str(RECIPE), str(out), "--paths.train", str(train), "--paths.dev", str(dev), *map(str, extra)])


# -- the rule in one place -------------------------------------------------------------------


def test_same_or_inside_through_links(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "f.txt").write_text("x")
    (tmp_path / "link").symlink_to(tmp_path / "a")
    (tmp_path / "hard.txt").hardlink_to(tmp_path / "a" / "f.txt")
    assert same_or_inside(tmp_path / "link" / "f.txt", tmp_path / "a")
    assert same_or_inside(tmp_path / "hard.txt", tmp_path / "a" / "f.txt")
    assert same_or_inside(tmp_path / "a", tmp_path / "a")
    assert not same_or_inside(tmp_path / "a", tmp_path / "a" / "f.txt")
    assert not same_or_inside(tmp_path / "ab", tmp_path / "a")


def test_check_output_file(tmp_path):
    src = tmp_path / "a.tsv"
    src.write_text("x")
    with pytest.raises(DataError, match=r"a.tsv: is an input of this command"):
        check_output_file(tmp_path / "." / "a.tsv", [src], overwrite=True)
    with pytest.raises(DataError, match=r"b.tsv: already exists; choose another file, or pass --overwrite"):
        (tmp_path / "b.tsv").write_text("y")
        check_output_file(tmp_path / "b.tsv", [src])
    check_output_file(tmp_path / "b.tsv", [src], overwrite=True)
    check_output_file(tmp_path / "c.tsv", [src])


def test_output_folder_removes_only_what_it_recorded(tmp_path):
    out = OutputFolder(tmp_path / "out", "demo")
    out.claim(["run", "log"], [], overwrite=False, what="a demo run")
    assert out.folder.is_dir()  # made to be held
    out.record("run").mkdir()
    (tmp_path / "out" / "mine.txt").write_text("the user's")
    out.finish()
    out.release()  # the run ends
    again = OutputFolder(tmp_path / "out", "demo")
    with pytest.raises(DataError, match=r"already holds a demo run \(run\)"):
        again.claim(["run"], [], overwrite=False, what="a demo run")
    again.claim(["run"], [], overwrite=True, what="a demo run")
    again.clear()
    assert sorted(p.name for p in out.folder.iterdir()) == [MANIFEST, "mine.txt"]
    again.release()  # while a run holds the folder a refusal says so first (the test below)
    # an entry of the run's that the record lacks is the user's: refused, with or without --overwrite
    (tmp_path / "out" / "log").write_text("the user's log")
    with pytest.raises(DataError, match=r"log not written by an earlier 'demo' run here"):
        OutputFolder(tmp_path / "out", "demo").claim(["run", "log"], [], overwrite=True, what="a demo run")
    # another command's record is not this command's to replace
    with pytest.raises(DataError, match=r"holds the outputs of a 'demo' run, which 'other' does not replace"):
        OutputFolder(tmp_path / "out", "other")


# -- 1. recipe --overwrite deleted the user's folders by name -----------------------------------


def test_recipe_overwrite_keeps_the_users_data_folder_with_column_inputs(tmp_path, fake_training):
    proj = tmp_path / "proj"
    train, dev = _tsv(proj / "data" / "train.tsv"), _tsv(proj / "data" / "dev.tsv")
    (proj / "data" / "other_file.tsv").write_text("not the recipe's\n")
    before = _hashes(proj)
    result = _recipe(proj, train, dev, "--pretraining.max_epochs", "0", "--overwrite")
    assert result.exit_code == 0, result.output
    after = _hashes(proj)
    assert {k: after[k] for k in before} == before  # train.tsv, dev.tsv, other_file.tsv untouched
    assert (proj / "data" / "train.spacy").exists() and (proj / "model-best").is_dir()
    assert json.loads((proj / MANIFEST).read_text()) == {
        "command": "recipe", "written": ["data/train.spacy", "data/dev.spacy", "model-best", "model-last"],
        "contents": {"model-best": ["meta.json"], "model-last": ["meta.json"]}, "finished": True}  # what each folder held at the end


def test_recipe_overwrite_with_spacy_inputs_in_the_output_folder(tmp_path, fake_training):
    proj = tmp_path / "proj"
    train, dev = _docbin(proj / "data" / "train.spacy"), _docbin(proj / "data" / "dev.spacy")
    before = _hashes(proj)
    assert _recipe(proj, train, dev, "--pretraining.max_epochs", "0", "--overwrite").exit_code == 0
    assert _recipe(proj, train, dev, "--pretraining.max_epochs", "0", "--overwrite").exit_code == 0  # again: its own run replaced
    after = _hashes(proj)
    assert {k: after[k] for k in before} == before
    assert sorted(p.name for p in proj.iterdir()) == [MANIFEST, "data", "model-best", "model-last"]


def test_recipe_overwrite_refuses_a_file_the_user_put_in_a_folder_of_the_run(tmp_path, fake_training):
    """A user's note added to model-best after the run: --overwrite would remove the folder whole,
    so it refuses, naming the file, and removes nothing; the note gone, the run is replaced."""
    proj = tmp_path / "proj"
    train, dev = _docbin(tmp_path / "train.spacy"), _docbin(tmp_path / "dev.spacy")
    assert _recipe(proj, train, dev, "--pretraining.max_epochs", "0").exit_code == 0
    (proj / "model-best" / "notes").mkdir()
    (proj / "model-best" / "notes" / "MY_NOTES.txt").write_text("mine")
    before = _hashes(proj)
    line = _error(_recipe(proj, train, dev, "--pretraining.max_epochs", "0", "--overwrite"))
    assert line == (f"Error: {proj / 'model-best' / 'notes'}: not written by the earlier 'recipe' run here (its record in "
                    f"{MANIFEST} lists what model-best held), so --overwrite would remove it with model-best; move it or "
                    "choose another output folder")
    assert _hashes(proj) == before
    shutil.rmtree(proj / "model-best" / "notes")
    assert _recipe(proj, train, dev, "--pretraining.max_epochs", "0", "--overwrite").exit_code == 0


def test_recipe_overwrite_refuses_a_model_best_it_did_not_write(tmp_path, fake_training):
    proj = tmp_path / "proj"
    train, dev = _docbin(tmp_path / "train.spacy"), _docbin(tmp_path / "dev.spacy")
    (proj / "model-best").mkdir(parents=True)
    (proj / "model-best" / "meta.json").write_text("spacy train's")
    line = _error(_recipe(proj, train, dev, "--pretraining.max_epochs", "0", "--overwrite"))
    assert line == (f"Error: {proj}: model-best not written by an earlier 'recipe' run here (no record in {MANIFEST}), "
                    "so --overwrite leaves it; move it or choose another output folder")
    assert (proj / "model-best" / "meta.json").read_text() == "spacy train's" and not fake_training


# -- 2. self-train --overwrite deleted its own teacher ------------------------------------------


def test_self_train_refuses_a_teacher_inside_what_it_would_replace(tmp_path, monkeypatch, full_configs):
    monkeypatch.setattr(self_training, "train_config", lambda *a, **k: pytest.fail("trained"))
    teach = tmp_path / "teach"
    nlp = spacy.blank("en")
    nlp.add_pipe("ner").add_label("X")
    nlp.initialize()
    teach.mkdir()
    nlp.to_disk(teach / "model-best")  # as `spacy train --output teach` leaves it
    train, dev = _docbin(tmp_path / "train.spacy"), _docbin(tmp_path / "dev.spacy")
    (tmp_path / "pool.txt").write_text("a text\n")
    args = ["self-train", str(full_configs["spacy_ner"]), str(teach), "--paths.train", str(train), "--paths.dev", str(dev),
            "--paths.raw_text", str(tmp_path / "pool.txt"), "--model", str(teach / "model-best"), "--overwrite"]
    before = _hashes(teach)
    assert "model-best not written by an earlier 'self-train' run here" in _error(runner.invoke(app, args))
    # recorded by an earlier self-train run: still refused, as the teacher lies inside it
    (teach / MANIFEST).write_text(json.dumps({"command": "self-train", "written": ["model-best"]}))
    line = _error(runner.invoke(app, args))
    assert line == (f"Error: {teach / 'model-best'}: an input of this command lies in {teach / 'model-best'}, "
                    "which it would write over; move the input or choose another output folder")
    assert {k: v for k, v in _hashes(teach).items() if k != MANIFEST} == before


# -- 3. --overwrite removed the previous run before the inputs were read -----------------------


@pytest.mark.parametrize("garbage", [b"", b"\x00\x01not a docbin"])
def test_recipe_overwrite_with_a_bad_input_keeps_the_previous_run(tmp_path, fake_training, garbage):
    out = tmp_path / "out"
    train, dev = _docbin(tmp_path / "train.spacy"), _docbin(tmp_path / "dev.spacy")
    assert _recipe(out, train, dev, "--pretraining.max_epochs", "0").exit_code == 0
    before = _hashes(out)
    bad = tmp_path / "bad.spacy"
    bad.write_bytes(garbage)
    for args in ((bad, dev), (train, bad)):
        line = _error(_recipe(out, *args, "--overwrite"))
        assert line.startswith(f"Error: {bad}: ")
    assert _hashes(out) == before and [c[0] for c in fake_training] == ["train"]


def test_self_train_overwrite_with_a_bad_input_keeps_the_previous_run(tmp_path, monkeypatch, full_configs):
    monkeypatch.setattr(self_training, "train_config", lambda *a, **k: pytest.fail("trained"))
    out = tmp_path / "out"
    out.mkdir()
    (out / "rounds.jsonl").write_text('{"round": 0}\n')
    (out / MANIFEST).write_text(json.dumps({"command": "self-train", "written": ["rounds.jsonl"]}))
    train, dev = _docbin(tmp_path / "train.spacy"), _docbin(tmp_path / "dev.spacy")
    (tmp_path / "pool.txt").write_text("a text\n")
    (tmp_path / "bad.spacy").write_bytes(b"garbage")
    before = _hashes(out)
    base = ["self-train", str(full_configs["spacy_ner"]), str(out), "--paths.raw_text", str(tmp_path / "pool.txt"), "--overwrite"]
    for train_dev in (["--paths.train", tmp_path / "bad.spacy", "--paths.dev", dev], ["--paths.train", train, "--paths.dev", tmp_path / "bad.spacy"]):
        assert _error(runner.invoke(app, base + [str(a) for a in train_dev])).startswith(f"Error: {tmp_path / 'bad.spacy'}: not a readable .spacy")
    assert _hashes(out) == before


# -- 4. pool X X replaced the gold corpus ------------------------------------------------------


def test_pool_refuses_to_write_over_its_input(tmp_path):
    corpus = _docbin(tmp_path / "train.spacy")
    before = corpus.read_bytes()
    line = _error(runner.invoke(app, ["pool", str(corpus), str(tmp_path / "." / "train.spacy"), "--size", "2", "--overwrite"]))
    assert line == f"Error: {tmp_path / 'train.spacy'}: is an input of this command ({corpus}); write the output to another file"
    assert corpus.read_bytes() == before
    (tmp_path / "pool.txt").write_text("mine\n")
    assert "pool.txt: already exists" in _error(runner.invoke(app, ["pool", str(corpus), str(tmp_path / "pool.txt"), "--size", "2"]))
    assert (tmp_path / "pool.txt").read_text() == "mine\n"
    assert runner.invoke(app, ["pool", str(corpus), str(tmp_path / "pool.txt"), "--size", "2", "--overwrite"]).exit_code == 0


# -- 5. inputs checked only after work had started ----------------------------------------------


@pytest.mark.parametrize("garbage", [b"", b"\x00\x01not a docbin"])
def test_recipe_checks_spacy_inputs_before_pretraining(tmp_path, fake_training, garbage):
    bad = tmp_path / "train.spacy"
    bad.write_bytes(garbage)
    assert _error(_recipe(tmp_path / "out", bad, _docbin(tmp_path / "dev.spacy"))).startswith(f"Error: {bad}: ")
    assert not fake_training and not (tmp_path / "out").exists()


@pytest.mark.parametrize("change,message", [
    ({"paths.dev": "bad.spacy"}, "bad.spacy: not a readable .spacy"),
    ({"self_training.component": "nosuch"}, "\\[self_training.component\\] the pipeline of .*spacy_ner.cfg has no pipe 'nosuch' \\(it has ner\\)"),
])
def test_self_train_checks_dev_and_component_before_round_zero(tmp_path, monkeypatch, full_configs, change, message):
    monkeypatch.setattr(self_training, "train_config", lambda *a, **k: pytest.fail("trained"))
    (tmp_path / "bad.spacy").write_bytes(b"garbage")
    (tmp_path / "pool.txt").write_text("a text\n")
    overrides = {"paths.train": str(_docbin(tmp_path / "train.spacy")), "paths.dev": str(_docbin(tmp_path / "dev.spacy")),
                 "paths.raw_text": str(tmp_path / "pool.txt")}
    overrides.update({k: (str(tmp_path / v) if k == "paths.dev" else v) for k, v in change.items()})
    with pytest.raises(DataError, match=message):
        recipe_module.self_train(full_configs["spacy_ner"], tmp_path / "out", overrides, progress=False)
    assert not (tmp_path / "out").exists()


# -- 11. single-file outputs replaced any file without asking ----------------------------------


def test_config_output_is_never_an_input_nor_an_existing_file(tmp_path):
    target = tmp_path / "mydata.spacy"
    target.write_bytes(b"the user's corpus")
    assert "mydata.spacy: already exists; choose another file, or pass --overwrite" in _error(runner.invoke(app, ["config", "ce", "-o", str(target)]))
    assert target.read_bytes() == b"the user's corpus"
    method = CONFIGS / "methods" / "ce.cfg"
    line = _error(runner.invoke(app, ["config", "ce", "-o", str(method), "--overwrite"]))
    assert line.startswith(f"Error: {method}: is an input of this command")
    assert runner.invoke(app, ["config", "ce", "-o", str(target), "--overwrite"]).exit_code == 0
    assert target.read_text().startswith("# Written by `spacy-auc-ner config ce")


def test_pretrain_config_and_convert_keep_existing_files(tmp_path, full_configs):
    base, fragment = full_configs["spacy_ner"], CONFIGS / "pretrain" / "characters.cfg"
    before = base.read_bytes()
    assert _error(runner.invoke(app, ["pretrain-config", str(base), str(fragment), str(base), "--overwrite"])).startswith(f"Error: {base}: is an input")
    assert base.read_bytes() == before
    corpus = _docbin(tmp_path / "corpus.spacy")
    assert "corpus.spacy: already exists" in _error(runner.invoke(app, ["pretrain-config", str(base), str(fragment), str(corpus)]))
    src = _tsv(tmp_path / "a.tsv")
    text = src.read_text()
    assert _error(runner.invoke(app, ["convert", str(src), str(src), "--overwrite"])).startswith(f"Error: {src}: is an input")
    (tmp_path / "b.spacy").write_bytes(b"x")
    assert "b.spacy: already exists" in _error(runner.invoke(app, ["convert", str(src), str(tmp_path / "b.spacy")]))
    assert src.read_text() == text and (tmp_path / "b.spacy").read_bytes() == b"x"


# -- issue 45 R1: --overwrite removed the previous run although a config key named a file of it ----


@pytest.mark.parametrize("key,path,entry", [
    ("paths.init_tok2vec", "pretrain/model-last.bin", "pretrain"),
    ("paths.vectors", "model-last", "model-last"),
    ("corpora.train.corpus.path", "data/train.spacy", "data/train.spacy"),
    ("corpora.dev.path", "data/dev.spacy", "data/dev.spacy"),
    ("paths.init_tok2vec", MANIFEST, MANIFEST),  # the record: rewritten by every run
])
def test_recipe_overwrite_refuses_an_input_that_any_config_key_names_in_the_run(tmp_path, fake_training, key, path, entry):
    """The trigger: a run pretrains into ia, then --overwrite with --paths.init_tok2vec
    ia/pretrain/model-last.bin removed ia/pretrain before spacy train looked for the weights."""
    out = tmp_path / "ia"
    train, dev = _tsv(tmp_path / "train.tsv"), _tsv(tmp_path / "dev.tsv")
    assert _recipe(out, train, dev, "--pretraining.max_epochs", "1").exit_code == 0
    before = _hashes(out)
    line = _error(_recipe(out, train, dev, "--pretraining.max_epochs", "0", f"--{key}", out / path, "--overwrite"))
    assert line == (f"Error: [{key}] {out / path}: an input of this command lies in {out / entry}, which it would write over; "
                    "move the input or choose another output folder")
    assert _hashes(out) == before and [c[0] for c in fake_training] == ["pretrain", "train"]


def test_an_input_outside_what_overwrite_removes_is_kept_and_read(tmp_path, fake_training):
    """A file of the user's in the output folder, named by a key, is no obstacle: --overwrite
    does not remove it."""
    out = tmp_path / "ia"
    train, dev = _tsv(tmp_path / "train.tsv"), _tsv(tmp_path / "dev.tsv")
    assert _recipe(out, train, dev, "--pretraining.max_epochs", "0").exit_code == 0
    (out / "weights.bin").write_bytes(b"the user's")
    result = _recipe(out, train, dev, "--pretraining.max_epochs", "0", "--paths.init_tok2vec", out / "weights.bin", "--overwrite")
    assert result.exit_code == 0, result.output
    assert (out / "weights.bin").read_bytes() == b"the user's"


# -- issue 45 R8: two runs started together into one new folder both passed the check -----------


def test_a_claimed_folder_is_refused_to_a_run_that_started_with_it(tmp_path):
    """Both runs read the folder (new, no record) before either wrote anything: the second
    claim is refused while the first holds the folder, in one line, and writes nothing."""
    first, second = OutputFolder(tmp_path / "out", "recipe"), OutputFolder(tmp_path / "out", "recipe")
    first.claim(["model-best"], [], overwrite=False, what="a recipe run")
    with pytest.raises(DataError, match=r"out: another 'recipe' run is writing into it now; wait for it to end or choose another output folder$"):
        second.claim(["model-best"], [], overwrite=True, what="a recipe run")
    first.record("model-best").mkdir()
    first.finish()
    first.release()
    # the first run's entries are there now, seen by a claim after it: refused without --overwrite
    with pytest.raises(DataError, match=r"already holds a recipe run \(model-best\)"):
        second.claim(["model-best"], [], overwrite=False, what="a recipe run")
    second.claim(["model-best"], [], overwrite=True, what="a recipe run")
    second.release()


@pytest.mark.skipif(sys.platform == "win32", reason="no flock on Windows: nothing holds a folder there")
def test_a_claim_refused_while_another_run_writes_says_so_not_that_its_output_is_foreign(tmp_path):
    """The race of the test below, made certain: a run holds the folder and has made model-best,
    and the second claim's first look comes before it reads a record of it. That look would call
    model-best foreign ("no record ... move it"); the folder is held, so the refusal says so."""
    first = OutputFolder(tmp_path / "out", "recipe")
    first.claim(["model-best"], [], overwrite=False, what="a recipe run")
    (tmp_path / "out" / "model-best").mkdir()  # made; its record not written yet
    with pytest.raises(DataError, match="another 'recipe' run is writing into it now"):
        OutputFolder(tmp_path / "out", "recipe").claim(["model-best"], [], overwrite=False, what="a recipe run")
    first.release()


def _race_claim(folder, barrier, results):
    out = OutputFolder(folder, "recipe")  # both read the new folder before either claims
    barrier.wait()
    try:
        out.claim(["model-best"], [], overwrite=False, what="a recipe run")
    except DataError as err:
        results.put(("refused", str(err)))
        return
    results.put(("claimed", ""))
    out.record("model-best").mkdir(exist_ok=True)
    time.sleep(0.5)  # still writing when the other one claims
    out.release()


def test_two_processes_racing_into_one_new_folder_one_claims_it(tmp_path):
    import multiprocessing

    context = multiprocessing.get_context("fork")
    for trial in range(3):
        barrier, results = context.Barrier(2), context.Queue()
        workers = [context.Process(target=_race_claim, args=(tmp_path / f"out{trial}", barrier, results)) for _ in range(2)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(60)
        outcomes = sorted(results.get(timeout=10) for _ in workers)
        assert [o for o, _ in outcomes] == ["claimed", "refused"], outcomes
        # refused by the lock, or, arriving once the other had written, by what it wrote
        assert "another 'recipe' run is writing into it now" in outcomes[1][1] or "already holds a recipe run (model-best)" in outcomes[1][1]


def test_a_record_without_contents_still_reads_and_bad_contents_are_refused(tmp_path):
    """Records written before they listed the folders' contents are read as before (nothing to
    compare); a `contents` that is not {name: [paths]} is not a record this package wrote."""
    out = tmp_path / "out"
    (out / "model-best").mkdir(parents=True)
    (out / "model-best" / "extra.txt").write_text("x")
    (out / MANIFEST).write_text(json.dumps({"command": "demo", "written": ["model-best"]}))
    folder = OutputFolder(out, "demo")
    folder.claim(["model-best"], [], overwrite=True, what="a demo run")
    folder.clear()
    folder.release()
    assert not (out / "model-best").exists()
    (out / MANIFEST).write_text(json.dumps({"command": "demo", "written": ["model-best"], "contents": {"model-best": "meta.json"}}))
    with pytest.raises(DataError, match="not a record of written outputs this package can read"):
        OutputFolder(out, "demo")


@pytest.mark.parametrize("command", [["recipe", "lowres_best"], ["self-train", "c.cfg"]])
def test_a_left_out_output_dir_is_named_not_the_setting_after_it(command):
    """click hands the first --section.key to OUTPUT_DIR when it is left out: the error says
    OUTPUT_DIR is missing, not that the setting's value is an unexpected argument."""
    line = _error(runner.invoke(app, [*command, "--paths.train", "t.tsv"]))
    assert line.startswith(f"Error: {command[0]}: missing OUTPUT_DIR (spacy-auc-ner {command[0]} CONFIG OUTPUT_DIR")


def test_a_failed_run_discards_what_it_wrote_and_nothing_else(tmp_path):
    """`discard` (a run that failed after its claim): its entries, the record and the folders it
    made go; an earlier run's entries, the user's files and folders that hold them stay."""
    out = OutputFolder(tmp_path / "new" / "out", "demo")
    out.claim(["data/a.spacy", "model"], [], overwrite=False, what="a demo run")
    out.record("data/a.spacy").parent.mkdir()
    (out.folder / "data" / "a.spacy").write_text("x")
    out.record("model").mkdir()
    out.discard()
    out.release()
    assert not (tmp_path / "new").exists()  # made by the claim: gone, as it is empty
    # an earlier run's entry and the user's own files are kept
    out = OutputFolder(tmp_path / "out", "demo")
    out.claim(["old"], [], overwrite=False, what="a demo run")
    out.record("old").write_text("the earlier run's")
    out.release()
    (tmp_path / "out" / "data").mkdir()
    (tmp_path / "out" / "data" / "mine.txt").write_text("the user's")
    again = OutputFolder(tmp_path / "out", "demo")
    again.claim(["data/a.spacy", "run/model"], [], overwrite=True, what="a demo run")  # failing before its `clear`
    again.record("data/a.spacy").write_text("x")
    again.record("run/model").parent.mkdir()
    again.discard()
    again.release()
    assert sorted(str(p.relative_to(tmp_path / "out")) for p in (tmp_path / "out").rglob("*")) == [MANIFEST, "data", "data/mine.txt", "old"]
    assert json.loads((tmp_path / "out" / MANIFEST).read_text())["written"] == ["old"]


@pytest.mark.parametrize("command", [["recipe", "lowres_best"], ["self-train", "c.cfg"]])
def test_an_empty_output_dir_is_refused_not_read_as_the_current_folder(tmp_path, monkeypatch, command):
    """An unset shell variable ("$OUT") gives OUTPUT_DIR "": Path("") is ".", and the run
    would write pretrain/, round-K/ and model-best among the files of the current folder."""
    monkeypatch.chdir(tmp_path)
    line = _error(runner.invoke(app, [*command, "", "--paths.train", "t.tsv"]))
    assert line == "Error: OUTPUT_DIR is an empty path: name a folder ('.' for the current one)"
    assert list(tmp_path.iterdir()) == []


def test_a_killed_run_is_not_a_finished_run(tmp_path, toy_corpus):
    """S3: a run killed after spaCy wrote its step-0 model-best left a record like a finished
    run's; the rerun was refused as for a finished run, and suggest used that model without a
    word. The record says finished last; a rerun and a model from an unfinished run are refused."""
    import spacy
    from typer.testing import CliRunner

    from spacy_auc_ner.cli.app import app
    from spacy_auc_ner.data.files import DataError
    from spacy_auc_ner.training.confidences import load_pipeline

    out = tmp_path / "run"
    folder = OutputFolder(out, "recipe")
    folder.claim(["model-best", "model-last"], [], False, "a recipe run")
    folder.record("model-best", "model-last")
    spacy.blank("en").to_disk(out / "model-best")  # what spaCy saves at step 0
    folder.release()  # the process ends without finishing: killed
    assert json.loads((out / MANIFEST).read_text())["finished"] is False
    with pytest.raises(DataError, match=r"an earlier 'recipe' run here did not finish .* rerun with --overwrite"):
        OutputFolder(out, "recipe").claim(["model-best", "model-last"], [], False, "a recipe run")
    with pytest.raises(DataError, match=r"model-best: written by a run that did not finish \(.*outputs.json says so\)"):
        load_pipeline(out / "model-best")
    raw = tmp_path / "raw.txt"
    raw.write_text("a b c\n")
    result = CliRunner().invoke(app, ["suggest", str(out / "model-best"), str(raw), str(tmp_path / "b.spacy")])
    assert result.exit_code == 1 and "written by a run that did not finish" in result.stderr
    # a finished run's record says so, and its model loads
    again = OutputFolder(out, "recipe")
    again.claim(["model-best", "model-last"], [], True, "a recipe run")
    again.clear()
    again.record("model-best", "model-last")
    spacy.blank("en").to_disk(out / "model-best")
    again.finish()
    again.release()
    assert json.loads((out / MANIFEST).read_text())["finished"] is True
    assert load_pipeline(out / "model-best").pipe_names == []
