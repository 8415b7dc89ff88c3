"""Property: random valid BIO / IOB1 / BIOES column files (any token text, tab or space
separated, extra columns, -DOCSTART- lines, CRLF) go through convert and a 2-step training
without raising anything but the documented one-line errors, and conversion never loses or
invents an entity (issue 13.7); the lab's stats and partition commands have the same property
test (projects/lab/tests/test_lab_property_files.py). And recipe, self-train and pool, given
random valid and invalid inputs and random existing output folders, never change or remove an
input or a file of the user's, and fail with one line (issue 25)."""
import json
import math
import tempfile
from pathlib import Path

import numpy
import spacy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from spacy.training import Corpus
from typer.testing import CliRunner

from spacy_auc_ner.cli.app import app
from spacy_auc_ner.data.columns import read_columns, read_docs

runner = CliRunner()
VOCAB = spacy.blank("xx").vocab
TYPES = ["PER", "LOC", "Disease", "misc-2", "B-X"]
# space-separated files: tokens without whitespace; tab-separated ones: any text without tab,
# CR or LF, not starting or ending with whitespace (inner spaces, \x85, \u2028, \x00 allowed)
TOKENS = st.text(st.characters(categories=["L", "N", "P", "S"]), min_size=1, max_size=6).filter(lambda t: t != "-DOCSTART-")
TAB_TOKENS = st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\t\r\n"), min_size=1, max_size=6).filter(
    lambda t: t == t.strip() and t and t != "-DOCSTART-"
)
TINY_MODEL = {
    "@architectures": "spacy_auc_ner.TokenScorer.v2",
    "tok2vec": {
        "@architectures": "spacy.Tok2Vec.v2",
        "embed": {"@architectures": "spacy.MultiHashEmbed.v2", "width": 8, "attrs": ["NORM"], "rows": [64],
                  "include_static_vectors": False},
        "encode": {"@architectures": "spacy.MaxoutWindowEncoder.v2", "width": 8, "depth": 1, "window_size": 1,
                   "maxout_pieces": 2},
    },
}


@st.composite
def _sentence(draw, tokens=TOKENS):
    """(tokens, [(start, end, type)]): non-overlapping entities, adjacent ones allowed."""
    n = draw(st.integers(1, 7))
    tokens = draw(st.lists(tokens, min_size=n, max_size=n))
    spans, i = [], 0
    while i < n:
        if draw(st.integers(0, 2)) == 0:
            end = draw(st.integers(i + 1, min(n, i + 3)))
            spans.append((i, end, draw(st.sampled_from(TYPES))))
            i = end
        else:
            i += 1
    return tokens, spans


def _tags(n, spans, scheme):
    tags, prev = ["O"] * n, None
    for start, end, t in spans:
        for k in range(start, end):
            if scheme == "bio":
                tags[k] = ("B-" if k == start else "I-") + t
            elif scheme == "iob1":  # B- only where an entity directly follows one of its type
                tags[k] = ("B-" if k == start and prev == (start, t) else "I-") + t
            elif end - start == 1:
                tags[k] = "S-" + t
            else:
                tags[k] = ("B-" if k == start else "E-" if k == end - 1 else "I-") + t
        prev = (end, t)
    return tags


@st.composite
def _column_file(draw):
    """(text, scheme, sentences) of a valid column file in a random layout."""
    sep = draw(st.sampled_from(["\t", " "]))
    sentences = draw(st.lists(_sentence(TAB_TOKENS if sep == "\t" else TOKENS), min_size=1, max_size=6))
    scheme = draw(st.sampled_from(["bio", "iob1", "bioes"]))
    extra = draw(st.integers(0, 2))  # POS-like columns between token and label
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    lines = [f"-DOCSTART-{sep}O", ""] if draw(st.booleans()) else []
    for tokens, spans in sentences:
        for token, tag in zip(tokens, _tags(len(tokens), spans, scheme)):
            lines.append(sep.join([token] + ["NN"] * extra + [tag]))
        lines.extend([""] * draw(st.integers(1, 2)))
    if draw(st.booleans()):
        lines.pop()  # no blank line after the last sentence
    return newline.join(lines), scheme, sentences


def _one_error_line(result):
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), (result.exception, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    return lines[0]


def _invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@settings(max_examples=30, **SETTINGS)
@given(_column_file(), st.booleans())
def test_valid_files_convert_without_losing_an_entity(column_file, name_the_scheme):
    text, scheme, sentences = column_file
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        src = tmp / "in.txt"
        src.write_bytes(text.encode("utf-8"))
        scheme_args = ["--scheme", scheme] if name_the_scheme else []

        # convert: every entity kept, exactly, with its type; tokens as written
        result = _invoke("convert", src, tmp / "out.spacy", *scheme_args)
        assert result.exit_code == 0, result.stderr
        docs = read_docs(tmp / "out.spacy", VOCAB)
        assert [([t.text for t in d], [(e.start, e.end, e.label_) for e in d.ents]) for d in docs] == sentences
        assert _invoke("convert", src, tmp / "out.tsv", *scheme_args).exit_code == 0
        assert [list(s.labels) for s in read_columns(tmp / "out.tsv")] == [_tags(len(t), s, "bio") for t, s in sentences]


@settings(max_examples=8, **SETTINGS)
@given(st.lists(_sentence(), min_size=1, max_size=5), st.sampled_from(["ova", "two_task", "softmax", "crf"]))
def test_two_training_steps_on_any_valid_file(sentences, scheme):
    """Training raises nothing, its loss and every score are finite. A corpus without any
    entity may still be refused with the one-line 'no entity labels' error until issue 13.1
    (train on data without entities, like spaCy's ner) lands."""
    text = "".join("".join(f"{tok}\t{tag}\n" for tok, tag in zip(t, _tags(len(t), s, "bio"))) + "\n" for t, s in sentences)
    with tempfile.TemporaryDirectory() as tmp:
        src, out = Path(tmp) / "in.tsv", Path(tmp) / "train.spacy"
        src.write_text(text, encoding="utf-8")
        assert _invoke("convert", src, out).exit_code == 0
        nlp = spacy.blank("xx")
        nlp.add_pipe("auc_ner", config={"scheme": scheme, "model": TINY_MODEL})
        examples = list(Corpus(str(out))(nlp))
        try:
            optimizer = nlp.initialize(lambda: examples)
        except ValueError as err:
            if any(s for _, s in sentences) or "no entity labels" not in str(err) or "\n" in str(err):
                raise
            return
        for _ in range(2):
            losses = nlp.update(examples, sgd=optimizer, losses={})
            assert numpy.isfinite(losses["auc_ner"])
        scores = nlp.evaluate(examples)
        assert all(math.isfinite(v) for v in scores.values() if isinstance(v, float))


# -- recipe, self-train and pool under random inputs and output folders (issue 25) ------------
# Training is a stand-in that saves a tiny pretrained ner pipeline where `spacy train` saves
# its models (labelling the pool and scoring dev run for real); `spacy pretrain` a stand-in
# writing the weights file. What is checked is what happens to files.

import hashlib  # noqa: E402
import shutil  # noqa: E402

import pytest  # noqa: E402
from spacy.tokens import Doc, DocBin  # noqa: E402

from spacy_auc_ner.outputs import MANIFEST  # noqa: E402
from spacy_auc_ner.training import recipe as recipe_module  # noqa: E402
from spacy_auc_ner.training import self_training  # noqa: E402

CONFIGS = Path(__file__).parents[1] / "configs"
INPUT_KINDS = ["spacy", "tsv", "empty.spacy", "garbage.spacy", "bad.tsv", "binary.tsv", "missing.spacy"]
POOL_KINDS = ["txt", "jsonl", "spacy", "bad.jsonl", "binary.txt", "empty.txt"]
# what a user may already have in the output folder
PREFILL = ["data/train.spacy", "data/other_file.tsv", "model-best/meta.json", "model-last/meta.json",
           "pretrain/model-last.bin", "rounds.jsonl", "round-0/meta.json", "round-1/x.bin", "notes.txt",
           ".round-1.partial/x"]
RECORDABLE = ["data/train.spacy", "model-best", "model-last", "pretrain", "rounds.jsonl", "round-0", "round-1", ".round-1.partial"]


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    from toy_data import make_examples

    nlp = spacy.blank("en")
    nlp.add_pipe("ner")
    examples = make_examples(nlp)
    nlp.initialize(lambda: examples)
    path = tmp_path_factory.mktemp("tiny") / "model"
    nlp.to_disk(path)
    return path


@pytest.fixture
def stand_ins(monkeypatch, tiny_model):
    def train(config_path, output_dir, overrides, gpu_id=-1):
        for name in ("model-best", "model-last"):
            shutil.copytree(tiny_model, Path(output_dir) / name)
        return Path(output_dir) / "model-best"

    def pretrain(config, output_dir, **kwargs):
        (Path(output_dir) / "model-last.bin").write_bytes(b"weights")

    monkeypatch.setattr(recipe_module, "train_config", train)
    monkeypatch.setattr(self_training, "train_config", train)
    monkeypatch.setattr("spacy.training.pretrain.pretrain", pretrain)


def _write_input(path: Path, kind: str, sentences) -> Path:
    """A training or dev file of ``kind`` (valid or not) holding ``sentences``."""
    path = path.with_name(path.name + "." + kind.split(".")[-1])
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "spacy":
        DocBin(docs=[Doc(VOCAB, words=t, ents=_tags(len(t), s, "bio")) for t, s in sentences]).to_disk(path)
    elif kind == "tsv":
        path.write_text("".join("".join(f"{w}\t{g}\n" for w, g in zip(t, _tags(len(t), s, "bio"))) + "\n" for t, s in sentences), encoding="utf-8")
    elif kind == "empty.spacy":
        DocBin().to_disk(path)
    elif kind == "garbage.spacy":
        path.write_bytes(b"\x00\x01 not a DocBin")
    elif kind == "bad.tsv":
        path.write_text("Aspirin\tB-Chemical\ntreats\n")
    elif kind == "binary.tsv":
        path.write_bytes(b"Aspirin\tB-X\n\xff\xfe\x00\n")
    return path  # missing.spacy: not written


def _write_pool(path: Path, kind: str, sentences) -> Path:
    path = path.with_name(path.name + "." + kind.split(".")[-1])
    texts = [" ".join(t) for t, _ in sentences]
    if kind == "txt":
        path.write_text("".join(t + "\n" for t in texts), encoding="utf-8")
    elif kind == "jsonl":
        path.write_text("".join(json.dumps({"text": t}) + "\n" for t in texts), encoding="utf-8")
    elif kind == "spacy":
        DocBin(docs=[Doc(VOCAB, words=t) for t, _ in sentences]).to_disk(path)
    elif kind == "bad.jsonl":
        path.write_text('{"text": "fine"}\nnot json\n')
    elif kind == "binary.txt":
        path.write_bytes(b"\xff\xfe\x00text")
    else:
        path.write_text("\n\n")
    return path


def _hashes(root: Path):
    return {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in root.rglob("*") if p.is_file()}


@st.composite
def _output_folder(draw):
    """The output folder's prefilled entries, a record of some of them (or none), and which
    inputs live inside it."""
    prefill = draw(st.one_of(st.just([]), st.lists(st.sampled_from(PREFILL), unique=True, max_size=5)))
    record = draw(st.one_of(st.none(), st.tuples(st.sampled_from(["recipe", "self-train"]),
                                                 st.lists(st.sampled_from(RECORDABLE), unique=True, max_size=4))))
    inside = draw(st.sampled_from(["none", "data", "model-best", "top"]))
    return prefill, record, inside


def _prepare(tmp: Path, folder, sentences, data):
    """Write the output folder and the inputs; returns (out, inputs by role)."""
    prefill, record, inside = folder
    out = tmp / "out"
    for name in prefill:
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_bytes(f"the user's {name}".encode())
    if record is not None:
        out.mkdir(exist_ok=True)
        (out / MANIFEST).write_text(json.dumps({"command": record[0], "written": record[1]}))
    where = {"none": tmp / "in", "data": out / "data", "model-best": out / "model-best", "top": out}[inside]
    # valid files more often than not, so that many runs get past the checks
    kinds = st.one_of(st.sampled_from(INPUT_KINDS[:2]), st.sampled_from(INPUT_KINDS))
    inputs = {role: _write_input(where / role, data.draw(kinds, label=role), sentences) for role in ("train", "dev")}
    pool_kinds = st.one_of(st.sampled_from(POOL_KINDS[:3]), st.sampled_from(POOL_KINDS))
    inputs["raw"] = _write_pool(tmp / "raw", data.draw(pool_kinds, label="raw"), sentences)
    return out, inputs


def _check_nothing_lost(before, after, out, record, command, result):
    """No input changed or removed; no file of the user's in OUT changed or removed (only
    entries a previous run of the same command recorded may go); a failure is one line."""
    recorded = [out / n for n in (record[1] if record is not None and record[0] == command else [])]
    for path, digest in before.items():
        if path == out / MANIFEST or any(path == r or r in path.parents for r in recorded):
            continue
        assert after.get(path) == digest, f"{path} was changed or removed ({result.stderr})"
    if result.exit_code != 0:
        _one_error_line(result)


PROPERTY = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture])


@settings(max_examples=25, **PROPERTY)
@given(st.lists(_sentence(), min_size=2, max_size=4), _output_folder(), st.booleans(), st.sampled_from(["none", "raw", "pretrain"]), st.data())
def test_recipe_never_loses_a_file(stand_ins, sentences, folder, overwrite, mode, data):
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        out, inputs = _prepare(tmp, folder, sentences, data)
        args = ["recipe", "lowres_best", out, "--paths.train", inputs["train"], "--paths.dev", inputs["dev"],
                "--self_training.rounds", "1", "--self_training.threshold", "0.0"]
        args += ["--paths.raw_text", inputs["raw"]] if mode == "raw" else []
        args += [] if mode == "pretrain" else ["--pretraining.max_epochs", "0"]
        args += ["--overwrite"] if overwrite else []
        before = _hashes(tmp)
        result = _invoke(*args)
        _check_nothing_lost(before, _hashes(tmp), out, folder[1], "recipe", result)


@settings(max_examples=25, **PROPERTY)
@given(st.lists(_sentence(), min_size=2, max_size=4), _output_folder(), st.booleans(), st.sampled_from(["none", "outside", "inside"]), st.data())
def test_self_train_never_loses_a_file(stand_ins, tiny_model, full_configs, sentences, folder, overwrite, teacher, data):
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        out, inputs = _prepare(tmp, folder, sentences, data)
        args = ["self-train", full_configs["spacy_ner"], out, "--paths.train", inputs["train"], "--paths.dev", inputs["dev"],
                "--paths.raw_text", inputs["raw"], "--self_training.rounds", "1", "--self_training.threshold", "0.0"]
        if teacher != "none":
            model = (out if teacher == "inside" else tmp) / "teacher-model"
            if teacher == "inside" and data.draw(st.booleans(), label="teacher is OUT/model-best"):
                model = out / "model-best"
            shutil.rmtree(model, ignore_errors=True)
            shutil.copytree(tiny_model, model)
            args += ["--model", model]
        args += ["--overwrite"] if overwrite else []
        before = _hashes(tmp)
        result = _invoke(*args)
        _check_nothing_lost(before, _hashes(tmp), out, folder[1], "self-train", result)


@settings(max_examples=30, **PROPERTY)
@given(st.lists(_sentence(), min_size=1, max_size=5), st.sampled_from(INPUT_KINDS), st.sampled_from(["same", "same-spelled-apart", "existing", "new"]),
       st.sampled_from([".spacy", ".txt", ".jsonl"]), st.booleans())
def test_pool_never_loses_a_file(sentences, kind, target, suffix, overwrite):
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        src = _write_input(tmp / "corpus", kind, sentences)
        out = {"same": src, "same-spelled-apart": tmp / "." / src.name, "existing": tmp / f"mine{suffix}", "new": tmp / f"pool{suffix}"}[target]
        if target == "existing":
            out.write_text("the user's\n")
        before = _hashes(tmp)
        args = ["pool", src, out, "--size", "1"] + (["--overwrite"] if overwrite else [])
        result = _invoke(*args)
        after = _hashes(tmp)
        for path, digest in before.items():
            if path == out and target == "existing" and overwrite:
                continue  # asked for
            assert after.get(path) == digest, f"{path} was changed or removed ({result.stderr})"
        if result.exit_code != 0:
            _one_error_line(result)
        else:
            assert target in ("new", "existing") and (target == "new" or overwrite)



# issue 45 R1: --overwrite removed a previous run's file that a config key named as an input
# (only paths.train, paths.dev, paths.raw_text, CONFIG and --model were protected)
PREVIOUS_RUN = ["data/train.spacy", "data/dev.spacy", "pretrain/model-last.bin", "pretrain/model0.bin", "model-best/meta.json",
                "model-last/meta.json"]
NAMING_KEYS = ["paths.init_tok2vec", "paths.vectors", "paths.raw_text", "paths.train", "paths.dev", "paths.lexicon",
               "corpora.train.corpus.path", "corpora.dev.path", "corpora.pretrain.path", "initialize.vectors"]


@settings(max_examples=40, **PROPERTY)
@given(st.sampled_from(NAMING_KEYS), st.sampled_from(PREVIOUS_RUN + ["pretrain", "model-best", "data", MANIFEST, "notes.txt"]),
       st.booleans(), st.booleans())
def test_overwrite_refuses_or_keeps_a_file_that_any_config_key_names(stand_ins, key, named, pretrain, raw):
    """Whatever key of the config (one of the user's own, paths.lexicon, included) names a file
    or folder in the output folder, the run either refuses or leaves it as it was."""
    from spacy_auc_ner.methods import recipe_config

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        config = recipe_config("lowres_best")
        config["paths"]["lexicon"] = None  # a key of the user's own: no command knows it
        config.to_disk(tmp / "mine.cfg")
        out = tmp / "out"
        for name in PREVIOUS_RUN + ["notes.txt"]:
            (out / name).parent.mkdir(parents=True, exist_ok=True)
            (out / name).write_bytes(f"the previous run's {name}".encode())
        (out / MANIFEST).write_text(json.dumps({"command": "recipe", "written": ["data/train.spacy", "data/dev.spacy", "pretrain", "model-best", "model-last"]}))
        sentences = [(w, []) for w in (["a", "b"], ["c"])]
        train, dev = _write_input(tmp / "train", "tsv", sentences), _write_input(tmp / "dev", "spacy", sentences)
        args = ["recipe", tmp / "mine.cfg", out, "--paths.train", train, "--paths.dev", dev, "--pretraining.max_epochs", int(pretrain),
                "--self_training.rounds", "1", "--self_training.threshold", "0.0", "--overwrite"]
        args += ["--paths.raw_text", _write_pool(tmp / "raw", "txt", sentences)] if raw and key != "paths.raw_text" else []
        args += [f"--{key}", out / named] if key not in ("paths.train", "paths.dev") else []
        if key in ("paths.train", "paths.dev"):
            args[args.index(f"--{key}") + 1] = out / named
        target = out / named
        before = {p: d for p, d in _hashes(tmp).items() if p == target or target in p.parents}
        result = _invoke(*args)
        after = _hashes(tmp)
        assert {p: after.get(p) for p in before} == before, f"{target} was changed or removed, named by --{key} ({result.stderr})"
        if result.exit_code != 0:
            _one_error_line(result)
