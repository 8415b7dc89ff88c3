"""Every repository path and every command that README.md, projects/lab/README.md,
projects/lab/docs/*.md and docs/evidence/transformer.md name exists: a path in backticks or a
link resolves (from the document's folder, the repository root, projects/lab or the package),
a link to a heading finds it, and a `spacy-auc-ner ...`, `python -m auc_ner_lab ...` or
`lab.py ...` command names a subcommand the command line has."""
import re
from pathlib import Path

import pytest
import typer

ROOT = Path(__file__).resolve().parents[1]
REPO = ROOT.parents[1]
# and docs/evidence/transformer.md, which holds the full texts of README's sentences on the transformer
DOCS = [REPO / "README.md", ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md")) + [ROOT / "docs" / "evidence" / "transformer.md"]
# where a path in the docs may be relative to: the repository, the lab, the package
BASES = [REPO, ROOT, REPO / "spacy_auc_ner", REPO / "spacy_auc_ner" / "configs"]
# the first folder of a path that names something in the repository
TOP = {"spacy_auc_ner", "projects", "tests", "configs", "scripts", "studies", "docs", "benchmarks",
       "auc_ner_lab", "assets", "results", ".ci", "losses", "ml", "pipeline", "training", "data", "cli"}
SUFFIXES = (".py", ".md", ".yaml", ".yml", ".cfg", ".sh", ".toml")
# paths the documents name on purpose although the repository has no such file: what a command
# writes, a user's file, a placeholder, or a record of how an old figure was made
NOT_IN_REPOSITORY = {
    "configs/full/",  # written by the root project's workflow
    "data/train.spacy",  # guide.md: a user's file that --overwrite never removes
    "results/x/",  # studies.md: a placeholder in a cp example
    "configs/lowres_best.cfg",  # recipe.md: where the recipe was "then", since moved
}
WRITTEN = ("configs/full/",)  # folders that workflows write


def _text_without_generated(doc: Path) -> str:
    return re.sub(r"<!-- generated: [^ ]+ -->.*?<!-- /generated -->", "", doc.read_text(encoding="utf8"), flags=re.S)


def _candidates(text: str):
    spans = re.findall(r"`([^`\n]+)`", text) + re.findall(r"\]\(([^)\s#]+)(?:#[^)]*)?\)", text)
    for span in spans:
        for token in span.split():
            token = token.strip("(),;:'\"")
            if "://" in token or any(c in token for c in "<>*{}$=[]|…") or token.startswith("-"):
                continue
            first = token.lstrip("./").split("/")[0]
            if first in TOP and "/" in token or (token.endswith(SUFFIXES) and "/" in token):
                yield token


def _resolves(doc: Path, token: str) -> bool:
    if token in NOT_IN_REPOSITORY or token.startswith(WRITTEN):
        return True
    return any((base / token).exists() for base in [doc.parent] + BASES)


@pytest.mark.parametrize("doc", DOCS, ids=lambda d: str(d.relative_to(REPO)))
def test_every_path_a_document_names_exists(doc):
    missing = sorted({t for t in _candidates(_text_without_generated(doc)) if not _resolves(doc, t)})
    assert not missing, f"{doc.relative_to(REPO)} names paths that do not exist: {missing}"


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(doc: Path, text: str):
    """The (link, target file) of every link of `text` to a heading (`#anchor`, or a local
    .md file and its anchor) that names no heading of its target."""
    for target, anchor in re.findall(r"\]\(([^)\s#]*)#([^)\s]+)\)", text):
        if "://" in target:
            continue
        path = doc if not target else next((b / target for b in [doc.parent] + BASES if (b / target).is_file()), None)
        if path is None or path.suffix != ".md":
            continue
        headings = {_slug(h) for h in re.findall(r"^#+ (.+)$", path.read_text(encoding="utf8"), flags=re.M)}
        if anchor not in headings:
            yield f"{target}#{anchor}"


@pytest.mark.parametrize("doc", DOCS, ids=lambda d: str(d.relative_to(REPO)))
def test_every_link_to_a_heading_finds_it(doc):
    """README's short sentences link to the sections of the lab's evidence documents that hold
    the full texts: a renamed heading would leave the link pointing at the top of the page."""
    missing = sorted(set(_anchors(doc, _text_without_generated(doc))))
    assert not missing, f"{doc.relative_to(REPO)} links to headings that do not exist: {missing}"


def test_a_link_to_a_missing_heading_is_found(tmp_path):
    (tmp_path / "t.md").write_text("# Top\n\n## Without a dev set (n in all)\n")
    doc = tmp_path / "d.md"
    doc.write_text("## Here\n[a](t.md#without-a-dev-set-n-in-all) [b](t.md#without-a-dev-set) [c](#here) [d](#there)\n")
    assert sorted(_anchors(doc, doc.read_text())) == ["#there", "t.md#without-a-dev-set"]


def _commands():
    import inspect

    from auc_ner_lab.cli import app as lab_app
    from spacy_auc_ner.api import main as package_main

    package_app = inspect.signature(package_main).parameters["app"].default  # the app `spacy-auc-ner` runs

    def tree(app):
        group = typer.main.get_command(app)
        return {name: set(getattr(cmd, "commands", {}) or ()) for name, cmd in group.commands.items()}

    return tree(package_app), tree(lab_app)


COMMAND = re.compile(r"(spacy-auc-ner|python3? -m auc_ner_lab|python3? (?:projects/lab/)?lab\.py)[ \t]+([\w-]+)(?:[ \t]+([\w-]+))?")


@pytest.mark.parametrize("doc", DOCS, ids=lambda d: str(d.relative_to(REPO)))
def test_every_command_a_document_names_is_known(doc):
    package, lab = _commands()
    unknown = []
    text = doc.read_text(encoding="utf8")
    code = "\n".join(re.findall(r"```.*?```", text, flags=re.S) + re.findall(r"`([^`\n]+)`", text))
    for program, name, sub in COMMAND.findall(code):
        known = package if program == "spacy-auc-ner" else lab
        if name not in known:
            unknown.append(f"{program} {name}")
        elif known[name] and sub and sub not in known[name]:
            unknown.append(f"{program} {name} {sub}")
    assert not unknown, f"{doc.relative_to(REPO)} names unknown commands: {sorted(set(unknown))}"


def test_the_checks_can_fail(tmp_path):
    doc = tmp_path / "d.md"
    doc.write_text("Run `spacy-auc-ner collect` on `scripts/collect_rows.py` and `python lab.py study rename`.\n")
    assert [t for t in _candidates(doc.read_text()) if not _resolves(doc, t)] == ["scripts/collect_rows.py"]
    package, lab = _commands()
    found = COMMAND.findall(doc.read_text())
    assert [(p, n) for p, n, _ in found if n not in (package if p == "spacy-auc-ner" else lab)] == [("spacy-auc-ner", "collect")]
    assert ("python lab.py", "study", "rename") in found and "rename" not in lab["study"]
