"""Every command ends an expected failure with one `Error:` line and exit status 1, and
leaves no partial output; writers write whole files or nothing (data/files.py)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from spacy_auc_ner.cli.app import app
from spacy_auc_ner.data.files import DataError, atomic_output, check_seed, write_json

TESTS = Path(__file__).parent

runner = CliRunner()
BIO = "Peter\tB-PER\nBlackburn\tI-PER\nin\tO\nBonn\tB-LOC\n\nhello\tO\n\n"


def _invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def _one_error_line(result) -> str:
    """The failure was expected: exit 1, no exception escaped, one line on stderr."""
    assert result.exit_code == 1, (result.exit_code, result.stderr, result.exception)
    assert isinstance(result.exception, SystemExit), result.exception
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    return lines[0]


def _files(folder: Path):
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


@pytest.fixture
def blocker(tmp_path):
    """A plain file: no folder can be created under it (even for root)."""
    path = tmp_path / "blocker"
    path.write_text("not a folder\n")
    return path


@pytest.fixture
def bio_file(tmp_path):
    path = tmp_path / "in.tsv"
    path.write_text(BIO)
    return path


# -- the writer helper ----------------------------------------------------------------------


@pytest.mark.parametrize("seed, shown", [(-1, "-1"), (None, "null"), (True, "true"), (1.5, "1.5"), ("3", '"3"')])
def test_a_seed_that_is_not_a_whole_number_from_0_is_one_line_naming_its_key(seed, shown):
    for name in ("--seed", "[system.seed]"):
        with pytest.raises(DataError) as caught:
            check_seed(seed, name)
        assert str(caught.value) == f"{name} must be a whole number >= 0, not {shown}"
    for fine in (0, 7, 2**40, 2**64 - 1):
        check_seed(fine, "--seed")


SEED_1E41 = "1" + "0" * 41
TOO_BIG = "must be at most 2**64 - 1 = 18446744073709551615, the largest whole number of a config (JSON), not "


@pytest.mark.parametrize("seed", [2**64, 10**41])
def test_a_seed_beyond_what_a_config_holds_is_one_line_naming_its_key(seed):
    # spaCy's check of a config writes it as JSON, whose integers end at 2**64 - 1: a SystemError
    for name in ("--seed", "[system.seed]"):
        with pytest.raises(DataError) as caught:
            check_seed(seed, name)
        assert str(caught.value) == f"{name} {TOO_BIG}{seed}"


@pytest.mark.parametrize("key", ["system.seed", "components.auc_ner.loss.seed", "components.auc_ner.strategy.seed", "training.seed"])
def test_a_seed_of_a_config_file_beyond_json_is_one_line_naming_its_key(tmp_path, key):
    # spaCy writes [system] and a component's settings as JSON before the package's checks run:
    # a SystemError ("returned a result with an exception set") with its traceback
    import spacy
    from spacy.tokens import Doc, DocBin

    from spacy_auc_ner.methods import method_config

    config = method_config("negative_sampling_uniform", "cpu", TESTS.parent / "configs")
    ner = config["components"]["auc_ner"]  # a seed in the loss and one in the strategy (scheme ova)
    ner["scheme"], ner["loss"]["loss"] = "ova", {"@losses": "spacy_auc_ner.BinaryCE.v1"}
    ner["strategy"] = {"@misc": "spacy_auc_ner.SampledClassifiers.v1", "m": 2, "seed": 0}
    section, *middle, last = key.split(".")
    node = config[section]
    for part in middle:
        node = node[part]
    node[last] = 10**41
    config.to_disk(tmp_path / "big.cfg")
    DocBin(docs=[Doc(spacy.blank("en").vocab, words=["Aspirin", "works"], ents=["B-Chemical", "O"])]).to_disk(tmp_path / "c.spacy")
    line = _one_error_line(_invoke("recipe", tmp_path / "big.cfg", tmp_path / "out", "--paths.train", tmp_path / "c.spacy"))
    assert line == f"Error: [{key}] {TOO_BIG}{10**41}"


@pytest.mark.parametrize("key", ["training.seed", "system.seed", "corpora.train.seed"])
def test_a_seed_override_beyond_json_is_one_line_naming_its_key(tmp_path, key):
    # spaCy read the override as text ("must be a whole number, not '1000...'", or a SystemError)
    line = _one_error_line(_invoke("recipe", "lowres_best", tmp_path / "out", "--paths.train", tmp_path / "train.spacy", f"--{key}", SEED_1E41))
    assert line == f"Error: [{key}] {TOO_BIG}{SEED_1E41}"
    assert not (tmp_path / "out").exists()


def test_atomic_output_replaces_whole_or_leaves_the_old_file(tmp_path):
    target = tmp_path / "out" / "data.json"
    write_json(target, {"a": 1, "nan": float("nan")})
    assert json.loads(target.read_text()) == {"a": 1, "nan": None}  # never NaN in JSON
    with pytest.raises(RuntimeError):
        with atomic_output(target) as tmp:
            tmp.write_text('{"half": ')  # a writer that dies half way
            raise RuntimeError("killed")
    assert json.loads(target.read_text()) == {"a": 1, "nan": None}
    assert _files(tmp_path / "out") == ["data.json"]  # no temporary file left behind
    assert oct(target.stat().st_mode & 0o777) == oct(0o666 & ~_umask())


def test_atomic_output_where_no_folder_can_be_made(blocker):
    with pytest.raises(DataError, match=r"blocker/x/out.spacy: cannot write here \(.*blocker/x: .*\)$"):
        with atomic_output(blocker / "x" / "out.spacy"):
            pass


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


# -- data commands --------------------------------------------------------------------------


def test_convert_to_a_path_that_cannot_be_created(tmp_path, bio_file, blocker):
    """Issue 13.4: this printed a 41-line traceback."""
    line = _one_error_line(_invoke("convert", bio_file, blocker / "sub" / "out.spacy"))
    assert "blocker/sub/out.spacy: cannot write here" in line
    assert _files(tmp_path) == ["blocker", "in.tsv"]
    out = subprocess.run([sys.executable, "-m", "spacy_auc_ner", "convert", str(bio_file), str(blocker / "o.tsv" / "x.tsv")],
                         capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert out.returncode == 1 and len(out.stderr.strip().splitlines()) == 1, out.stderr


def test_convert_of_a_folder_or_a_bad_file(tmp_path):
    line = _one_error_line(_invoke("convert", tmp_path, tmp_path / "out.spacy"))
    assert str(tmp_path) in line
    (tmp_path / "bad.tsv").write_bytes(b"Aspirin\tO\n\ncaf\xe9\tO\n")
    assert "bad.tsv:3: not UTF-8 text (invalid continuation byte at byte 14)" in _one_error_line(_invoke("convert", tmp_path / "bad.tsv", tmp_path / "out.spacy"))
    assert not (tmp_path / "out.spacy").exists()


def test_config_to_a_path_that_cannot_be_created(tmp_path, blocker):
    configs = Path(__file__).parents[1] / "configs"
    line = _one_error_line(_invoke("config", "ce", "--output", blocker / "ce.cfg", "--configs-dir", configs))
    assert "blocker/ce.cfg: cannot write here" in line


def test_config_to_an_empty_output_path_is_refused(tmp_path, monkeypatch):
    """`--output "$UNSET"` wrote NAME.cfg into the current folder, as recipe's empty OUTPUT_DIR did."""
    monkeypatch.chdir(tmp_path)
    configs = Path(__file__).parents[1] / "configs"
    line = _one_error_line(_invoke("config", "ce", "--output", "", "--configs-dir", configs))
    assert line == "Error: --output is an empty path: name a file or folder ('.' for the current one), or leave it out to print"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "args, expected",
    [
        (["convert"], "Error: Missing argument 'input_path'. (see: spacy-auc-ner convert --help)"),
        (["recipe", "lowres_best", "out", "--gpu-id"], "Error: Option '--gpu-id' requires an argument."),
        (["convert", "a.tsv", "out", "--bogus"], "Error: No such option: --bogus"),
        (["nothing-like-this"], "Error: No such command 'nothing-like-this'."),
    ],
)
def test_usage_errors_are_one_line_through_the_entry_point(capsys, args, expected):
    """Click's own usage errors (before any command runs) end as one line too, status 2."""
    from spacy_auc_ner.cli import main

    assert main(args) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(expected), lines


def test_the_entry_point_returns_the_commands_status(capsys, tmp_path):
    from spacy_auc_ner.cli import main

    assert main(["config", "nope"]) == 1
    assert capsys.readouterr().err.strip().startswith("Error: unknown method 'nope'; known: ")
    assert main(["--help"]) == 0 and "Usage: spacy-auc-ner" in capsys.readouterr().out
    done = subprocess.run([sys.executable, "-m", "spacy_auc_ner", "convert"], capture_output=True, text=True)
    assert done.returncode == 2 and done.stderr.strip().startswith("Error: Missing argument 'input_path'.")


# -- issue 25: the library's commands under bad input (the study commands' cases are in projects/lab/tests)


@pytest.mark.parametrize("value", ["nan"])
def test_a_setting_that_is_no_number_names_the_full_key(tmp_path, full_configs, value):
    """Item 8: `--components.auc_ner.entity_bias nan` reaches the component as the string
    'nan' (spaCy's override parser); it used to end in a TypeError traceback (the component's
    threshold, which this test set until the setting went to the scheme's block)."""
    import spacy
    from spacy.tokens import Doc, DocBin

    vocab = spacy.blank("en").vocab
    DocBin(docs=[Doc(vocab, words=["Aspirin", "works"], ents=["B-Chemical", "O"])]).to_disk(tmp_path / "c.spacy")
    (tmp_path / "pool.txt").write_text("a text\n")
    result = _invoke("self-train", full_configs["ova_auc_all"], tmp_path / "out", "--paths.train", tmp_path / "c.spacy",
                     "--paths.dev", tmp_path / "c.spacy", "--paths.raw_text", tmp_path / "pool.txt", "--components.auc_ner.entity_bias", value)
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.exception
    line = result.stderr.strip().splitlines()[-1]  # after the round's log line
    assert line == f"Error: [components.auc_ner.entity_bias] must be a finite number in [-1000000, 1000000], not '{value}'"


def test_a_binary_config_is_named_by_self_train_recipe_and_pretrain_config(tmp_path):
    """Item 12: UTF-8 decode errors used to print only the codec's message."""
    import spacy
    from spacy.tokens import Doc, DocBin

    vocab = spacy.blank("en").vocab
    DocBin(docs=[Doc(vocab, words=["Aspirin", "works"], ents=["B-Chemical", "O"])]).to_disk(tmp_path / "c.spacy")
    (tmp_path / "pool.txt").write_text("a text\n")
    binary = tmp_path / "binary.cfg"
    binary.write_bytes(b"[nlp]\nlang = \"en\"\n\xff\xfe\x00\x89")
    expected = f"Error: {binary}:3: not UTF-8 text (invalid start byte at byte 18)"
    data = ["--paths.train", tmp_path / "c.spacy", "--paths.dev", tmp_path / "c.spacy"]
    assert _one_error_line(_invoke("self-train", binary, tmp_path / "out", *data, "--paths.raw_text", tmp_path / "pool.txt")) == expected
    assert _one_error_line(_invoke("recipe", binary, tmp_path / "out", *data, "--paths.raw_text", tmp_path / "pool.txt")) == expected
    assert _one_error_line(_invoke("recipe", binary, tmp_path / "out", *data, "--pretraining.component", "null")) == expected
    fragment = Path(__file__).parents[1] / "configs" / "pretrain" / "characters.cfg"
    assert _one_error_line(_invoke("pretrain-config", binary, fragment, tmp_path / "p.cfg")) == expected
    assert not (tmp_path / "out").exists() and not (tmp_path / "p.cfg").exists()


def test_a_config_saved_with_a_byte_order_mark_is_read(tmp_path):
    """Windows editors put a UTF-8 byte-order mark first: the file was 'not a config file (no
    section header)', its first header read as '\\ufeff[paths]'; a bad byte after the mark is
    named at its byte of the file."""
    from spacy_auc_ner.data.files import read_text

    fragment = Path(__file__).parents[1] / "configs" / "pretrain" / "characters.cfg"
    base = tmp_path / "ce.cfg"
    assert _invoke("config", "ce", "--output", base).exit_code == 0
    marked = tmp_path / "marked.cfg"
    marked.write_bytes(b"\xef\xbb\xbf" + base.read_bytes())
    result = _invoke("pretrain-config", marked, fragment, tmp_path / "p.cfg")
    assert result.exit_code == 0, result.output
    assert read_text(marked) == base.read_text(encoding="utf-8")
    binary = tmp_path / "binary.cfg"
    binary.write_bytes(b"\xef\xbb\xbf[nlp]\nlang = \"en\"\n\xff\xfe")
    assert _one_error_line(_invoke("pretrain-config", binary, fragment, tmp_path / "q.cfg")) == f"Error: {binary}:3: not UTF-8 text (invalid start byte at byte 21)"


def test_a_config_validation_error_is_one_line_per_error_without_the_config():
    """spaCy's and confection's ConfigValidationError printed the whole config (hundreds of
    characters of dump) after a location such as 'auc_ner -> entity_bias at root'."""
    from thinc.api import ConfigValidationError

    from spacy_auc_ner.cli.errors import error_text

    config = {"nlp": "x" * 500}
    pydantic = ConfigValidationError(config=config, errors=[{"type": "int_type", "loc": ("training", "max_steps"), "msg": "Input should be a valid integer", "input": "abc"}])
    assert error_text(pydantic) == "[training.max_steps]: must be a whole number, not 'abc'"
    confection = ConfigValidationError(config=config, errors=[
        {"loc": ["components", "auc_ner", "entity_bias"], "msg": "at root: 'abc' is not <class 'float'>", "input": "abc"},
        {"loc": ["components", "auc_ner", "overwrite_ents"], "msg": "at root: 'maybe' is not <class 'bool'>"},
        {"loc": ["auc_ner", "extra"], "msg": "unexpected argument: 'extra'"}])
    assert error_text(confection) == ("[components.auc_ner.entity_bias]: must be a number, not 'abc'; "
                                      "[components.auc_ner.overwrite_ents]: must be true or false; [auc_ner.extra]: unexpected argument: 'extra'")
    assert error_text(ConfigValidationError(config=config, errors=[{"loc": ("seed",), "msg": "bad"}], parent="training")) == "[training.seed]: bad"
