"""Generated blocks of the documents: find them, refresh them, say where they drifted.

A generated block reads, on lines of its own,

    <!-- generated: evidence/verdicts.md -->
    ...the file's text...
    <!-- /generated -->

or, inside a sentence, `<!-- generated: evidence/readme/heads.md -->the text<!-- /generated -->`
(the file's text without its closing newline). The path is relative to the document's folder.
Between the markers stands the named file's text, or, where `texts` is given, the text the rows
give for that file now (`docs.fragments`): `refresh` writes it in, `drift`
names every block whose text differs. A marker naming a file that neither exists nor is
generated is an error (one line), and a document is written whole or not at all.
"""
import re
from pathlib import Path
from typing import Dict, List, Mapping, Optional

from . import committed

BLOCK = re.compile(r"(<!-- generated: (?P<path>[^ ]+) -->)(?P<newline>\n?)(?P<body>.*?)(<!-- /generated -->)", re.S)
Texts = Optional[Mapping[Path, str]]


def _source(root: Path, name: str, texts: Texts) -> Optional[str]:
    path = (root / name).resolve()
    if texts is not None and path in texts:
        return texts[path]
    return path.read_text(encoding="utf8") if path.exists() else None


def _expected(m: re.Match, text: str) -> str:
    """A block holds the text and one closing newline; an inline one the text stripped."""
    return text.rstrip("\n") + "\n" if m["newline"] else text.strip()


def _sources(doc: Path, root: Path, text: str, texts: Texts) -> Dict[str, str]:
    found = {m["path"]: _source(root, m["path"], texts) for m in BLOCK.finditer(text)}
    missing = [name for name, source in found.items() if source is None]
    if missing:
        raise SystemExit(f"Error: {doc}: generated block names missing file(s) {', '.join(missing)}; "
                         "run `python projects/lab/lab.py docs`")
    return found


def refresh(doc: Path, root: Path, texts: Texts = None) -> int:
    """Write every block of `doc` from its source (`texts` first, else the file); the number
    of blocks. The document is rewritten only when a block changed."""
    text = doc.read_text(encoding="utf8")
    sources = _sources(doc, root, text, texts)
    new_text, n = BLOCK.subn(lambda m: m.group(1) + m["newline"] + _expected(m, sources[m["path"]]) + m.group(5), text)
    if new_text != text:
        tmp = doc.with_name(doc.name + ".tmp")
        tmp.write_text(new_text, encoding="utf8")
        tmp.replace(doc)
    return n


def drift(doc: Path, root: Path, texts: Texts = None) -> List[str]:
    """One line per block of `doc` whose text is not its source's: "README.md:282: block
    evidence/readme/recipe.md differs from what the rows give"."""
    text = doc.read_text(encoding="utf8")
    sources = _sources(doc, root, text, texts)
    out = []
    for m in BLOCK.finditer(text):
        if m["body"] != _expected(m, sources[m["path"]]):
            line = text.count("\n", 0, m.start()) + 1
            out.append(f"{doc}:{line}: block {m['path']} differs from what the rows give")
    return out


def documents() -> List[Path]:
    """The documents whose generated blocks `docs.docs` refreshes and checks: the repository's
    README and docs/*.md, the lab's README and docs/*.md, docs/evidence/*.md."""
    repo = committed.ROOT.parents[1]
    docs = ([repo / "README.md", *sorted((repo / "docs").glob("*.md")), committed.ROOT / "README.md"]
            + sorted((committed.ROOT / "docs").glob("*.md"))
            + sorted(committed.evidence_dir().glob("*.md")))
    return [d for d in docs if d.exists()]
