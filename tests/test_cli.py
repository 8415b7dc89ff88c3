"""The command line: convert (config and the recipe commands have their own files); errors are
one line with a non-zero exit."""
import os
import subprocess
import sys
from pathlib import Path

import pytest
import spacy
import typer
from spacy.tokens import DocBin
from typer.testing import CliRunner

from spacy_auc_ner.cli.app import app
from spacy_auc_ner.data.columns import COLUMN_SUFFIXES, read_columns, read_docs

DATA = Path(os.environ.get("SPACY_AUC_NER_DATA", Path(__file__).parents[1] / ".." / "shared" / "data"))
runner = CliRunner()


def _run(*args):
    return runner.invoke(app, [str(a) for a in args])


def _error_line(result):
    assert result.exit_code != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


@pytest.fixture
def corpus(tmp_path):
    """A corpus folder. train: 4 sentences, 16 tokens: B 5, I 2, O 9; 3 sentences with an
    entity; PER 4 tokens (r = 2), LOC 2 (r = 3), ORG 1 (r = 4)."""
    folder = tmp_path / "toy"
    folder.mkdir()
    (folder / "train.tsv").write_text(
        "A\tB-PER\nB\tI-PER\nc\tO\nd\tO\n\n"
        "E\tB-LOC\nF\tI-LOC\nG\tB-PER\nh\tO\n\n"
        "i\tO\nj\tO\nk\tO\nl\tO\n\n"
        "M\tB-PER\nN\tO\nO\tB-ORG\np\tO\n\n"
    )
    (folder / "dev.tsv").write_text("A\tB-PER\nb\tO\n\n")
    return folder


def test_help():
    result = _run("--help")
    assert result.exit_code == 0
    for command in ("convert", "config", "pool", "self-train", "pretrain-config", "recipe"):
        assert command in result.stdout
    assert _run("stats", "x").exit_code == 2  # the lab's commands: python -m auc_ner_lab


def test_no_help_text_loses_a_bracketed_word_to_rich_markup():
    """Help texts are Rich markup: a bare [transformers] or [training] is a style tag, and
    --help shows nothing in its place; such a word must be written \\[training]."""
    from rich.markup import RE_TAGS

    group = typer.main.get_command(app)
    for name, command in {"": group, **group.commands}.items():
        for text in [command.help or "", *(getattr(param, "help", None) or "" for param in command.params)]:
            eaten = [m.group(0) for m in RE_TAGS.finditer(text) if len(m.group(2)) % 2 == 0]  # an odd count of \\ escapes it
            assert not eaten, f"spacy-auc-ner {name} --help loses {eaten}"
    assert "(the *_trf ones without [transformers]) are skipped" in " ".join(_run("config", "--help").stdout.split())


def test_pool_help_names_no_command_that_does_not_exist():
    """partition is the lab's command (python -m auc_ner_lab partition), not spacy-auc-ner's."""
    text = " ".join(_run("pool", "--help").stdout.replace("\u2502", " ").split())  # the box of the options
    assert "'partition --" not in text and "python -m auc_ner_lab partition --seed S" in text
    assert "the pool is the rest of the corpus" in text


def test_python_m_entry():
    out = subprocess.run([sys.executable, "-m", "spacy_auc_ner", "--help"], capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert out.returncode == 0 and "recipe" in out.stdout


# -- convert ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text,options",
    [
        ("Peter\tB-PER\nBlackburn\tI-PER\nin\tO\nBonn\tB-LOC\n\n", []),
        ("-DOCSTART- -X- -X- O\n\nPeter NNP B-NP B-PER\nBlackburn NNP I-NP I-PER\nin IN B-PP O\nBonn NNP B-NP B-LOC\n\n", []),
        ("Peter I-PER\nBlackburn I-PER\nin O\nBonn I-LOC\n\n", ["--scheme", "iob1"]),
        ("Peter\tB-PER\nBlackburn\tE-PER\nin\tO\nBonn\tS-LOC\n\n", []),
        ("Peter\tB-PER\nBlackburn\tL-PER\nin\tO\nBonn\tU-LOC\n\n", ["--scheme", "bilou"]),
        ("Peter\tB\nBlackburn\tI\nin\tO\nBonn\tB\n\n", ["--untyped-type", "PER"]),
    ],
)
def test_convert_each_format(tmp_path, text, options):
    src = tmp_path / "in.txt"
    src.write_text(text)
    result = _run("convert", src, tmp_path / "out.spacy", *options)
    assert result.exit_code == 0, result.stderr
    (doc,) = read_docs(tmp_path / "out.spacy", spacy.blank("en").vocab)
    expected = [("Peter Blackburn", "PER"), ("Bonn", "PER" if "--untyped-type" in options else "LOC")]
    assert [(e.text, e.label_) for e in doc.ents] == expected
    assert _run("convert", src, tmp_path / "out.tsv", *options).exit_code == 0
    assert read_columns(tmp_path / "out.tsv")[0].labels[:2] == ("B-PER", "I-PER")


def test_convert_into_a_folder(tmp_path, corpus):
    assert _run("convert", corpus / "train.tsv", tmp_path).exit_code == 0
    assert len(read_docs(tmp_path / "train.spacy", spacy.blank("en").vocab)) == 4


@pytest.mark.parametrize(
    "text,options,message",
    [
        ("a\tB-PER\nb\tZ-PER\n\n", [], r"in.tsv:2: label 'Z-PER' fits no known scheme"),
        ("a\tB-ORG\nb\tI-PER\n\n", [], r"in.tsv:2: I-PER follows B-ORG"),
        ("\n\n", [], r"in.tsv: no sentences found"),
        ("a\tO\n\n", ["--scheme", "iob3"], r"unknown label scheme 'iob3'"),
        ("a\tB-X\nb c d\n\n", [], r"in.tsv:2: found 3 columns, but line 1 has 2"),
    ],
)
def test_convert_errors_write_nothing(tmp_path, text, options, message):
    src = tmp_path / "in.tsv"
    src.write_text(text)
    line = _error_line(_run("convert", src, tmp_path / "out.spacy", *options))
    assert line.startswith("Error: ") and message in line
    assert not (tmp_path / "out.spacy").exists()


def test_an_output_path_ending_in_a_slash_is_a_folder(tmp_path, monkeypatch):
    """pathlib drops the trailing slash: `convert train.tsv new/` wrote a column file named new."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.tsv").write_text("Aspirin\tB-Chemical\nworks\tO\n\n")
    out = CliRunner().invoke(app, ["convert", "train.tsv", "new/"])
    assert out.exit_code == 0, out.output
    assert (tmp_path / "new").is_dir() and len(DocBin().from_disk(tmp_path / "new" / "train.spacy")) == 1
    out = CliRunner().invoke(app, ["config", "ova_auc", "--output", "cfgs/"])
    assert out.exit_code == 0, out.output
    assert (tmp_path / "cfgs" / "ova_auc.cfg").is_file() and out.stderr.strip() == "Wrote cfgs/ova_auc.cfg"
    (tmp_path / "a_file.txt").write_text("mine\n")
    out = CliRunner().invoke(app, ["config", "--all", "--output", "a_file.txt"])
    assert out.exit_code == 1 and out.stderr.strip() == "Error: --output a_file.txt is a file: --all writes one file per method and encoder and per recipe into a folder"
    assert (tmp_path / "a_file.txt").read_text() == "mine\n"


def test_convert_a_spacy_file_to_columns_and_back(tmp_path):
    """A .spacy input is written as columns (it stopped on 'not UTF-8 text' at byte 1); its
    entities come back the same through a second conversion."""
    src = tmp_path / "in.tsv"
    src.write_text("Peter\tB-PER\nBlackburn\tI-PER\nin\tO\nBonn\tB-LOC\n\nno\tO\nentity\tO\n\n")
    assert _run("convert", src, tmp_path / "a.spacy").exit_code == 0
    result = _run("convert", tmp_path / "a.spacy", tmp_path / "back.tsv")
    assert result.exit_code == 0, result.stderr
    assert (tmp_path / "back.tsv").read_text() == src.read_text()
    line = _error_line(_run("convert", tmp_path / "a.spacy", tmp_path / "c.tsv", "--scheme", "iob1", "--label-column", "3"))
    assert line == f"Error: --scheme, --label-column: for column files only; {tmp_path / 'a.spacy'} is a .spacy file, whose entities are spans"
    assert not (tmp_path / "c.tsv").exists()


def test_a_spacy_file_is_written_as_columns_only_as_it_reads_back(tmp_path):
    """A Doc's tokens may be anything: spaCy's whitespace tokens ('  ', '\\t', '\\n\\n') were
    written as lines that broke the file ('\\t\\tO' read back as 'empty token or label'), a
    Doc without tokens as a sentence that was not there, and an empty Doc stopped a .spacy
    copy with an IndexError traceback."""
    from spacy.tokens import Doc

    nlp = spacy.blank("en")
    doc = nlp("John  lives in\tNew York .\n\nOk")
    doc.ents = [doc.char_span(0, 4, "PER"), doc.char_span(15, 23, "LOC")]
    DocBin(docs=[doc, Doc(nlp.vocab, words=[])]).to_disk(tmp_path / "ws.spacy")
    result = _run("convert", tmp_path / "ws.spacy", tmp_path / "ws.tsv")
    assert result.exit_code == 0 and "Wrote 1 sentence to" in result.stderr, result.output
    # the whitespace tokens (all outside the entities) left out; what is written reads back
    assert (tmp_path / "ws.tsv").read_text() == "John\tB-PER\nlives\tO\nin\tO\nNew\tB-LOC\nYork\tI-LOC\n.\tO\nOk\tO\n\n"
    assert [s.tokens for s in read_columns(tmp_path / "ws.tsv")] == [("John", "lives", "in", "New", "York", ".", "Ok")]
    result = _run("convert", tmp_path / "ws.spacy", tmp_path / "copy.spacy")
    copied = read_docs(tmp_path / "copy.spacy", nlp.vocab)
    assert result.exit_code == 0 and [d.text for d in copied] == [doc.text, ""], result.output  # the spacing kept
    assert [(e.text, e.label_) for e in copied[0].ents] == [("John", "PER"), ("New York", "LOC")]
    # a token that no column line holds: refused, naming it, nothing written
    bad = [Doc(nlp.vocab, words=["a\tb", "c"], ents=["O", "B-X"]), Doc(nlp.vocab, words=["A", " ", "B"], ents=["B-X", "I-X", "I-X"]),
           Doc(nlp.vocab, words=["-DOCSTART-", "x"]), Doc(nlp.vocab, words=[])]
    for i, (d, why) in enumerate(zip(bad, ["token 1 'a\\tb' of sentence 1 as a column line: the token holds a tab or a line break",
                                           "token 2 ' ' of sentence 1 as a column line: a whitespace token inside an entity",
                                           "token 1 '-DOCSTART-' of sentence 1 as a column line: reading drops a -DOCSTART- line",
                                           "no sentence has a token to write"])):
        DocBin(docs=[d]).to_disk(tmp_path / f"bad{i}.spacy")
        line = _error_line(_run("convert", tmp_path / f"bad{i}.spacy", tmp_path / f"bad{i}.tsv"))
        assert line.startswith(f"Error: {tmp_path / f'bad{i}.tsv'}: ") and why in line, line
        assert not (tmp_path / f"bad{i}.tsv").exists()


def test_a_missing_entity_annotation_is_written_o(tmp_path):
    from spacy.tokens import Doc

    from spacy_auc_ner.data.columns import docs_to_sentences

    vocab = spacy.blank("en").vocab
    doc = Doc(vocab, words=["a", "b", "c"], ents=["B-X", None, "O"])  # None: annotation missing
    (sentence,) = docs_to_sentences([doc])
    assert sentence.tokens == ("a", "b", "c") and sentence.labels == ("B-X", "O", "O") and sentence.line == 1


@pytest.mark.parametrize("name,said", [
    ("out.json", "not as .json (did you mean .jsonl?)"), ("out.JSONL", "not as .JSONL (did you mean .jsonl?)"),
    ("out.SPACY", "not as .SPACY (did you mean .spacy?)"), ("out.spcy", "not as .spcy (did you mean .spacy?)"),
    ("out", "not as a name without a suffix ({out}/ is a folder)"),
])
def test_convert_refuses_an_output_named_for_another_format(tmp_path, name, said):
    """`convert train.tsv out.json` (or out.spcy, a typo) wrote column text under that name."""
    src = tmp_path / "in.tsv"
    src.write_text("a\tB-X\n\n")
    line = _error_line(_run("convert", src, tmp_path / name))
    said = said.format(out=tmp_path / name)
    assert line == f"Error: {tmp_path / name}: sentences are written as .spacy, .jsonl or as a token<TAB>BIO column file ({', '.join(COLUMN_SUFFIXES)}), {said}"
    assert not (tmp_path / name).exists()
    for fine in (".tsv", ".iob2", ".spacy", ".jsonl"):
        assert _run("convert", src, tmp_path / f"ok{fine}").exit_code == 0


def test_a_closed_pipe_ends_a_command_quietly(tmp_path):
    """`spacy-auc-ner config --list | head -1` ended with 'Error: [Errno 32] Broken pipe'; here
    the reader is gone before the first line."""
    script = (
        "import subprocess, sys\n"
        "p = subprocess.Popen([sys.executable, '-m', 'spacy_auc_ner', 'config', '--list'], stdout=subprocess.PIPE, stderr=subprocess.PIPE)\n"
        "p.stdout.close()\n"  # before the command writes (it takes a second to start): no race
        "sys.stdout.write(p.stderr.read().decode()); p.wait()\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert out.returncode == 0 and "Error" not in out.stdout and "Traceback" not in out.stdout, out.stdout


def test_the_command_list_prints_each_summary_unbroken(capsys):
    """typer's command list printed a docstring's first paragraph with its own line breaks, so
    a summary broke off mid-line ('... normalising labels to BIO, or a' / '.spacy file ...')."""
    from spacy_auc_ner.cli import main

    assert main(["--help"]) == 0
    capsys.readouterr()
    group = typer.main.get_command(app)
    summaries = {name: command.short_help for name, command in group.commands.items()}
    assert set(summaries) >= {"convert", "config", "recipe", "suggest"}
    for name, summary in summaries.items():
        assert summary and "\n" not in summary and "  " not in summary, (name, summary)
    assert summaries["convert"] == "Convert annotated sentences between formats, entities as BIO."


def test_every_commands_help_is_short_with_an_example():
    """Issue 63: recipe --help was 1,600 characters before its options; each says what it does,
    its inputs and one example in about 600, and links to docs/ for the rest."""
    group = typer.main.get_command(app)
    for name, command in group.commands.items():
        text = command.help or ""
        assert len(text) <= 640, (name, len(text))
        assert f"Example: spacy-auc-ner {name} " in text, name
